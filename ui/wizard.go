package ui

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/registry"
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

// The advanced step's fields.
const (
	advScrypt = iota
	advPlainNames
	advDetNames
	advLongNames
	advLock
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

// formatChoices lists the cipher step's entries, from the table of formats: each cipher of a
// format that offers a choice (measured by the speed test: ciphers), and each format that
// fixes its cipher.
func formatChoices(ciphers []crypto.CipherID) []app.Kind {
	var out []app.Kind
	for _, f := range vault.Formats() {
		switch {
		case !f.Can.Mount: // a reverse view is made from a folder, with init --reverse
		case len(f.Ciphers) > 1:
			for _, c := range ciphers {
				if slices.Contains(f.Ciphers, c) {
					out = append(out, app.Kind{Format: f, Cipher: c})
				}
			}
		default:
			out = append(out, app.Kind{Format: f})
		}
	}
	return out
}

// wizardScreen creates a vault step by step. Nothing is written before the
// last step validates; the master key is shown once and must be
// acknowledged before the wizard closes.
//
// It asks before q or ctrl+c quits (the root model leaves them to it). On its steps, what
// was typed would be lost; on the master key, the key is shown only once; while the vault is
// being created, quitting would leave it half made, so it waits for the key and asks then.
type wizardScreen struct {
	c    *common
	step wizardStep
	err  string

	forms [stepMasterKey + 1]*form // by step; nil where a step is no form

	ciphers      []app.Kind
	cipherCursor int
	cipherPicked bool // the user moved the cursor: keep their choice
	details      bool // d shows how the recommendation was measured
	scroll       scroll

	checking  bool // cipherdir validation in flight
	masterKey []byte
	created   app.NewVault
	// leaving is set while asking whether to leave the master key unstored:
	// by q (quit the app) or esc (back to the list).
	leaving *tea.KeyMsg
	// quitAsked: q or ctrl+c on a step before the vault is made; y quits, n stays.
	quitAsked bool
}

type dirChecked struct {
	dir string
	err error
}

// createChecked is app.CheckCreate's answer for the name, mount point or advanced step;
// next is the step it lets the wizard go on to (stepCreating: create the vault).
type createChecked struct {
	next wizardStep
	err  error
}

// folderSuggested is a folder free for a new vault, found in the background.
type folderSuggested struct{ dir string }

type vaultCreated struct {
	key []byte
	err error
}

func newWizard(c *common) *wizardScreen {
	// The format is chosen with the cipher: gocryptfs's ciphers, then a Cryptomator vault.
	w := &wizardScreen{c: c, ciphers: formatChoices(c.backend.Ciphers())}
	// The suggestions follow the answers before them (see suggest); the
	// folder's is checked to be free in the background (Init).
	w.forms[stepDir] = newForm(c, suggestField("Folder", ""))
	w.forms[stepName] = newForm(c, suggestField("Name", ""))
	w.forms[stepMountPoint] = newForm(c, suggestField("Mount point", ""))
	w.forms[stepPassword] = newForm(c, passwordField("Password"), passwordField("Confirm"))
	def := vault.DefaultFormat()
	w.forms[stepAdvanced] = newForm(c,
		defaultField("scrypt cost (log2 N)", strconv.Itoa(def.ScryptLogN.Default)),
		toggleField("Plaintext names", false),
		toggleField("Deterministic names", false),
		defaultField("Long-name limit", strconv.Itoa(def.LongNameMax.Default)),
		choiceField("Lock", registry.LockPolicies, 0),
	)
	w.option(advLock).choose(c.defaultLock())
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
	f := w.forms[w.step]
	return f != nil && f.typing()
}

// The answers so far, as the vault takes them.
func (w *wizardScreen) dir() string        { return expandPath(w.forms[stepDir].value(0)) }
func (w *wizardScreen) name() string       { return strings.TrimSpace(w.forms[stepName].value(0)) }
func (w *wizardScreen) mountPoint() string { return expandPath(w.forms[stepMountPoint].value(0)) }

// option is the advanced step's field i (advScrypt...).
func (w *wizardScreen) option(i int) *field { return w.forms[stepAdvanced].fields[i] }

func (w *wizardScreen) keys() []key.Binding {
	k := w.c.keys
	next := key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "next"))
	if w.quitAsked {
		return []key.Binding{key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "quit")), key.NewBinding(key.WithKeys("n", "esc"), key.WithHelp("n/esc", "stay"))}
	}
	switch w.step {
	case stepCipher:
		return []key.Binding{next, k.Back, k.Up, k.Down, k.Details}
	case stepAdvanced:
		return w.forms[w.step].keys("create")
	case stepCreating:
		return nil
	case stepMasterKey:
		if w.leaving != nil {
			return []key.Binding{key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "leave without it")), key.NewBinding(key.WithKeys("n", "esc"), key.WithHelp("n/esc", "stay"))}
		}
		return []key.Binding{key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "I have stored it"))}
	}
	return w.forms[w.step].keys("next")
}

