package ui

import (
	"errors"

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
