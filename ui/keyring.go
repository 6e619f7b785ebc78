package ui

import (
	"context"
	"fmt"

	"github.com/vaultui/vaultui/mountmgr/keyring"
)

// StoredPassword asks the keyring whether it holds the vault's password.
func (b *realBackend) StoredPassword(ctx context.Context, cipherDir string) (bool, error) {
	k, err := keyring.Open(ctx, keyring.Options{})
	if err != nil {
		return false, err
	}
	defer k.Close()
	return k.Has(ctx, cipherDir)
}

// storedPassword reads the vault's password from the keyring; the caller wipes it.
func storedPassword(ctx context.Context, cipherDir string) ([]byte, error) {
	k, err := keyring.Open(ctx, keyring.Options{})
	if err != nil {
		return nil, err
	}
	defer k.Close()
	return k.Get(ctx, cipherDir)
}

// rememberPassword stores req's password after a mount and says how that went.
func rememberPassword(ctx context.Context, req MountRequest) string {
	k, err := keyring.Open(ctx, keyring.Options{})
	if err == nil {
		defer k.Close()
		err = k.Set(ctx, req.CipherDir, fmt.Sprintf("vaultui: %s (%s)", req.Name, req.CipherDir), req.Password)
	}
	if err != nil {
		return "The password was not remembered: " + err.Error()
	}
	return "Password stored in the keyring."
}
