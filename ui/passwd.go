package ui

import (
	"errors"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/vaultui/vaultui/crypto"
)

// passwdScreen changes a vault's password; the config is rewritten
// atomically by the backend, the master key (and the files) stay.
type passwdScreen struct {
	formScreen
	v Vault
}

type passwdChanged struct {
	backup string // the old key file, kept
	err    error
}

func newPasswdScreen(c *common, v Vault) *passwdScreen {
	return &passwdScreen{v: v, formScreen: formScreen{c: c, enter: "next/change", form: newForm(c,
		passwordField("Current password"),
		passwordField("New password"),
		passwordField("Confirm"),
	)}}
}

func (s *passwdScreen) title() string { return "change password · " + s.v.Name }

func (s *passwdScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case passwdChanged:
		s.working = false
		if msg.err == nil {
			return s.c.back("Password of "+s.v.Name+" changed. The old key file is kept as "+msg.backup+": delete it once the new password works.", false)
		}
		if errors.Is(msg.err, ErrWrongPassword) {
			s.err = "The current password is wrong."
			s.form.fields[0].input.Reset()
			return s.form.setFocus(0)
		}
		s.err = msg.err.Error()
		return nil
	case tea.KeyMsg:
		cmd := s.update(msg, s.submit)
		s.form.newPasswordHints(1, 2, s.v.Name)
		return cmd
	}
	return s.form.Update(msg)
}

func (s *passwdScreen) submit() tea.Cmd {
	old, pw, confirm := s.form.value(0), s.form.value(1), s.form.value(2)
	s.err = ""
	switch {
	case s.form.focus < 2 && s.form.value(s.form.focus) != "" && (old == "" || pw == "" || confirm == ""):
		return s.form.setFocus(s.form.focus + 1)
	case old == "":
		s.err = "Type the current password."
		return s.form.setFocus(0)
	case pw == "":
		s.err = "Type a new password."
		return s.form.setFocus(1)
	case pw != confirm:
		s.err = "The new passwords do not match. Type the confirmation again."
		s.form.fields[2].input.Reset()
		s.form.newPasswordHints(1, 2, s.v.Name)
		return s.form.setFocus(2)
	}
	s.working = true
	b, ctx, dir := s.c.backend, s.c.ctx, s.v.CipherDir
	oldB, newB := []byte(old), []byte(pw)
	return func() tea.Msg {
		backup, err := b.ChangePassword(ctx, dir, oldB, newB)
		crypto.Wipe(oldB)
		crypto.Wipe(newB)
		return passwdChanged{backup: backup, err: err}
	}
}

func (s *passwdScreen) View() string {
	return s.c.para("The files stay as they are: only the config's encrypted copy of the master key changes. Mounted vaults keep running.") +
		"\n\n" + s.form.View() + s.footer("Changing the password (scrypt)…")
}
