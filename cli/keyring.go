package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/keyring"
	"github.com/vaultui/vaultui/registry"
)

// keyringStatus says in a few words whether a password is stored for the vault, for info.
func keyringStatus(e *env, entry registry.Entry) string {
	ctx, cancel := context.WithTimeout(e.ctx, 5*time.Second)
	defer cancel()
	has, err := e.app.HasStoredPassword(ctx, app.VaultOf(entry))
	switch {
	case err != nil:
		why, _ := app.KeyringTrouble(err) // the reason alone: "no D-Bus session bus"
		return "unavailable: " + why
	case has:
		return "password stored (vaultui mount uses it; vaultui forget-password removes it)"
	}
	return "no password stored"
}

// withPassword runs a use case that needs the vault's password (see package app): with the
// one from the source the user named (--passfile, --extpass) when there is one; else first
// with none (the core tries the vault's password program, or the keyring's), then, when the
// core says why that is not enough, with one asked on the terminal, once. It says what
// became of the keyring entry.
func (e *env) withPassword(entry registry.Entry, src *passSource, run func(pw []byte) (app.KeyringChange, error)) error {
	name := displayName(entry)
	var need *app.PasswordNeededError
	if !src.given() {
		change, err := run(nil)
		if !errors.As(err, &need) {
			e.keyringNote(name, change)
			return err
		}
		switch {
		case need.Reason == app.ProgramFailed:
			// Without a terminal to ask on, what went wrong is the error (and a wrong
			// password its exit code).
			_, _, done, terr := e.terminal()
			if terr != nil {
				return withHint(fmt.Errorf("%s: %w", need.Error(), need.Err),
					`fix the program, or change it with "vaultui edit --extpass", or give --passfile`)
			}
			done()
			fmt.Fprintf(e.stderr, "%s; asking for the password instead\n", need.Error())
		case need.Reason == app.StoredFailed:
			fmt.Fprintf(e.stderr, "The password stored in the keyring for %s does not unlock it (changed since?).\n", name)
		case need.Reason == app.KeyringUnavailable:
			// A keyring that is there but timed out or stayed locked is news; none at all
			// is not, while a terminal can ask.
			if _, news := app.KeyringTrouble(need.Err); news {
				fmt.Fprintf(e.stderr, "note: %v; asking for the password instead\n", need.Err)
			}
		}
	}
	pw, err := e.readPassword(src, fmt.Sprintf("Password for %s: ", name), false)
	if errors.Is(err, errNoTerminal) && need != nil && need.Reason == app.KeyringUnavailable {
		// Nothing else can give the password: the keyring's failure is the news.
		return withHint(fmt.Errorf("%w, and %w", need, errNoTerminal), noTerminalHint)
	}
	if err != nil {
		return err
	}
	defer crypto.Wipe(pw)
	if pw == nil {
		pw = []byte{} // typed, though empty: not "use the keyring's"
	}
	change, err := run(pw)
	e.keyringNote(name, change)
	return err
}

// keyringNote tells what became of the vault's keyring entry.
func (e *env) keyringNote(name string, c app.KeyringChange) {
	switch c.Action {
	case app.KeyringStored:
		fmt.Fprintf(e.stderr, "Stored the password in the keyring for %s.\n", name)
	case app.KeyringReplaced:
		fmt.Fprintf(e.stderr, "Updated the password in the keyring for %s.\n", name)
	case app.KeyringFailed:
		fmt.Fprintf(e.stderr, "note: %v: the password was not stored in the keyring\n", c.Err)
	}
}

var forgetPasswordCommand = &command{
	name:     "forget-password",
	group:    groupMounts,
	summary:  "Remove a vault's password from the desktop keyring",
	args:     "VAULT",
	operands: []string{"VAULT"},
	help: `Removes the password "vaultui mount --remember" stored in the desktop
keyring (Secret Service: gnome-keyring, KWallet, KeePassXC) for VAULT, a
registered name or a cipherdir. The vault itself is not touched; the next
mount asks for the password again.

examples:
  vaultui forget-password work`,
	setup: noFlags(func(e *env, args []string) error {
		entry, err := e.resolve(args[0])
		if err != nil {
			return err
		}
		err = e.app.ForgetPassword(e.ctx, app.VaultOf(entry))
		switch {
		case errors.Is(err, keyring.ErrNotFound):
			return fmt.Errorf("no password stored in the keyring for %s", displayName(entry))
		case errors.Is(err, keyring.ErrUnavailable):
			return withHint(err, "the keyring is reached over the D-Bus session bus of a desktop login; from ssh or a container there is none")
		case err != nil:
			return err
		}
		fmt.Fprintf(e.stdout, "Removed the password of %s from the keyring.\n", displayName(entry))
		return nil
	}),
}