func (w *wizardScreen) Init() tea.Cmd {
	b := w.c.backend
	cmds := []tea.Cmd{w.forms[stepDir].setFocus(0), func() tea.Msg { return folderSuggested{dir: app.Tilde(app.FreeFolder(b.CheckNewCipherDir))} }}
	if w.c.speed.rec == nil && !w.c.speed.running {
		// Measure while the user types, so the cipher step can show speeds.
		cmds = append(cmds, func() tea.Msg { return runSpeedMsg{} })
	}
	return tea.Batch(cmds...)
}

// suggest recomputes the name and mount point suggestions from the folder
// and name as they are now; values the user did not type follow them.
func (w *wizardScreen) suggest() {
	dir := w.dir()
	if dir == "" {
		return
	}
	name := app.FreeName(dir, w.nameTaken)
	w.forms[stepName].fields[0].suggest(name)
	if typed := w.name(); typed != "" {
		name = typed
	}
	if mp := w.c.backend.DefaultMountPoint(name); mp != "" {
		w.forms[stepMountPoint].fields[0].suggest(app.Tilde(mp))
	}
}

// preselect puts the cursor on the recommended cipher until the user picks.
func (w *wizardScreen) preselect() {
	if w.cipherPicked || w.c.speed.rec == nil {
		return
	}
	for i, c := range w.ciphers {
		if c.Cipher == w.c.speed.rec.Cipher && c.Format == vault.DefaultFormat() {
			w.cipherCursor = i
		}
	}
	w.formatDefaults()
}

// formatDefaults makes the chosen format's defaults the advanced options' values, where the
// user did not type one.
func (w *wizardScreen) formatDefaults() {
	if len(w.ciphers) == 0 {
		return
	}
	f := w.ciphers[w.cipherCursor].Format
	w.option(advScrypt).suggest(strconv.Itoa(f.ScryptLogN.Default))
	if f.LongNameMax != (vault.Range{}) {
		w.option(advLongNames).suggest(strconv.Itoa(f.LongNameMax.Default))
	}
	// The options the format has no place for are not offered (and not kept from another
	// format's choice).
	for _, o := range []struct {
		field int
		can   bool
	}{{advPlainNames, f.Can.PlaintextNames}, {advDetNames, f.Can.DeterministicNames}, {advLongNames, f.LongNameMax != (vault.Range{})}} {
		fl := w.option(o.field)
		fl.hidden = !o.can
		if fl.hidden {
			fl.on = false
			fl.input.SetValue(fl.auto)
		}
	}
}

func (w *wizardScreen) Update(msg tea.Msg) tea.Cmd {
	w.preselect()
	switch msg := msg.(type) {
	case lockChecked:
		if fl := w.option(advLock); !fl.picked {
			fl.choose(w.c.defaultLock())
		}
		w.lockHint()
		return nil
	case dirChecked:
		w.checking = false
		if msg.err != nil {
			w.err = msg.err.Error()
			return nil
		}
		w.forms[stepDir].fields[0].normalize(msg.dir) // the expanded path
		return w.goTo(stepName)
	case createChecked:
		w.checking = false
		if msg.err != nil {
			w.err = msg.err.Error()
			return nil
		}
		if msg.next == stepCipher {
			w.forms[stepMountPoint].fields[0].normalize(w.mountPoint())
		}
		if msg.next == stepCreating {
			if w.step != stepAdvanced {
				return nil // the user went back meanwhile
			}
			return w.create()
		}
		return w.goTo(msg.next)
	case folderSuggested:
		w.forms[stepDir].fields[0].suggest(msg.dir)
		return nil
	case vaultCreated:
		if msg.key == nil && msg.err != nil {
			w.err = "Could not create the vault: " + msg.err.Error()
			w.step, w.leaving = stepAdvanced, nil
			return nil
		}
		// Written: the key is shown whatever failed after (msg.err says what).
		w.masterKey, w.step = msg.key, stepMasterKey
		if msg.err != nil {
			w.err = msg.err.Error()
		}
		return nil
	case tea.KeyMsg:
		return w.handleKey(msg)
	}
	if f := w.forms[w.step]; f != nil {
		return f.Update(msg)
	}
	return nil
}

