package ui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/vaultui/vaultui/app"
)

// forgetScreen removes a vault from the registry after the user types its
// name. The encrypted files are never touched.
type forgetScreen struct {
	formScreen
	v Vault
}

type forgotten struct{ err error }

func newForgetScreen(c *common, v Vault) *forgetScreen {
	return &forgetScreen{v: v, formScreen: formScreen{c: c, enter: "forget", form: newForm(c, textField("Name", "", ""))}}
}

func (s *forgetScreen) title() string { return "forget · " + s.v.Name }

func (s *forgetScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case forgotten:
		s.working = false
		if msg.err != nil {
			s.err = msg.err.Error()
			return nil
		}
		return s.c.back("Forgot "+s.v.Name+"; its files are still in "+app.Tilde(s.v.CipherDir)+".", true)
	}
	return s.update(msg, s.submit)
}

func (s *forgetScreen) submit() tea.Cmd {
	if s.form.value(0) != s.v.Name {
		s.err = "Type the name exactly to confirm."
		return nil
	}
	s.working = true
	b, name := s.c.backend, s.v.Name
	return func() tea.Msg { return forgotten{err: b.Forget(name)} }
}

func (s *forgetScreen) View() string {
	return s.c.para("vaultui will forget "+s.c.styles.Key.Render(s.v.Name)+". Its encrypted files in "+app.Tilde(s.v.CipherDir)+" are not deleted; you can add it again with a.") +
		"\n\nType the name to confirm:\n\n" + s.form.View() + s.footer("")
}
