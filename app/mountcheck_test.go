package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/mountmgr"
)

// TestMountChecksBeforeThePassword: a mount that cannot work for a reason seen without the
// password (a mount point with files in it, a vault mounted already, under another spelling
// of its path) fails before the keyring, a password program or the daemon is asked: a user
// typing the password would type it for nothing.
func TestMountChecksBeforeThePassword(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cipherDir := filepath.Join(dir, "work.enc")
	full := filepath.Join(dir, "full")
	empty := filepath.Join(dir, "empty")
	for _, d := range []string{cipherDir, full, empty} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(full, "note.txt"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(cipherDir, filepath.Join(dir, "alias.enc")); err != nil {
		t.Fatal(err)
	}
	asked := 0
	a := New(Options{
		Keyring: func(context.Context) (Keyring, error) { asked++; return nil, errors.New("keyring asked") },
		Connect: func(context.Context) (Daemon, error) { asked++; return nil, errors.New("daemon asked") },
	})
	a.kernelMounts = func() ([]mountmgr.MountInfo, error) { return nil, nil }
	v := Vault{Name: "work", CipherDir: cipherDir}

	err := a.CheckMount(MountRequest{Vault: v, MountPoint: full})
	if !errors.Is(err, mountmgr.ErrMountpoint) || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("a mount point with a file in it: %v", err)
	}
	if _, err := a.Mount(ctx, MountRequest{Vault: v, MountPoint: full}); !errors.Is(err, mountmgr.ErrMountpoint) {
		t.Errorf("Mount at a mount point with a file in it: %v", err)
	}
	if err := a.CheckMount(MountRequest{Vault: v, MountPoint: empty}); err != nil {
		t.Errorf("an empty mount point: %v", err)
	}
	if err := a.CheckMount(MountRequest{Vault: v, MountPoint: filepath.Join(dir, "new", "mp")}); err != nil {
		t.Errorf("a missing mount point (Mount creates it): %v", err)
	}

	a.kernelMounts = func() ([]mountmgr.MountInfo, error) {
		return []mountmgr.MountInfo{{CipherDir: filepath.Join(dir, "alias.enc"), MountPoint: "/m/work"}}, nil
	}
	err = a.CheckMount(MountRequest{Vault: v, MountPoint: empty})
	if !errors.Is(err, mountmgr.ErrAlreadyMounted) || !strings.Contains(err.Error(), "/m/work") {
		t.Errorf("a vault mounted already (by another path): %v", err)
	}
	if _, err := a.Mount(ctx, MountRequest{Vault: v, MountPoint: empty}); !errors.Is(err, mountmgr.ErrAlreadyMounted) {
		t.Errorf("Mount of a vault mounted already: %v", err)
	}
	if asked != 0 {
		t.Errorf("the keyring or the daemon was asked %d times before the checks failed", asked)
	}
}
