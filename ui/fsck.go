package ui

import (
	"context"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault"
)

// fsckScreen unlocks a vault and checks every file, with a progress bar and
// then the list of problems found.
type fsckScreen struct {
	c        *common
	v        Vault
	form     passwordPrompt
	running  bool
	done     bool
	prog     vault.FsckProgress
	started  bool // a progress report arrived: the vault is unlocked
	problems []app.Finding
	err      string
	offset   int // scroll position in the problem list
	cancel   context.CancelFunc
	job      int
}

// Messages of a check carry their job number: a cancelled check's last
// messages must not land in the next one.
type fsckProgressMsg struct {
	job int
	p   vault.FsckProgress
}

type fsckDone struct {
	job      int
	problems []app.Finding
	err      error
}

func newFsckScreen(c *common, v Vault) *fsckScreen {
	return &fsckScreen{c: c, v: v, form: newPasswordPrompt(c)}
}

func (s *fsckScreen) title() string { return "fsck · " + s.v.Name }
func (s *fsckScreen) typing() bool  { return !s.running && !s.done && s.form.typing() }
func (s *fsckScreen) busy() bool    { return s.running }
func (s *fsckScreen) Init() tea.Cmd { return tea.Batch(s.form.setFocus(0), s.run(nil)) }

func (s *fsckScreen) keys() []key.Binding {
	k := s.c.keys
	switch {
	case s.done:
		return []key.Binding{k.Up, k.Down, k.Rerun, k.Back}
	case s.running:
		return []key.Binding{key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel"))}
	}
	return s.form.keys("check")
}

func (s *fsckScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case fsckProgressMsg:
		if msg.job == s.job {
			s.prog, s.started = msg.p, true
		}
		return nil
	case fsckDone:
		if msg.job != s.job {
			return nil
		}
		s.running = false
		if cmd, ask := s.form.retry(msg.err, &s.err); ask {
			return cmd // the keyring's password was tried first; now the prompt
		}
		s.done = true
		s.problems = msg.problems
		if msg.err != nil {
			s.err = msg.err.Error()
		}
		return nil
	case tea.KeyMsg:
		k := s.c.keys
		switch {
		case key.Matches(msg, k.Back):
			// Leaving cancels a running check through the job's context.
			if s.cancel != nil {
				s.cancel()
			}
			return s.c.back("", false)
		case s.running:
			return nil
		case s.done && key.Matches(msg, k.Up):
			s.offset = max(0, s.offset-1)
			return nil
		case s.done && key.Matches(msg, k.Down):
			s.offset = max(0, min(s.offset+1, len(s.problems)-1))
			return nil
		case s.done && key.Matches(msg, k.Rerun):
			// As f: the keyring's password first, the prompt only when it does not work.
			s.done, s.problems, s.err, s.offset = false, nil, "", 0
			return tea.Batch(s.form.setFocus(0), s.run(nil))
		case !s.done && key.Matches(msg, k.Submit):
			return s.form.submit(&s.err, s.run)
		}
	}
	if !s.done && !s.running {
		return s.form.Update(msg)
	}
	return nil
}

// run checks the vault with pw, or without a password (nil) with the keyring's.
func (s *fsckScreen) run(pw []byte) tea.Cmd {
	s.err, s.running, s.prog, s.started = "", true, vault.FsckProgress{}, false
	b, dir := s.c.backend, s.v.CipherDir
	s.c.jobs++
	s.job = s.c.jobs
	job := s.job
	ctx, cancel := context.WithCancel(s.c.ctx)
	s.cancel = cancel
	return stream(ctx, func(emit func(tea.Msg)) tea.Msg {
		defer crypto.Wipe(pw)
		problems, err := b.Fsck(ctx, dir, pw, func(p vault.FsckProgress) { emit(fsckProgressMsg{job: job, p: p}) })
		return fsckDone{job: job, problems: problems, err: err}
	})
}

func (s *fsckScreen) intro(w int) string {
	return wrap("Decrypts every file and name in "+app.Tilde(s.v.CipherDir)+" and reports what fails.", w)
}

func (s *fsckScreen) View() string {
	st := s.c.styles
	w := s.c.contentWidth()
	var b strings.Builder
	b.WriteString(s.intro(w) + "\n\n")
	switch {
	case s.running:
		b.WriteString(s.progress(w))
	case s.done:
		b.WriteString(s.results(w))
	default:
		b.WriteString(s.form.View())
	}
	if s.err != "" {
		b.WriteString("\n\n" + st.Error.Render(wrap(s.err, w)))
	}
	return b.String()
}

// progress is what a running check shows, from its first moment: unlocking,
// counting, then a bar by bytes of content with the entries beside.
func (s *fsckScreen) progress(w int) string {
	st, p := s.c.styles, s.prog
	switch {
	case !s.started:
		return s.c.spinner.View() + " Unlocking the vault (scrypt)…"
	case p.Counting:
		return s.c.spinner.View() + " Counting what to check: " + plural(p.Total, "entry", "entries") + ", " + size(float64(p.TotalBytes)) + " so far…"
	}
	pct := p.Fraction()
	var b strings.Builder
	b.WriteString(st.Bar.Render(progressBar(pct, w-6)) + fmt.Sprintf(" %3.0f%%\n", pct*100))
	b.WriteString(truncate(fmt.Sprintf("%s of %s · %d of %s", size(float64(p.Bytes)), size(float64(p.TotalBytes)), p.Done, plural(p.Total, "entry", "entries")), w) + "\n")
	b.WriteString(s.c.spinner.View() + " " + st.Subtle.Render(truncatePath(p.Path, w-2)))
	return b.String()
}

func (s *fsckScreen) results(w int) string {
	st := s.c.styles
	if len(s.problems) == 0 {
		if s.err != "" {
			return st.Error.Render("The check did not finish.")
		}
		return st.Success.Render("No problems found in " + plural(s.prog.Total, "file or directory", "files and directories") + ".")
	}
	var b strings.Builder
	damage := 0
	for _, p := range s.problems {
		if p.Damage {
			damage++
		}
	}
	switch {
	case damage == 0:
		notes := plural(len(s.problems), "note", "notes")
		b.WriteString(st.Success.Render(fmt.Sprintf("No damage found; %s (conflict copies, foreign files):", notes)) + "\n\n")
	default:
		b.WriteString(st.Error.Render(fmt.Sprintf("%s found:", plural(damage, "problem", "problems"))) + "\n\n")
	}
	// Each problem: its kind and path, then what is wrong wrapped under the
	// path. Show what fits above the help bar, from the scroll offset.
	blocks := make([]string, len(s.problems))
	for i, p := range s.problems {
		detail := lipgloss.NewStyle().PaddingLeft(11).Render(st.Subtle.Render(wrap(p.What, w-11)))
		blocks[i] = st.Warning.Render(padRight(p.Kind, 10)) + " " + truncatePath(p.Where, w-11) + "\n" + detail
	}
	// The intro above (its lines and a blank one), the heading and a blank
	// line, one above the help bar.
	h := s.c.bodyHeight() - lipgloss.Height(s.intro(w)) - 1 - 2 - 1
	shown, _ := windowed(st, blocks, s.offset, s.offset, max(3, h), 0)
	return b.String() + shown
}
