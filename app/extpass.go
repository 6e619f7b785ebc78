package app

import (
	"context"
	"errors"
	"fmt"

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

func (e *PasswordNeededError) programError() string {
	prog := extpass.String(e.Vault.ExtPass)
	if errors.Is(e.Err, vault.ErrWrongPassword) {
		return fmt.Sprintf("the password from the password program of %s (%s) does not unlock it", e.Vault.display(), prog)
	}
	return fmt.Sprintf("no password from the password program of %s: %v", e.Vault.display(), e.Err)
}
