package ui

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault"
)

type wizardStep int

const (
	stepDir wizardStep = iota
	stepName
	stepMountPoint
	stepCipher
	stepPassword
	stepAdvanced
	stepCreating
	stepMasterKey
)

// inputSteps is how many steps ask for something (for "step 2 of 6").
const inputSteps = int(stepAdvanced) + 1

var stepTitles = map[wizardStep]string{
	stepDir:        "Folder",
	stepName:       "Name",
	stepMountPoint: "Mount point",
	stepCipher:     "Cipher",
	stepPassword:   "Password",
	stepAdvanced:   "Advanced options",
	stepCreating:   "Creating",
	stepMasterKey:  "Master key",
}

// Defaults for new vaults, as gocryptfs uses them.
const (
	defaultScryptLogN  = 16
	minScryptLogN      = 10
	maxScryptLogN      = 28
	defaultLongNameMax = 255
	minLongNameMax     = 62
)

// wizardScreen creates a vault step by step. Nothing is written before the
// last step validates; the master key is shown once and must be
// acknowledged before the wizard closes.
type wizardScreen struct {
	c    *common
	step wizardStep
	err  string

	dir, name, mountPoint, password, advanced *form

	ciphers      []Cipher
	cipherCursor int
	cipherPicked bool // the user moved the cursor: keep their choice

	checking  bool // cipherdir validation in flight
	masterKey []byte
	created   CreateRequest
}

type dirChecked struct {
	dir string
	err error
}

type vaultCreated struct {
	key []byte
	err error
}

func newWizard(c *common) *wizardScreen {
	w := &wizardScreen{c: c, ciphers: c.backend.Ciphers()}
	w.dir = newForm(c, suggestField("Folder", "~/Private.crypt"))
	w.name = newForm(c, suggestField("Name", "private"))
	w.mountPoint = newForm(c, suggestField("Mount point", "~/Private"))
	w.password = newForm(c, passwordField("Password"), passwordField("Confirm"))
	w.advanced = newForm(c,
		textField("scrypt cost (log2 N)", strconv.Itoa(defaultScryptLogN), ""),
		toggleField("Plaintext names", false),
		toggleField("Deterministic names", false),
		textField("Long-name limit", strconv.Itoa(defaultLongNameMax), ""),
	)
	w.preselect()
	return w
}

func (w *wizardScreen) title() string {
	if w.step < stepCreating {
		return fmt.Sprintf("new vault · step %d of %d · %s", int(w.step)+1, inputSteps, stepTitles[w.step])
	}
	return "new vault · " + stepTitles[w.step]
}

func (w *wizardScreen) busy() bool {
	return w.step == stepCreating || w.checking || (w.step == stepCipher && w.c.speed.running)
}

func (w *wizardScreen) typing() bool {
	if f := w.form(); f != nil {
		return f.typing()
	}
	return false
}

func (w *wizardScreen) form() *form {
	switch w.step {
	case stepDir:
		return w.dir
	case stepName:
		return w.name
	case stepMountPoint:
		return w.mountPoint
	case stepPassword:
		return w.password
	case stepAdvanced:
		return w.advanced
	}
	return nil
}

func (w *wizardScreen) keys() []key.Binding {
	k := w.c.keys
	next := key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "next"))
	switch w.step {
	case stepCipher:
		return []key.Binding{next, k.Up, k.Down, k.Back}
	case stepPassword:
		return []key.Binding{next, k.NextField, k.Back, k.PrevField}
	case stepAdvanced:
		create := key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "create"))
		return []key.Binding{create, k.NextField, k.Toggle, k.Back, k.PrevField}
	case stepCreating:
		return nil
	case stepMasterKey:
		return []key.Binding{key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "I have stored it"))}
	}
	return []key.Binding{next, k.Back}
}

func (w *wizardScreen) Init() tea.Cmd {
	cmds := []tea.Cmd{w.dir.setFocus(0)}
	if w.c.speed.rec == nil && !w.c.speed.running {
		// Measure while the user types, so the cipher step can show speeds.
		cmds = append(cmds, func() tea.Msg { return runSpeedMsg{} })
	}
	return tea.Batch(cmds...)
}

// preselect puts the cursor on the recommended cipher until the user picks.
func (w *wizardScreen) preselect() {
	if w.cipherPicked || w.c.speed.rec == nil {
		return
	}
	for i, c := range w.ciphers {
		if c.ID == string(w.c.speed.rec.Cipher) {
			w.cipherCursor = i
		}
	}
}

