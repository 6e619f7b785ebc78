package ui

import (
	"errors"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/internal/termsafe"
)

// passwordNeeded reports whether err is the core asking for the vault's password (it tried
// the keyring's first: see package app), and what to tell the user about the keyring, if
// anything: a stored password that stopped working, or a keyring that is there but could
// not be used. No keyring at all, or none stored, is no news.
func passwordNeeded(err error) (note string, needed bool) {
	var need *app.PasswordNeededError
	if !errors.As(err, &need) {
		return "", false
	}
	switch {
	case need.Reason == app.StoredFailed:
		return "The password stored in the keyring does not unlock this vault (changed since?). Type it: it replaces the stored one.", true
	case need.Reason == app.KeyringUnavailable:
		if why, news := app.KeyringTrouble(need.Err); news {
			return "The keyring could not be used: " + termsafe.Escape(why) + ". Type the password.", true
		}
	}
	return "", true
}

// passwordPrompt is the prompt of a screen whose work tries the keyring's password first
// (fsck, convert, conflicts): one password field, asked only when the core needs it.
type passwordPrompt struct{ *form }

func newPasswordPrompt(c *common) passwordPrompt {
	return passwordPrompt{newForm(c, passwordField("Password"))}
}

// retry reports whether err asks for the password (again): the keyring's did not do, or the
// one typed was wrong. It then says why in *msg and focuses the prompt, emptied after a
// wrong password.
func (p passwordPrompt) retry(err error, msg *string) (tea.Cmd, bool) {
	note, needed := passwordNeeded(err)
	switch {
	case needed:
		*msg = note
	case errors.Is(err, ErrWrongPassword):
		*msg = "Wrong password. Try again."
		p.fields[0].input.Reset()
	default:
		return nil, false
	}
	return p.setFocus(0), true
}

// submit empties the prompt and runs with what was typed; for nothing, *msg says so.
func (p passwordPrompt) submit(msg *string, run func(pw []byte) tea.Cmd) tea.Cmd {
	pw := []byte(p.value(0))
	if len(pw) == 0 {
		*msg = "Type the vault's password."
		return nil
	}
	p.fields[0].input.Reset()
	return run(pw)
}
