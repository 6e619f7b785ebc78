package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/mountmgr/extpass"
	"github.com/vaultui/vaultui/vault"
)

// recordingDaemon is fakeDaemon that keeps the last mount request, and mounts with the
// master key "key" too.
type recordingDaemon struct {
	fakeDaemon
	last mountmgr.MountRequest
}

func (d *recordingDaemon) Mount(ctx context.Context, r mountmgr.MountRequest) (mountmgr.MountInfo, error) {
	d.last = r
	if string(r.MasterKey) == "key" {
		return mountmgr.MountInfo{CipherDir: r.CipherDir, MountPoint: r.MountPoint, ReadOnly: r.ReadOnly}, nil
	}
	return d.fakeDaemon.Mount(ctx, r)
}

// program writes a shell script and returns it as a password program; ran says whether it
// has run since.
func program(t *testing.T, body string) (argv []string, ran func() bool) {
	t.Helper()
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	p := filepath.Join(dir, "pw.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\ntouch "+marker+"\n"+body+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	return []string{p}, func() bool {
		_, err := os.Stat(marker)
		os.Remove(marker)
		return err == nil
	}
}

// TestMountPasswordProgramOrder: the vault's own password program comes before the keyring
// (not even opened), a password given by the user before the program (not even run); a
// program that fails or gives a wrong password is a ProgramFailed need saying which.
func TestMountPasswordProgramOrder(t *testing.T) {
	ctx := context.Background()
	k := &fakeKeyring{entries: map[string]string{"/data/w": "stale"}, labels: map[string]string{}, down: true}
	d := &fakeDaemon{password: "pw"}
	a := newTestApp(k, d)
	good, ran := program(t, "echo pw")
	v := Vault{Name: "w", CipherDir: "/data/w", ExtPass: good}
	req := MountRequest{Vault: v, MountPoint: t.TempDir()}
	if _, err := a.Mount(ctx, req); err != nil || !ran() {
		t.Fatalf("with the vault's program (keyring down): %v, ran %v", err, ran())
	}
	req.Password = []byte("pw")
	if _, err := a.Mount(ctx, req); err != nil || ran() {
		t.Fatalf("a given password goes first: %v; the program must not run", err)
	}

	req.Password = nil
	req.Vault.ExtPass, _ = program(t, "echo wrong")
	_, err := a.Mount(ctx, req)
	var need *PasswordNeededError
	if !errors.As(err, &need) || need.Reason != ProgramFailed || !errors.Is(need.Err, vault.ErrWrongPassword) || errors.Is(err, vault.ErrWrongPassword) {
		t.Fatalf("a program's wrong password: %v", err)
	}
	req.Vault.ExtPass, _ = program(t, "echo 'locked database' >&2; exit 1")
	_, err = a.Mount(ctx, req)
	if !errors.As(err, &need) || need.Reason != ProgramFailed || !errors.Is(need.Err, extpass.ErrFailed) {
		t.Fatalf("a failing program: %v", err)
	}
	t.Log(err)
}

// TestMountMasterKeyReadOnly: a master key mount skips every password source and is
// read-only unless asked.
func TestMountMasterKeyReadOnly(t *testing.T) {
	ctx := context.Background()
	k := &fakeKeyring{entries: map[string]string{}, labels: map[string]string{}, down: true}
	d := &recordingDaemon{fakeDaemon: fakeDaemon{password: "pw"}}
	a := New(Options{Keyring: k.open, Connect: func(context.Context) (Daemon, error) { return d, nil }})
	failing, ran := program(t, "exit 1")
	req := MountRequest{Vault: Vault{CipherDir: "/data/w", ExtPass: failing}, MountPoint: t.TempDir(), MasterKey: []byte("key")}
	m, err := a.Mount(ctx, req)
	if err != nil || !m.ReadOnly || !d.last.ReadOnly || d.last.Password != nil || ran() {
		t.Fatalf("master key mount: %+v, %v, request %+v, program ran %v", m, err, d.last, ran())
	}
	req.ReadWrite = true
	if m, err := a.Mount(ctx, req); err != nil || m.ReadOnly {
		t.Fatalf("master key mount with ReadWrite: %+v, %v", m, err)
	}
}