func (w *wizardScreen) goTo(s wizardStep) tea.Cmd {
	w.step, w.err = s, ""
	w.scroll = scroll{}
	w.suggest()
	w.lockHint()
	if f := w.forms[w.step]; f != nil {
		return f.setFocus(0)
	}
	return nil
}

func (w *wizardScreen) handleKey(msg tea.KeyMsg) tea.Cmd {
	k := w.c.keys
	switch w.step {
	case stepCreating:
		if key.Matches(msg, k.Quit) {
			w.leaving = &msg // asked once the key is shown
		}
		return nil
	case stepMasterKey:
		return w.masterKeyKey(msg)
	}
	if w.quitAsked {
		switch {
		case key.Matches(msg, k.Yes), key.Matches(msg, k.ForceQuit):
			return func() tea.Msg { return quitMsg{} }
		case key.Matches(msg, k.No), key.Matches(msg, k.Back):
			w.quitAsked = false
		}
		return nil
	}
	// ctrl+c anywhere, q where it is not typed (the cipher list): ask first.
	if key.Matches(msg, k.ForceQuit) || w.step == stepCipher && key.Matches(msg, k.Quit) {
		w.quitAsked = true
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
			w.formatDefaults()
		case key.Matches(msg, k.Down):
			w.cipherCursor = min(len(w.ciphers)-1, w.cipherCursor+1)
			w.cipherPicked = true
			w.formatDefaults()
		case key.Matches(msg, k.Details):
			w.details = !w.details
		case key.Matches(msg, k.Submit):
			c := w.ciphers[w.cipherCursor]
			if r, ok := w.c.speed.report.Result(c.Cipher); ok && c.Cipher != "" && r.Err != nil && !errors.Is(r.Err, context.Canceled) {
				w.err = fmt.Sprintf("%s can't be used on this computer: %v", c.Label(), r.Err)
				return nil
			}
			return w.goTo(stepPassword)
		}
		w.err = ""
		return nil
	}
	if key.Matches(msg, k.Submit) {
		w.forms[w.step].acceptSuggestion()
		return w.submit()
	}
	cmd := w.forms[w.step].Update(msg)
	switch w.step {
	case stepPassword:
		w.forms[w.step].newPasswordHints(0, 1, w.related()...)
	case stepAdvanced:
		w.lockHint()
	}
	return cmd
}

// lockHint says under the lock field when the chosen policy cannot work here.
func (w *wizardScreen) lockHint() {
	fl := w.option(advLock)
	fl.hint = ""
	switch why := w.c.lockProblem(fl.chosen()); {
	case why != "":
		fl.hint = w.c.styles.Warning.Render("cannot work here: " + why)
	case w.c.lockErr != nil:
		// Why never is proposed.
		fl.hint = w.c.styles.Subtle.Render(w.c.lockErr.Error())
	}
}

// masterKeyKey handles a key on the master key: y once it is stored; q and
// esc ask first, since it is not shown again.
func (w *wizardScreen) masterKeyKey(msg tea.KeyMsg) tea.Cmd {
	k := w.c.keys
	quit := false
	switch {
	case w.leaving == nil && key.Matches(msg, k.Yes):
	case w.leaving == nil:
		if key.Matches(msg, k.Quit) || key.Matches(msg, k.Back) {
			w.leaving = &msg
		}
		return nil
	case key.Matches(msg, k.Yes), key.Matches(msg, k.ForceQuit): // a second ctrl+c insists
		quit = key.Matches(*w.leaving, k.Quit) || key.Matches(msg, k.ForceQuit)
		w.leaving = nil
	default:
		if key.Matches(msg, k.No) {
			w.leaving = nil
		}
		return nil
	}
	crypto.Wipe(w.masterKey)
	w.masterKey = nil
	if quit {
		return func() tea.Msg { return quitMsg{} }
	}
	return w.c.backToVault(fmt.Sprintf("Created %s. Press m to mount it.", w.created.Name), w.created.CipherDir)
}

// strengthHint is app.RatePassword's rating of pw in a line: what makes it guessable
// when something does, else that it is an estimate.
func strengthHint(s *Styles, pw string, related ...string) string {
	r := app.RatePassword(pw, related...)
	if r.Label == "" {
		return ""
	}
	st := s.Success
	switch r.Label {
	case "weak":
		st = s.Error
	case "fair":
		st = s.Warning
	}
	return st.Render("strength: " + r.String())
}

