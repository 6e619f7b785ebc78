package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/mountmgr/extpass"
	"github.com/vaultui/vaultui/vault"
)

// RunPasswordProgram runs a password program (gocryptfs's -extpass; see mountmgr/extpass)
// with the front end's terminal and messages (Options.PasswordPrograms) and returns the
// password it printed, for the caller to wipe. A front end gives a program named on its
// command line here, and passes the password on as one the user gave.
func (a *App) RunPasswordProgram(ctx context.Context, argv []string) ([]byte, error) {
	return extpass.Run(ctx, argv, a.opts.PasswordPrograms)
}

// fromProgram is withPassword's source for a vault whose registry entry names a password
// program: that program's password is tried instead of the keyring's. When the program fails
// or its password does not unlock the vault, the *PasswordNeededError says so
// (ProgramFailed), and the front end may ask the user instead.
func (a *App) fromProgram(ctx context.Context, v Vault, try func(pw []byte) error) error {
	pw, err := a.RunPasswordProgram(ctx, v.ExtPass)
	if err != nil {
		return &PasswordNeededError{Vault: v, Reason: ProgramFailed, Err: err}
	}
	defer crypto.Wipe(pw)
	err = try(pw)
	if errors.Is(err, vault.ErrWrongPassword) {
		return &PasswordNeededError{Vault: v, Reason: ProgramFailed, Err: err}
	}
	return err
}

func (e *PasswordNeededError) programError() string {
	prog := extpass.String(e.Vault.ExtPass)
	if errors.Is(e.Err, vault.ErrWrongPassword) {
		return fmt.Sprintf("the password from the password program of %s (%s) does not unlock it", e.Vault.display(), prog)
	}
	return fmt.Sprintf("no password from the password program of %s: %v", e.Vault.display(), e.Err)
}