func (w *wizardScreen) Update(msg tea.Msg) tea.Cmd {
	w.preselect()
	switch msg := msg.(type) {
	case dirChecked:
		w.checking = false
		if msg.err != nil {
			w.err = msg.err.Error()
			return nil
		}
		w.dir.fields[0].input.SetValue(msg.dir)
		w.dir.fields[0].input.CursorEnd() // the expanded path may be longer
		if w.name.value(0) == "" {
			w.name.fields[0].input.SetValue(defaultName(msg.dir))
		}
		return w.goTo(stepName)
	case vaultCreated:
		if msg.err != nil {
			w.err = "Could not create the vault: " + msg.err.Error()
			w.step = stepAdvanced
			return nil
		}
		w.masterKey = msg.key
		w.step = stepMasterKey
		return nil
	case tea.KeyMsg:
		return w.handleKey(msg)
	}
	if f := w.form(); f != nil {
		return f.Update(msg)
	}
	return nil
}

func (w *wizardScreen) goTo(s wizardStep) tea.Cmd {
	w.step, w.err = s, ""
	if f := w.form(); f != nil {
		return f.setFocus(0)
	}
	return nil
}

func (w *wizardScreen) handleKey(msg tea.KeyMsg) tea.Cmd {
	k := w.c.keys
	switch w.step {
	case stepCreating:
		return nil
	case stepMasterKey:
		if key.Matches(msg, k.Yes) {
			crypto.Wipe(w.masterKey)
			w.masterKey = nil
			return w.c.back(fmt.Sprintf("Created %s. Press m to mount it.", w.created.Name), true)
		}
		return nil
	}
	if key.Matches(msg, k.Back) {
		if w.step == stepDir {
			return w.c.back("", false)
		}
		return w.goTo(w.step - 1)
	}
	if w.step == stepCipher {
		switch {
		case key.Matches(msg, k.Up):
			w.cipherCursor = max(0, w.cipherCursor-1)
			w.cipherPicked = true
		case key.Matches(msg, k.Down):
			w.cipherCursor = min(len(w.ciphers)-1, w.cipherCursor+1)
			w.cipherPicked = true
		case key.Matches(msg, k.Submit):
			c := w.ciphers[w.cipherCursor]
			if r, ok := w.c.speed.result(c.ID); ok && r.Err != nil && !errors.Is(r.Err, context.Canceled) {
				w.err = fmt.Sprintf("%s can't be used on this computer: %v", c.Name, r.Err)
				return nil
			}
			return w.goTo(stepPassword)
		}
		w.err = ""
		return nil
	}
	if key.Matches(msg, k.Submit) {
		w.form().acceptSuggestion()
		return w.submit()
	}
	cmd := w.form().Update(msg)
	if w.step == stepPassword {
		w.password.newPasswordHints(0, 1)
	}
	return cmd
}

func strengthHint(s *Styles, pw string) string {
	bits, label := strength(pw)
	if label == "" {
		return ""
	}
	st := s.Success
	switch label {
	case "weak":
		st = s.Error
	case "fair":
		st = s.Warning
	}
	return st.Render(fmt.Sprintf("strength: %s (~%.0f bits, an estimate)", label, bits))
}

