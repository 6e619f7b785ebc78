package ui

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/keyring"
	"github.com/vaultui/vaultui/keyring/keyringtest"
	"github.com/vaultui/vaultui/vault"
)

// TestRealBackendKeyring runs the TUI's backend against a real Secret Service: p (change
// password) updates the keyring's entry in the same step (it left the old one, so the next
// mount failed once), and f without a typed password checks the vault with the keyring's.
func TestRealBackendKeyring(t *testing.T) {
	keyringtest.StartService(t)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "v.crypt")
	if _, err := vault.Create(context.Background(), dir, []byte("old"), vault.CreateOptions{ScryptLogN: 10}); err != nil {
		t.Fatal(err)
	}
	k, err := keyring.Open(ctx, keyring.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if err := k.Set(ctx, dir, keyring.Label("v", dir), []byte("old")); err != nil {
		t.Fatal(err)
	}
	b := &realBackend{app: app.New(app.Options{Registry: filepath.Join(t.TempDir(), "vaults.json")})}
	defer b.Close()

	if _, err := b.Fsck(ctx, dir, nil, func(vault.FsckProgress) {}); err != nil {
		t.Fatalf("fsck with the keyring's password: %v", err)
	}
	if _, err := b.ChangePassword(ctx, dir, []byte("old"), []byte("new")); err != nil {
		t.Fatal(err)
	}
	pw, err := k.Get(ctx, dir)
	if err != nil || string(pw) != "new" {
		t.Fatalf("after p the keyring holds %q (%v), want the new password", pw, err)
	}
	if _, err := b.Fsck(ctx, dir, nil, func(vault.FsckProgress) {}); err != nil {
		t.Fatalf("fsck after p with the keyring's password: %v", err)
	}

	// Changed behind the keyring's back: the core says so instead of failing as a wrong password.
	if _, err := vault.ChangePassword(context.Background(), dir, vault.PasswordChange{OldPassword: []byte("new"), NewPassword: []byte("newer")}); err != nil {
		t.Fatal(err)
	}
	_, err = b.Fsck(ctx, dir, nil, func(vault.FsckProgress) {})
	var need *app.PasswordNeededError
	if !errors.As(err, &need) || need.Reason != app.StoredFailed {
		t.Fatalf("stale stored password: %v, want app.PasswordNeededError{StoredFailed}", err)
	}
}
