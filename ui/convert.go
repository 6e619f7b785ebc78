package ui

import (
	"context"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault"
	"github.com/vaultui/vaultui/vault/convert"
)

// convertKey opens the convert screen from info.
var convertKey = key.NewBinding(key.WithKeys("C"), key.WithHelp("C", "convert cipher"))

// convertChoice is one line of the convert screen's list: a content cipher of the vault's
// format, or a format to move the vault into (with that format's default cipher).
type convertChoice struct {
	label, format string
	to            crypto.CipherID
}

// convertScreen changes a vault's content cipher through the core (app.PlanConvert, then
// app.Convert): pick the cipher, read the plan (space, where the old vault goes, who can
// open the result, the sync warning), confirm, then watch the progress. The password is
// the keyring's when it works, else asked.
type convertScreen struct {
	c       *common
	v       Vault
	choices []convertChoice // the ciphers the vault does not use, then the formats
	cursor  int
	step    convertStep
	plan    app.ConvertPlan
	form    passwordPrompt
	prog    convert.Progress
	result  *convert.Result
	err     string
	cancel  context.CancelFunc
}

type convertStep int

const (
	convertPick convertStep = iota
	convertPlanning
	convertConfirm
	convertPassword
	convertRunning
	convertDone
)

type (
	convertPlanned struct {
		plan app.ConvertPlan
		err  error
	}
	convertProgressMsg convert.Progress
	convertFinished    struct {
		res *convert.Result
		err error
	}
)

func newConvertScreen(c *common, v Vault) *convertScreen {
	s := &convertScreen{c: c, v: v, form: newPasswordPrompt(c)}
	for _, ci := range c.backend.Ciphers() {
		if ci.String() != v.Cipher {
			s.choices = append(s.choices, convertChoice{label: ci.String(), to: ci})
		}
	}
	for _, f := range vault.Formats() {
		if f.Can.Mount {
			s.choices = append(s.choices, convertChoice{label: "into a " + f.Name + " vault (" + f.Summary + ", a new master key)", format: f.ID})
		}
	}
	return s
}

func (s *convertScreen) title() string { return "convert · " + s.v.Name }
func (s *convertScreen) typing() bool  { return s.step == convertPassword }
func (s *convertScreen) busy() bool    { return s.step == convertPlanning || s.step == convertRunning }
func (s *convertScreen) Init() tea.Cmd { return nil }

func (s *convertScreen) keys() []key.Binding {
	k := s.c.keys
	switch s.step {
	case convertPick:
		return []key.Binding{k.Up, k.Down, key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "plan")), k.Back}
	case convertConfirm:
		return []key.Binding{key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "convert now")), k.Back}
	case convertPassword:
		return s.form.keys("convert")
	case convertRunning:
		return []key.Binding{key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel"))}
	}
	return []key.Binding{k.Back}
}

func (s *convertScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case convertPlanned:
		if msg.err != nil {
			s.step, s.err = convertPick, msg.err.Error()
			return nil
		}
		s.plan, s.step = msg.plan, convertConfirm
		if msg.plan.Done {
			s.step, s.result = convertDone, msg.plan.Finished
		}
		return nil
	case convertProgressMsg:
		s.prog = convert.Progress(msg)
		return nil
	case convertFinished:
		if cmd, ask := s.form.retry(msg.err, &s.err); ask {
			s.step = convertPassword
			return cmd
		}
		s.step, s.result = convertDone, msg.res
		if msg.err != nil {
			s.err = msg.err.Error()
		}
		return nil
	case tea.KeyMsg:
		k := s.c.keys
		if key.Matches(msg, k.Back) {
			if s.step == convertRunning && s.cancel != nil {
				// The old vault stays as it was: an interrupted conversion is undone or
				// finished by the next run.
				s.cancel()
			}
			status := ""
			if s.result != nil && s.err == "" {
				status = fmt.Sprintf("Converted %s to %s.", s.v.Name, s.result.To)
			}
			return s.c.back(status, s.result != nil)
		}
		switch s.step {
		case convertPick:
			switch {
			case key.Matches(msg, k.Up):
				s.cursor = max(0, s.cursor-1)
			case key.Matches(msg, k.Down):
				s.cursor = min(len(s.choices)-1, s.cursor+1)
			case key.Matches(msg, k.Submit) && len(s.choices) > 0:
				s.step, s.err = convertPlanning, ""
				b, ctx, dir, ch := s.c.backend, s.c.ctx, s.v.CipherDir, s.choices[s.cursor]
				return func() tea.Msg {
					p, err := b.PlanConvert(ctx, dir, ch.to, ch.format)
					return convertPlanned{plan: p, err: err}
				}
			}
			return nil
		case convertConfirm:
			if key.Matches(msg, k.Yes) {
				return s.run(nil)
			}
			return nil
		case convertPassword:
			if key.Matches(msg, k.Submit) {
				return s.form.submit(&s.err, s.run)
			}
		}
	}
	if s.step == convertPassword {
		return s.form.Update(msg)
	}
	return nil
}