// submit validates the current step and moves on.
func (w *wizardScreen) submit() tea.Cmd {
	w.err = ""
	switch w.step {
	case stepDir:
		dir := expandPath(w.dir.value(0))
		if dir == "" {
			w.err = "Type the folder that will hold the encrypted files."
			return nil
		}
		w.checking = true
		b := w.c.backend
		return func() tea.Msg { return dirChecked{dir: dir, err: b.CheckNewCipherDir(dir)} }
	case stepName:
		name := strings.TrimSpace(w.name.value(0))
		switch {
		case name == "":
			w.err = "The vault needs a name."
		case strings.ContainsAny(name, "/\x00") || strings.HasPrefix(name, "-"):
			w.err = "A name can't contain / or start with -."
		case w.nameTaken(name):
			w.err = fmt.Sprintf("A vault named %q is already registered.", name)
		}
		if w.err != "" {
			return nil
		}
		if w.mountPoint.value(0) == "" {
			w.mountPoint.fields[0].input.SetValue(w.c.backend.DefaultMountPoint(name))
		}
		return w.goTo(stepMountPoint)
	case stepMountPoint:
		mp, dir := expandPath(w.mountPoint.value(0)), expandPath(w.dir.value(0))
		switch {
		case mp == "":
			w.err = "Type where the decrypted files should appear."
		case samePath(mp, dir) || strings.HasPrefix(mp, dir+string(filepath.Separator)):
			w.err = "The mount point must be outside the encrypted folder."
		}
		if w.err != "" {
			return nil
		}
		w.mountPoint.fields[0].input.SetValue(mp)
		w.mountPoint.fields[0].input.CursorEnd()
		return w.goTo(stepCipher)
	case stepPassword:
		pw, confirm := w.password.value(0), w.password.value(1)
		switch {
		case pw == "":
			w.err = "Type a password."
		case w.password.focus == 0 && confirm == "":
			return w.password.setFocus(1)
		case pw != confirm:
			w.err = "The passwords do not match. Type the confirmation again."
			w.password.fields[1].input.Reset()
			w.password.newPasswordHints(0, 1)
			return nil
		}
		if w.err != "" {
			return nil
		}
		return w.goTo(stepAdvanced)
	case stepAdvanced:
		req, err := w.request()
		if err != nil {
			w.err = err.Error()
			return nil
		}
		w.created = req
		w.created.Password = nil
		w.step = stepCreating
		b, ctx := w.c.backend, w.c.ctx
		return func() tea.Msg {
			key, err := b.CreateVault(ctx, req)
			crypto.Wipe(req.Password)
			return vaultCreated{key: key, err: err}
		}
	}
	return nil
}

func (w *wizardScreen) nameTaken(name string) bool {
	for _, v := range w.c.vaults {
		if v.Name == name {
			return true
		}
	}
	return false
}

// request gathers the answers; it fails on an out-of-range advanced option.
func (w *wizardScreen) request() (CreateRequest, error) {
	logN, err := strconv.Atoi(strings.TrimSpace(w.advanced.value(0)))
	if err != nil || logN < minScryptLogN || logN > maxScryptLogN {
		return CreateRequest{}, fmt.Errorf("scrypt cost must be a number from %d to %d (each step doubles the time to unlock)", minScryptLogN, maxScryptLogN)
	}
	longMax, err := strconv.Atoi(strings.TrimSpace(w.advanced.value(3)))
	if err != nil || longMax < minLongNameMax || longMax > defaultLongNameMax {
		return CreateRequest{}, fmt.Errorf("long-name limit must be from %d to %d", minLongNameMax, defaultLongNameMax)
	}
	plain, det := w.advanced.fields[1].on, w.advanced.fields[2].on
	if plain && det {
		return CreateRequest{}, fmt.Errorf("deterministic names only apply to encrypted names: turn one of them off")
	}
	if plain {
		longMax = 0 // long names only exist for encrypted names
	}
	return CreateRequest{
		Name:               strings.TrimSpace(w.name.value(0)),
		CipherDir:          expandPath(w.dir.value(0)),
		MountPoint:         expandPath(w.mountPoint.value(0)),
		Password:           []byte(w.password.value(0)),
		Cipher:             w.ciphers[w.cipherCursor].ID,
		ScryptLogN:         logN,
		PlaintextNames:     plain,
		DeterministicNames: det,
		LongNameMax:        longMax,
	}, nil
}

// defaultName derives a vault name from its folder: "Private.crypt" -> "Private".
func defaultName(dir string) string {
	base := filepath.Base(dir)
	base = strings.TrimSuffix(base, ".crypt")
	base = strings.TrimPrefix(base, ".")
	if base == "" || base == "/" {
		return "vault"
	}
	return base
}

