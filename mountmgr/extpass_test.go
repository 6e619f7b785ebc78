package mountmgr

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/registry"
	"github.com/vaultui/vaultui/vault"
)

// TestAutomountWithExtPass: without any keyring, the automount vaults whose registry entry
// names a password program are mounted with its password; a program that fails is an event
// naming its exit status and stderr, and neither the events nor the log hold the password.
func TestAutomountWithExtPass(t *testing.T) {
	base := daemonEnv(t)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+filepath.Join(base, "nobus"))
	t.Setenv(testAutomountEnv, "1")
	okDir, okMP, okPW := newVault(t, base, crypto.AESGCM)
	badDir, badMP, _ := newVault(t, base, crypto.AESGCM)
	pwFile := filepath.Join(base, "pw")
	if err := os.WriteFile(pwFile, append(okPW, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	failing := filepath.Join(base, "failing.sh")
	if err := os.WriteFile(failing, []byte("#!/bin/sh\necho 'no such entry' >&2\nexit 3\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	regPath, _ := registry.DefaultPath()
	_, err := registry.Update(regPath, func(r *registry.Registry) error {
		return errors.Join(
			r.Add(registry.Entry{Name: "ok", CipherDir: okDir, MountPoint: okMP, MountAtStart: true, ExtPass: []string{"cat", pwFile}}),
			r.Add(registry.Entry{Name: "bad", CipherDir: badDir, MountPoint: badMP, MountAtStart: true, ExtPass: []string{failing}}))
	})
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t)
	var evs []Event
	for deadline := time.Now().Add(20 * time.Second); len(evs) < 2; time.Sleep(100 * time.Millisecond) {
		if evs, err = c.Events(ctx(t), 0); time.Now().After(deadline) {
			t.Fatalf("automount events after 20 s: %+v, %v", evs, err)
		}
	}
	byDir := map[string]Event{}
	for _, e := range evs {
		byDir[e.CipherDir] = e
	}
	if e := byDir[okDir]; e.Kind != EventMounted {
		t.Errorf("vault with a password program: %+v, want mounted", e)
	}
	if e := byDir[badDir]; e.Kind != EventMountFailed || !strings.Contains(e.Detail, "exited with status 3: no such entry") {
		t.Errorf("vault whose program fails: %+v", e)
	}
	if err := c.Unmount(ctx(t), okMP, false); err != nil {
		t.Fatal(err)
	}
	stopDaemon(t)
	log, _ := os.ReadFile(filepath.Join(base, "state", "vaultui", "daemon.log"))
	if bytes.Contains(log, okPW) {
		t.Errorf("the daemon log holds the password:\n%s", log)
	}
}

// TestMountMasterKey: a mount request with the master key instead of a password mounts the
// vault; a wrong key is a wrong password; a vault too empty to check the key mounts only
// read-only, with a notice.
func TestMountMasterKey(t *testing.T) {
	base := daemonEnv(t)
	dir, mp, pw, key := newVaultKey(t, base)
	c := connect(t)
	// Give the vault a file whose content authenticates the key.
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: dir, MountPoint: mp, Password: pw}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mp, "f"), []byte("recovered"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := c.Unmount(ctx(t), mp, false); err != nil {
		t.Fatal(err)
	}

	wrong := bytes.Repeat([]byte{7}, len(key))
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: dir, MountPoint: mp, MasterKey: wrong, ReadOnly: true}); !errors.Is(err, vault.ErrWrongPassword) {
		t.Fatalf("a wrong master key: %v", err)
	}
	info, err := c.Mount(ctx(t), MountRequest{CipherDir: dir, MountPoint: mp, MasterKey: bytes.Clone(key), ReadOnly: true})
	if err != nil || !info.ReadOnly {
		t.Fatalf("mount with the master key: %+v, %v", info, err)
	}
	if b, err := os.ReadFile(filepath.Join(mp, "f")); err != nil || string(b) != "recovered" {
		t.Fatalf("reading through the master key mount: %q, %v", b, err)
	}
	if err := c.Unmount(ctx(t), mp, false); err != nil {
		t.Fatal(err)
	}

	emptyDir, emptyMP, _, emptyKey := newVaultKey(t, base)
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: emptyDir, MountPoint: emptyMP, MasterKey: bytes.Clone(emptyKey)}); !errors.Is(err, vault.ErrKeyUnverifiable) {
		t.Fatalf("read-write with a key that cannot be checked: %v", err)
	}
	info, err = c.Mount(ctx(t), MountRequest{CipherDir: emptyDir, MountPoint: emptyMP, MasterKey: emptyKey, ReadOnly: true})
	if err != nil || !strings.Contains(info.Notice, "too little to verify the master key") {
		t.Fatalf("read-only with a key that cannot be checked: %+v, %v", info, err)
	}
	if err := c.Unmount(ctx(t), emptyMP, false); err != nil {
		t.Fatal(err)
	}
}

// newVaultKey is newVault that also returns the master key (the daemon wipes each request's).
func newVaultKey(t *testing.T, base string) (cipherdir, mountpoint string, password, key []byte) {
	t.Helper()
	cipherdir, err := os.MkdirTemp(base, "cipher")
	if err != nil {
		t.Fatal(err)
	}
	password = []byte("correct horse")
	if key, err = vault.Create(context.Background(), cipherdir, password, vault.CreateOptions{Cipher: crypto.AESGCM, ScryptLogN: crypto.MinScryptLogN}); err != nil {
		t.Fatal(err)
	}
	if mountpoint, err = os.MkdirTemp(base, "mnt"); err != nil {
		t.Fatal(err)
	}
	return cipherdir, mountpoint, password, key
}