// run converts with pw, or without a password (nil) with the keyring's.
func (s *convertScreen) run(pw []byte) tea.Cmd {
	s.step, s.err, s.prog = convertRunning, "", convert.Progress{}
	b, dir, ch := s.c.backend, s.v.CipherDir, s.choices[s.cursor]
	ctx, cancel := context.WithCancel(s.c.ctx)
	s.cancel = cancel
	return stream(ctx, func(emit func(tea.Msg)) tea.Msg {
		defer crypto.Wipe(pw)
		res, err := b.Convert(ctx, dir, ch.to, ch.format, pw, func(p convert.Progress) { emit(convertProgressMsg(p)) })
		return convertFinished{res: res, err: err}
	})
}

func (s *convertScreen) View() string {
	st := s.c.styles
	w := s.c.contentWidth()
	var b strings.Builder
	switch s.step {
	case convertPick:
		b.WriteString(s.c.para("Re-encrypt "+s.v.Name+"'s file contents ("+s.v.Cipher+" now) with another cipher: names, the password and the master key stay. Or move it into another format: a new vault with a new master key and the same password.") + "\n\n")
		for i, c := range s.choices {
			marker := "  "
			if i == s.cursor {
				marker = st.Key.Render("› ")
			}
			b.WriteString(marker + c.label + "\n")
		}
	case convertPlanning:
		b.WriteString(s.c.spinner.View() + " Measuring the vault and the free space…")
	case convertConfirm:
		p := s.plan
		if p.Finished != nil {
			b.WriteString(s.c.para(fmt.Sprintf("An interrupted conversion to %s was finished first.", p.Finished.To)) + "\n\n")
		}
		b.WriteString(s.c.para(fmt.Sprintf("Convert %s. The result %s.", p.Summary(), p.OpensNote())) + "\n\n")
		if len(p.Cannot) > 0 {
			b.WriteString(st.Warning.Render(s.c.para("A "+p.To.Format.Name+" vault keeps no "+strings.Join(p.Cannot, ", ")+": entries that need them are listed and nothing is written (vaultui convert --drop-unsupported carries the vault without them).")) + "\n\n")
		}
		b.WriteString(s.c.para(fmt.Sprintf("Re-encrypts %s in %s. Needs %s beside the vault (%s free).",
			size(float64(p.PlainBytes)), plural(p.Files, "file", "files"), size(float64(p.NeedBytes)), size(float64(p.FreeBytes)))) + "\n\n")
		b.WriteString(s.c.para("After a full check the new vault is swapped in; the old one is kept at "+app.Tilde(p.KeepOld)+" until you delete it.") + "\n\n")
		if p.Interrupted == convert.InterruptedBuilding {
			b.WriteString(s.c.para("A half-built vault an interrupted run left is removed first.") + "\n\n")
		}
		b.WriteString(st.Warning.Render(s.c.para("In a synced folder the sync tool uploads the whole vault again, and the old copy while it stays there.")) + "\n\n")
		b.WriteString("Press " + st.Key.Render("y") + " to convert now.")
	case convertPassword:
		b.WriteString(s.c.para("The vault's password re-encrypts it.") + "\n\n")
		b.WriteString(s.form.View())
	case convertRunning:
		pct := 0.0
		if s.prog.Total > 0 {
			pct = float64(s.prog.Done) / float64(s.prog.Total)
		}
		phase := s.prog.Phase
		if phase == "" {
			phase = "unlocking (scrypt)"
		}
		b.WriteString(st.Bar.Render(progressBar(pct, w-6)) + fmt.Sprintf(" %3.0f%%\n", pct*100))
		b.WriteString(s.c.spinner.View() + " " + truncate(fmt.Sprintf("%s: %s of %s", phase, size(float64(s.prog.Done)), size(float64(s.prog.Total))), w-2))
	case convertDone:
		if r := s.result; r != nil {
			b.WriteString(st.Success.Render(fmt.Sprintf("Converted %s to %s.", s.v.Name, r.To)) + "\n\n")
			if r.MasterKey != nil {
				b.WriteString(s.c.para("The new vault has a new master key. Store it safely: it opens the vault if the password is lost.") + "\n")
				b.WriteString(st.Box.Render(strings.Join(vault.FormatMasterKey(r.MasterKey), "\n")) + "\n\n")
			}
			if r.OldDir != "" {
				b.WriteString(s.c.para("The old vault ("+r.From.String()+") is kept at "+app.Tilde(r.OldDir)+"; delete it when you no longer need it.") + "\n")
			}
		}
	}
	if s.err != "" {
		b.WriteString("\n\n" + st.Error.Render(wrap(s.err, w)))
	}
	return b.String()
}