func (w *wizardScreen) View() string {
	s := w.c.styles
	width := w.c.contentWidth()
	para := lipgloss.NewStyle().Width(width)
	var b strings.Builder
	switch w.step {
	case stepDir:
		b.WriteString(para.Render("Where should the encrypted files live? The folder must be new or empty; it is what you back up or sync. Enter on an empty field takes the suggestion shown in it.") + "\n\n")
		b.WriteString(w.dir.View())
		if w.checking {
			b.WriteString("\n\n" + w.c.spinner.View() + " Checking…")
		}
	case stepName:
		b.WriteString(para.Render("A short name to refer to the vault, here and in commands (vaultui mount NAME).") + "\n\n")
		b.WriteString(w.name.View())
	case stepMountPoint:
		b.WriteString(para.Render("Where the decrypted files appear while the vault is mounted (created if missing; it must be empty).") + "\n\n")
		b.WriteString(w.mountPoint.View())
	case stepCipher:
		b.WriteString(w.cipherView())
	case stepPassword:
		b.WriteString(para.Render("The password unlocks the vault. There is no way to recover it, only the master key shown at the end.") + "\n\n")
		b.WriteString(w.password.View())
	case stepAdvanced:
		b.WriteString(w.summary() + "\n\n")
		b.WriteString(w.advanced.View() + "\n\n")
		b.WriteString(s.Subtle.Render(para.Render("scrypt cost: higher is slower to guess and to unlock (16 ≈ 0.1 s). Plaintext names leave file names readable. Deterministic names drop the per-directory IV (gocryptfs -deterministic-names).")))
	case stepCreating:
		b.WriteString(w.c.spinner.View() + " Creating " + w.created.Name + " in " + tildePath(w.created.CipherDir) + "…\n\n")
		b.WriteString(s.Subtle.Render("Deriving the key with scrypt takes a moment."))
	case stepMasterKey:
		b.WriteString(s.Success.Render("Created "+w.created.Name+".") + "\n\n")
		b.WriteString(para.Render("This is the vault's master key. Write it down and keep it somewhere safe: with it you can recover the files if you forget the password. It is shown only now.") + "\n\n")
		b.WriteString(s.Box.Render(strings.Join(vault.FormatMasterKey(w.masterKey), "\n")) + "\n\n")
		b.WriteString("Press " + s.Key.Render("y") + " once you have stored it.")
	}
	if w.err != "" {
		b.WriteString("\n\n" + s.Error.Render(para.Render(w.err)))
	}
	return b.String()
}

func (w *wizardScreen) summary() string {
	s := w.c.styles
	line := func(label, value string) string {
		return s.Label.Render(padRight(label, 12)) + " " + truncateLeft(value, w.c.contentWidth()-13)
	}
	c := "?"
	if len(w.ciphers) > 0 {
		c = w.ciphers[w.cipherCursor].Name
	}
	return strings.Join([]string{
		line("Name", strings.TrimSpace(w.name.value(0))),
		line("Folder", tildePath(expandPath(w.dir.value(0)))),
		line("Mount point", tildePath(expandPath(w.mountPoint.value(0)))),
		line("Cipher", c),
	}, "\n")
}

func (w *wizardScreen) cipherView() string {
	s := w.c.styles
	sp := &w.c.speed
	var b strings.Builder
	switch {
	case sp.running:
		b.WriteString(w.c.spinner.View() + " Measuring the ciphers on this CPU…\n\n")
	case sp.rec != nil:
		// What the recommendation gains; what each choice costs follows the cursor below.
		text := "Recommended: " + sp.rec.Cipher.String() + ". " + sp.rec.Reason
		if sp.rec.Gain != "" {
			text += " " + sp.rec.Gain
		}
		b.WriteString(lipgloss.NewStyle().Width(w.c.contentWidth()).Render(text) + "\n\n")
	default:
		b.WriteString("Content cipher:\n\n")
	}
	nameW := 0
	for _, c := range w.ciphers {
		nameW = max(nameW, lipgloss.Width(c.Name))
	}
	base := baseline(w.c)
	for i, c := range w.ciphers {
		marker, name := "  ", padRight(c.Name, nameW)
		if i == w.cipherCursor {
			marker, name = s.Cursor.Render("› "), s.Selected.Render(name)
		}
		info := ""
		if r, ok := sp.result(c.ID); ok {
			if r.Err != nil {
				info = s.Error.Render("unavailable: " + r.Err.Error())
			} else {
				info = fmt.Sprintf("%7.0f MB/s", r.MBps)
				if base > 0 {
					info += fmt.Sprintf("  %4.2fx", r.MBps/base)
				}
			}
		}
		if sp.rec != nil && string(sp.rec.Cipher) == c.ID {
			info += s.Success.Render("  ★ recommended")
		}
		b.WriteString(marker + name + "  " + info + "\n")
	}
	if len(w.ciphers) > 0 {
		opens := app.OpensIn(crypto.CipherID(w.ciphers[w.cipherCursor].ID)).Sentence()
		b.WriteString("\n" + lipgloss.NewStyle().Width(w.c.contentWidth()).Render(opens) + "\n")
	}
	return b.String()
}