// related are the words the wizard's user typed before the password.
func (w *wizardScreen) related() []string {
	words := []string{w.name()}
	if dir := w.dir(); dir != "" {
		words = append(words, filepath.Base(dir))
	}
	return words
}

// submit validates the current step and moves on.
func (w *wizardScreen) submit() tea.Cmd {
	if w.checking {
		return nil // one check at a time: a second enter must not create twice
	}
	w.err = ""
	switch w.step {
	case stepDir:
		dir := w.dir()
		if dir == "" {
			w.err = "Type the folder that will hold the encrypted files."
			return nil
		}
		w.checking = true
		b := w.c.backend
		return func() tea.Msg { return dirChecked{dir: dir, err: b.CheckNewCipherDir(dir)} }
	case stepName:
		name := w.name()
		if name == "" {
			w.err = "The vault needs a name."
			return nil
		}
		// A valid name that is not registered: app.CheckCreate says, as create will.
		return w.checkCreate(stepMountPoint, app.NewVault{CipherDir: w.dir(), Name: name})
	case stepMountPoint:
		mp := w.mountPoint()
		if mp == "" {
			w.err = "Type where the decrypted files should appear."
			return nil
		}
		return w.checkCreate(stepCipher, app.NewVault{CipherDir: w.dir(), Name: w.name(), MountPoint: mp})
	case stepPassword:
		f := w.forms[stepPassword]
		pw, confirm := f.value(0), f.value(1)
		switch {
		case pw == "":
			w.err = "Type a password."
			return nil
		case f.focus == 0 && confirm == "":
			return f.setFocus(1)
		case pw != confirm:
			w.err = "The passwords do not match. Type the confirmation again."
			f.fields[1].input.Reset()
			f.newPasswordHints(0, 1, w.related()...)
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
		// The whole request, options included, is checked before anything is written.
		return w.checkCreate(stepCreating, req)
	}
	return nil
}

// create writes the vault as answered (w.created), once app.CheckCreate let it.
func (w *wizardScreen) create() tea.Cmd {
	req := w.created
	pw := []byte(w.forms[stepPassword].value(0))
	w.step = stepCreating
	b, ctx := w.c.backend, w.c.ctx
	return func() tea.Msg {
		key, err := b.CreateVault(ctx, req, pw)
		crypto.Wipe(pw)
		return vaultCreated{key: key, err: err}
	}
}

// checkCreate asks the core whether the vault as answered so far can be created (the
// folder, the name, the mount point and the registry), and goes on to next if it can.
func (w *wizardScreen) checkCreate(next wizardStep, r app.NewVault) tea.Cmd {
	w.checking = true
	b, ctx := w.c.backend, w.c.ctx
	return func() tea.Msg { return createChecked{next: next, err: b.CheckCreate(ctx, r)} }
}

func (w *wizardScreen) nameTaken(name string) bool {
	return slices.ContainsFunc(w.c.vaults, func(v Vault) bool { return v.Name == name })
}

// request gathers the answers; it fails on an out-of-range advanced option.
func (w *wizardScreen) request() (app.NewVault, error) {
	ch := w.ciphers[w.cipherCursor]
	f := ch.Format
	// Ranges and which options go together are the core's rules (vault.CreateOptions.Validate
	// through app.CheckCreate, checked before creating): here only numbers are read. A value
	// left at the format's default is passed as 0, the default.
	number := func(i int, what string) (int, error) {
		fl := w.option(i)
		if !fl.edited() {
			return 0, nil
		}
		n, err := strconv.Atoi(strings.TrimSpace(fl.input.Value()))
		if err != nil {
			return 0, fmt.Errorf("%s must be a number", what)
		}
		return n, nil
	}
	logN, err := number(advScrypt, "scrypt cost")
	if err != nil {
		return app.NewVault{}, err
	}
	longMax, err := number(advLongNames, "long-name limit")
	if err != nil {
		return app.NewVault{}, err
	}
	plain, det := w.option(advPlainNames).on, w.option(advDetNames).on
	if plain || longMax == f.LongNameMax.Default {
		longMax = 0 // long names only exist for encrypted names; the default needs no flag
	}
	opts := vault.CreateOptions{
		Format:             f.ID,
		Cipher:             ch.Cipher,
		ScryptLogN:         logN,
		PlaintextNames:     plain,
		DeterministicNames: det,
		LongNameMax:        longMax,
	}
	return app.NewVault{
		Name:       w.name(),
		CipherDir:  w.dir(),
		MountPoint: w.mountPoint(),
		Lock:       w.option(advLock).chosen(),
		Options:    opts,
	}, nil
}

// View shows the step, scrolled so that what has the keyboard (the focused field or cipher,
// with its hint and any error below it) stays in view at any height.
func (w *wizardScreen) View() string {
	s := w.c.styles
	var b strings.Builder
	// focus is the first line that must show; it and what follows it (to focusEnd, or the
	// end) show as far as they fit.
	focus, focusEnd := -1, -1
	// addForm writes what comes before the focus (head), then a form and where its focus is.
	addForm := func(head string, f *form) {
		b.WriteString(head + "\n\n")
		v, at := f.viewFocus()
		focus = lipgloss.Height(b.String()) - 1 + at[0]
		b.WriteString(v)
	}
	if w.quitAsked {
		// On top, and in view (below): a small window scrolls the step under it.
		b.WriteString(s.Warning.Render(w.c.para("Quit vaultui? Nothing has been created. y/n")) + "\n\n")
	}
	switch w.step {
	case stepDir:
		addForm(w.c.para("Where should the encrypted files live? The folder must be new or empty; it is what you back up or sync. Enter on an empty field takes the suggestion shown in it."), w.forms[stepDir])
	case stepName:
		addForm(w.c.para("A short name to refer to the vault, here and in commands (vaultui mount NAME)."), w.forms[stepName])
	case stepMountPoint:
		addForm(w.c.para("Where the decrypted files appear while the vault is mounted (created if missing; it must be empty)."), w.forms[stepMountPoint])
	case stepCipher:
		v, at := w.cipherView()
		top := lipgloss.Height(b.String()) - 1
		focus, focusEnd = top+at[0], top+at[1]
		b.WriteString(v)
	case stepPassword:
		addForm(w.c.para("The password unlocks the vault. There is no way to recover it, only the master key shown at the end."), w.forms[stepPassword])
	case stepAdvanced:
		// The answers so far, then the options, the error and what the focused option means.
		addForm(w.summary(), w.forms[stepAdvanced])
		b.WriteString("\n\n" + s.Subtle.Render(w.c.para(advancedHints[w.forms[stepAdvanced].focus])))
	case stepCreating:
		b.WriteString(w.c.spinner.View() + " Creating " + w.created.Name + " in " + app.Tilde(w.created.CipherDir) + "…\n\n")
		b.WriteString(s.Subtle.Render(w.c.para("Deriving the key with scrypt takes a moment.")))
		if w.leaving != nil {
			b.WriteString("\n\n" + s.Warning.Render(w.c.para("The master key is shown before you quit: it is the only way back in without the password.")))
		}
	case stepMasterKey:
		b.WriteString(s.Success.Render("Created "+w.created.Name+".") + "\n\n")
		b.WriteString(w.c.para("This is the vault's master key. Write it down and keep it somewhere safe: with it you can recover the files if you forget the password. It is shown only now.") + "\n\n")
		focus = lipgloss.Height(b.String()) - 1 // the key itself
		keyText := strings.Join(vault.FormatMasterKey(w.masterKey), "\n")
		if box := s.Box.Render(keyText); lipgloss.Width(box) <= w.c.contentWidth() {
			keyText = box // where it fits: the key must show whole, a box is only a frame
		}
		b.WriteString(keyText + "\n\n")
		// What to do next right under the key, so a small window shows both.
		if w.leaving != nil {
			what := "Back to the list"
			if key.Matches(*w.leaving, w.c.keys.Quit) {
				what = "Quit vaultui"
			}
			b.WriteString(s.Warning.Render(w.c.para(what + " without storing the master key? It is not shown again. y/n")))
		} else {
			b.WriteString(w.c.para("Press " + s.Key.Render("y") + " once you have stored it."))
		}
		if f, _ := vault.FormatByID(w.created.Options.Format); f.KeyNote != "" {
			b.WriteString("\n\n" + w.c.para("It is "+f.KeyNote+"; vaultui passwd --masterkey takes it."))
		}
	}
	if w.checking && w.step <= stepName {
		b.WriteString("\n\n" + w.c.spinner.View() + " Checking…")
	}
	if w.err != "" {
		b.WriteString("\n\n" + s.Error.Render(w.c.para(w.err)))
	}
	text := b.String()
	if focusEnd < 0 {
		focusEnd = lipgloss.Height(text) - 1
	}
	if w.quitAsked {
		focus = 0
	}
	return w.scroll.view(text, w.c.bodyHeight(), [2]int{focus, focusEnd}, s)
}

// advancedHints say what each advanced option means, by field.
var advancedHints = []string{
	"scrypt cost: higher is slower to guess and to unlock (16 ≈ 0.1 s).",
	"Plaintext names leave file names readable (space changes it).",
	"Deterministic names drop the per-directory IV, as gocryptfs -deterministic-names (space changes it).",
	fmt.Sprintf("Long-name limit: longer encrypted names are stored in a file of their own (%d to %d).", vault.DefaultFormat().LongNameMax.Min, vault.DefaultFormat().LongNameMax.Max),
	"Lock: when the daemon unmounts the vault (space changes it).",
}

func (w *wizardScreen) summary() string {
	s := w.c.styles
	line := func(label, value string) string {
		return s.Label.Render(padRight(label, 12)) + " " + truncatePath(value, w.c.contentWidth()-13)
	}
	c := "?"
	if len(w.ciphers) > 0 {
		c = w.ciphers[w.cipherCursor].Label()
	}
	return strings.Join([]string{
		line("Name", w.name()),
		line("Folder", app.Tilde(w.dir())),
		line("Mount point", app.Tilde(w.mountPoint())),
		line("Cipher", c),
	}, "\n")
}

// cipherView is the cipher step, and the lines of the choice under the cursor with what it
// costs.
func (w *wizardScreen) cipherView() (string, [2]int) {
	s := w.c.styles
	sp := &w.c.speed
	var b strings.Builder
	switch {
	case sp.running:
		b.WriteString(w.c.spinner.View() + " Measuring the ciphers on this CPU…\n\n")
	case sp.rec != nil:
		// What the recommendation gains; what each choice costs follows the cursor below.
		b.WriteString(s.Title.Render("Recommended: "+sp.rec.Cipher.String()) + "\n" + w.c.para(sp.rec.Gain) + "\n\n")
	default:
		b.WriteString("Content cipher:\n\n")
	}
	nameW := 0
	for _, c := range w.ciphers {
		nameW = max(nameW, lipgloss.Width(c.Label()))
	}
	// The figures take what the width gives: the star says "recommended" where there is
	// room, and the MB/s give way first to the ratio, the figure the choice rests on.
	numW := figureWidth(sp.report)
	room := w.c.contentWidth() - 2 - nameW - 2
	star, showMB := "  ★ recommended", true
	if numW+len(" MB/s  ")+5+len(star) > room {
		star = " ★"
	}
	if numW+len(" MB/s  ")+5+len(star) > room {
		showMB = false
	}
	focus := noFocus
	for i, c := range w.ciphers {
		marker, name := "  ", padRight(c.Label(), nameW)
		if i == w.cipherCursor {
			focus[0] = lipgloss.Height(b.String()) - 1
			marker, name = s.Cursor.Render("› "), s.Selected.Render(name)
		}
		info := ""
		switch r, ok := sp.report.Result(c.Cipher); {
		case c.Cipher == "":
			info = s.Subtle.Render(truncate(c.Format.Summary, room))
		case ok && r.Err != nil:
			info = s.Error.Render(truncate("unavailable: "+r.Err.Error(), room))
		case ok:
			if showMB {
				info = fmt.Sprintf("%*.0f MB/s  ", numW, r.MBps)
			}
			info += fmt.Sprintf("%5s", sp.report.Times(c.Cipher))
		}
		if sp.rec != nil && sp.rec.Cipher == c.Cipher && c.Format == vault.DefaultFormat() {
			info += s.Success.Render(star)
		}
		b.WriteString(marker + name + "  " + info + "\n")
		if i == w.cipherCursor {
			// What the choice costs, under it, so the two show together at any height.
			style := s.Subtle
			if c.OpensIn().VaultuiOnly() {
				style = s.Warning
			}
			b.WriteString(style.Render(indent(wrap(c.OpensIn().Line(), w.c.contentWidth()-4), 4)) + "\n")
			focus[1] = lipgloss.Height(b.String()) - 2
		}
	}
	if len(w.ciphers) > 0 {
		opens := w.ciphers[w.cipherCursor].OpensIn()
		if sp.rec != nil {
			full := opens.Sentence()
			if full == opens.Line() {
				full = ""
			}
			b.WriteString(recDetails(w.c, app.Recommendation{Method: sp.rec.Method, Write: sp.rec.Write}, w.details, full))
		}
	}
	return strings.TrimSuffix(b.String(), "\n"), focus
}
