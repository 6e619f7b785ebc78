package ui

import (
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
)

// field is one line of a form: a text input or, with toggle set, a checkbox
// (or, with choices, a choice that space moves on).
type field struct {
	label   string
	input   textinput.Model
	toggle  bool
	on      bool
	choices []string
	choice  int    // index in choices
	picked  bool   // the user changed the choice: keep it
	hint    string // shown after the field, e.g. a password's strength
	// suggested marks the placeholder as a value enter accepts, not a
	// description of what to type.
	suggested bool
	// auto is the value the field took from its suggestion: while the value
	// is still that, the user has not edited it and a new suggestion
	// replaces it.
	auto string
	// hidden fields are neither shown nor focused (an option the chosen format has no
	// place for).
	hidden bool
}

// edited reports whether the user typed the field's value (rather than
// taking the suggestion).
func (fl *field) edited() bool {
	v := fl.input.Value()
	return v != "" && v != fl.auto
}

// suggest makes s the field's suggestion; a value the user did not type
// follows it.
func (fl *field) suggest(s string) {
	fl.input.Placeholder = s
	if fl.input.Value() != "" && !fl.edited() {
		fl.input.SetValue(s)
		fl.input.CursorEnd()
		fl.auto = s
	}
}

// normalize replaces the value by its normal form (an expanded path), which
// stays a suggestion's if the value was one.
func (fl *field) normalize(v string) {
	auto := !fl.edited()
	fl.input.SetValue(v)
	fl.input.CursorEnd()
	if auto {
		fl.auto = v
	}
}

func textField(label, value, placeholder string) *field {
	in := textinput.New()
	in.Prompt = ""
	in.Placeholder = placeholder
	in.SetValue(value)
	in.CharLimit = 4096
	return &field{label: label, input: in}
}

// defaultField is a text field holding a default that follows its suggestions (suggest)
// until the user types another value.
func defaultField(label, value string) *field {
	f := textField(label, value, "")
	f.auto = value
	return f
}

// suggestField is a text field whose placeholder is a suggestion: enter on
// the empty field takes it (see form.acceptSuggestion).
func suggestField(label, suggestion string) *field {
	f := textField(label, "", suggestion)
	f.suggested = true
	return f
}

func passwordField(label string) *field {
	f := textField(label, "", "")
	f.input.EchoMode = textinput.EchoPassword
	f.input.EchoCharacter = '•'
	return f
}

func toggleField(label string, on bool) *field {
	return &field{label: label, toggle: true, on: on}
}

// choiceField offers one of choices; space takes the next.
func choiceField(label string, choices []string, i int) *field {
	return &field{label: label, toggle: true, choices: choices, choice: i}
}

func (fl *field) chosen() string { return fl.choices[fl.choice] }

// choose selects the choice c, if it is one.
func (fl *field) choose(c string) {
	if i := slices.Index(fl.choices, c); i >= 0 {
		fl.choice = i
	}
}

// form is a column of fields with one focused; tab/shift+tab (and the
// arrows) move, space flips a checkbox, the rest goes to the focused input.
// Enter is left to the screen, which validates and submits.
type form struct {
	c      *common
	fields []*field
	focus  int
}

func newForm(c *common, fields ...*field) *form {
	for _, fl := range fields {
		fl.input.Cursor.SetMode(c.cursorMode)
	}
	f := &form{c: c, fields: fields}
	f.setFocus(0)
	return f
}

func (f *form) setFocus(i int) tea.Cmd {
	if len(f.fields) == 0 {
		return nil
	}
	n, step := len(f.fields), 1
	if i < f.focus {
		step = -1
	}
	for k := 0; k < n && f.fields[((i%n)+n)%n].hidden; k++ {
		i += step
	}
	i = ((i % n) + n) % n
	for _, fl := range f.fields {
		fl.input.Blur()
	}
	f.focus = i
	if !f.fields[i].toggle {
		return f.fields[i].input.Focus()
	}
	return nil
}

// keys are the form's keys for the help: enter, saying what it does, esc, and the keys that
// move between the fields and flip a toggle where the form has them.
func (f *form) keys(enter string) []key.Binding {
	k := f.c.keys
	out := []key.Binding{key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", enter)), k.Back}
	if len(f.fields) > 1 {
		out = append(out, k.NextField)
		if slices.ContainsFunc(f.fields, func(fl *field) bool { return fl.toggle && !fl.hidden }) {
			out = append(out, k.Toggle)
		}
		out = append(out, k.PrevField)
	}
	return out
}

func (f *form) focused() *field { return f.fields[f.focus] }

// typing reports whether keys go to a text input (so letters aren't actions).
func (f *form) typing() bool { return len(f.fields) > 0 && !f.focused().toggle }

func (f *form) value(i int) string { return f.fields[i].input.Value() }

// acceptSuggestion fills the focused field with its suggestion when it is
// empty, so enter takes what the field shows instead of doing nothing.
func (f *form) acceptSuggestion() {
	if len(f.fields) == 0 {
		return
	}
	fl := f.focused()
	if fl.suggested && !fl.toggle && fl.input.Value() == "" {
		fl.input.SetValue(fl.input.Placeholder)
		fl.input.CursorEnd()
		fl.auto = fl.input.Value()
	}
}

// newPasswordHints shows a strength hint under the new password field pw and
// "does not match" under its confirmation field once what is typed there
// stops being a prefix of the password, so a mismatch shows while typing. related are
// words typed nearby (the vault's name): a password made of them rates weak.
func (f *form) newPasswordHints(pw, confirm int, related ...string) {
	p, c := f.value(pw), f.value(confirm)
	f.fields[pw].hint = strengthHint(f.c.styles, p, related...)
	f.fields[confirm].hint = ""
	if c != "" && !strings.HasPrefix(p, c) {
		f.fields[confirm].hint = f.c.styles.Error.Render("does not match")
	}
}

func (f *form) Update(msg tea.Msg) tea.Cmd {
	if km, ok := msg.(tea.KeyMsg); ok {
		switch {
		case key.Matches(km, f.c.keys.NextField):
			return f.setFocus(f.focus + 1)
		case key.Matches(km, f.c.keys.PrevField):
			return f.setFocus(f.focus - 1)
		case f.focused().toggle && key.Matches(km, f.c.keys.Toggle):
			fl := f.focused()
			if len(fl.choices) > 0 {
				fl.choice = (fl.choice + 1) % len(fl.choices)
				fl.picked = true
			} else {
				fl.on = !fl.on
			}
			return nil
		}
	}
	if len(f.fields) == 0 || f.focused().toggle {
		return nil
	}
	var cmd tea.Cmd
	f.focused().input, cmd = f.focused().input.Update(msg)
	return cmd
}

func (f *form) View() string {
	v, _ := f.viewFocus()
	return v
}

// viewFocus is View with the lines of the focused field (from its label to its hint), for a
// screen that scrolls to keep them in view.
func (f *form) viewFocus() (string, [2]int) {
	s := f.c.styles
	focus := noFocus
	labelW := 0
	for _, fl := range f.fields {
		if !fl.hidden {
			labelW = max(labelW, lipgloss.Width(fl.label))
		}
	}
	inputW := max(10, f.c.width-labelW-8)
	var b strings.Builder
	for i, fl := range f.fields {
		if fl.hidden {
			continue
		}
		marker := "  "
		label := s.Label.Render(padRight(fl.label, labelW))
		if i == f.focus {
			marker = s.Cursor.Render("› ")
			label = s.Selected.Render(padRight(fl.label, labelW))
		}
		var v string
		switch {
		case len(fl.choices) > 0:
			v = "‹ " + fl.chosen() + " ›"
		case fl.toggle:
			v = "[ ]"
			if fl.on {
				v = "[x]"
			}
		default:
			fl.input.Width = inputW
			v = fl.input.View()
		}
		if i == f.focus {
			focus[0] = strings.Count(b.String(), "\n")
		}
		b.WriteString(marker + label + "  " + v)
		if fl.hint != "" {
			// A long hint wraps under itself.
			indent := strings.Repeat(" ", labelW+4)
			hint := fl.hint
			if avail := max(10, f.c.contentWidth()-labelW-4); lipgloss.Width(hint) > avail {
				lines := strings.Split(lipgloss.NewStyle().Width(avail).Render(hint), "\n")
				for i, l := range lines {
					lines[i] = strings.TrimRight(l, " ")
				}
				hint = strings.Join(lines, "\n"+indent)
			}
			b.WriteString("\n" + indent + hint)
		}
		if i == f.focus {
			focus[1] = strings.Count(b.String(), "\n")
		}
		b.WriteString("\n")
	}
	return strings.TrimSuffix(b.String(), "\n"), focus
}

// formScreen is what the screens that are one form share (add, passwd, forget, mount): the
// form, the work its enter starts, which holds every key until it answers, and the error.
type formScreen struct {
	c       *common
	form    *form
	enter   string // what enter does, for the help
	working bool
	err     string
}

func (s *formScreen) typing() bool        { return s.form.typing() }
func (s *formScreen) busy() bool          { return s.working }
func (s *formScreen) Init() tea.Cmd       { return s.form.setFocus(0) }
func (s *formScreen) keys() []key.Binding { return s.form.keys(s.enter) }

// update handles a message as every form screen does: no key while working, esc back to the
// list, enter submits; the rest goes to the form.
func (s *formScreen) update(msg tea.Msg, submit func() tea.Cmd) tea.Cmd {
	km, isKey := msg.(tea.KeyMsg)
	switch {
	case !isKey:
	case s.working:
		return nil
	case key.Matches(km, s.c.keys.Back):
		return s.c.back("", false)
	case key.Matches(km, s.c.keys.Submit):
		return submit()
	}
	return s.form.Update(msg)
}

// footer ends a form screen's view: while working, the spinner and what it does (if it says),
// then the error.
func (s *formScreen) footer(doing string) string {
	var f string
	if s.working && doing != "" {
		f = "\n\n" + s.c.spinner.View() + " " + doing
	}
	if s.err != "" {
		f += "\n\n" + s.c.styles.Error.Render(s.c.para(s.err))
	}
	return f
}

func padRight(s string, w int) string {
	if n := lipgloss.Width(s); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}
