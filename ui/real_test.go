package ui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/registry"
	"github.com/vaultui/vaultui/vault"
)

// TestRealBackendVaults exercises the real adapter on the real vault
// package in temp dirs: everything but mounting (the end-to-end test does
// that).
func TestRealBackendVaults(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("HOME", filepath.Join(tmp, "home"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(tmp, "config"))
	b := newRealBackend()
	defer b.Close()
	ctx := context.Background()

	dir := filepath.Join(tmp, "v.crypt")
	if err := b.CheckNewCipherDir(dir); err != nil {
		t.Fatalf("a new folder is refused: %v", err)
	}
	// The folder step takes a folder below missing ones, which create makes, as the mount
	// point step does (it refused them).
	if err := b.CheckNewCipherDir(filepath.Join(tmp, "missing", "v.crypt")); err != nil {
		t.Fatalf("a folder whose parent is missing is refused: %v", err)
	}
	if _, err := os.Stat(filepath.Join(tmp, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the check made a folder")
	}
	full := filepath.Join(tmp, "full")
	os.MkdirAll(full, 0o700)
	os.WriteFile(filepath.Join(full, "x"), nil, 0o600)
	if err := b.CheckNewCipherDir(full); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("a non-empty folder: %v, want ErrNotEmpty", err)
	}

	mp := b.DefaultMountPoint("v")
	if mp != filepath.Join(tmp, "home", "Vaults", "v") {
		t.Fatalf("default mount point %q", mp)
	}
	req := app.NewVault{Name: "v", CipherDir: dir, MountPoint: mp, Options: vault.CreateOptions{Cipher: "aes-gcm", ScryptLogN: 10, LongNameMax: 255}}
	key, err := b.CreateVault(ctx, req, []byte("pw one"))
	if err != nil {
		t.Fatal(err)
	}
	if len(key) != 32 {
		t.Fatalf("master key of %d bytes", len(key))
	}
	if st, err := os.Stat(mp); err != nil || !st.IsDir() {
		t.Fatalf("mount point not created: %v", err)
	}
	vs, err := b.Vaults()
	if err != nil || len(vs) != 1 || vs[0].Name != "v" || vs[0].Cipher != "AES-256-GCM" || vs[0].Problem != "" {
		t.Fatalf("Vaults() = %+v, %v", vs, err)
	}

	// A duplicate name is refused before anything is written.
	dir2 := filepath.Join(tmp, "w.crypt")
	req2 := req
	req2.CipherDir = dir2
	if _, err := b.CreateVault(ctx, req2, []byte("pw one")); err == nil {
		t.Fatal("a duplicate name was accepted")
	}
	if _, err := os.Stat(dir2); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the refused vault left %s behind (%v)", dir2, err)
	}

	fields, err := b.Info(ctx, registry.Entry{CipherDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(fields); !strings.Contains(got, "AES-256-GCM") || !strings.Contains(got, "N=2^10") {
		t.Fatalf("info fields %v", got)
	}

	if _, err := b.ChangePassword(ctx, dir, []byte("wrong"), []byte("pw two")); !errors.Is(err, ErrWrongPassword) {
		t.Fatalf("wrong old password: %v, want ErrWrongPassword", err)
	}
	if _, err := b.ChangePassword(ctx, dir, []byte("pw one"), []byte("pw two")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Fsck(ctx, dir, []byte("pw one"), func(vault.FsckProgress) {}); !errors.Is(err, ErrWrongPassword) {
		t.Fatalf("fsck with the old password: %v, want ErrWrongPassword", err)
	}
	problems, err := b.Fsck(ctx, dir, []byte("pw two"), func(vault.FsckProgress) {})
	if err != nil || len(problems) != 0 {
		t.Fatalf("fsck of a new vault: %v, %v", problems, err)
	}

	if _, _, err := b.AddVault(ctx, app.NewEntry{Name: "nope", CipherDir: full, MountPoint: mp}); err == nil {
		t.Fatal("a folder without a config was added")
	}
	if err := b.Forget("v"); err != nil {
		t.Fatal(err)
	}
	if vs, _ := b.Vaults(); len(vs) != 0 {
		t.Fatalf("still registered: %+v", vs)
	}
	if _, err := os.Stat(filepath.Join(dir, "gocryptfs.conf")); err != nil {
		t.Fatalf("forget touched the files: %v", err)
	}
	if _, _, err := b.AddVault(ctx, app.NewEntry{Name: "again", CipherDir: dir, MountPoint: mp}); err != nil {
		t.Fatalf("adding the vault back: %v", err)
	}
	if vs, _ := b.Vaults(); len(vs) != 1 || vs[0].Name != "again" {
		t.Fatalf("after add: %+v", vs)
	}
}

// TestRealBackendCreateOptions checks that the wizard's advanced options
// reach the vault's config.
func TestRealBackendCreateOptions(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("HOME", filepath.Join(tmp, "home"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(tmp, "config"))
	b := newRealBackend()
	ctx := context.Background()
	for _, c := range []struct {
		req  app.NewVault
		want []string
	}{
		{app.NewVault{Name: "plain", Options: vault.CreateOptions{Cipher: "xchacha", PlaintextNames: true}}, []string{"XChaCha20-Poly1305", "plaintext"}},
		{app.NewVault{Name: "det", Options: vault.CreateOptions{Cipher: "aes-siv", DeterministicNames: true, LongNameMax: 100}}, []string{"AES-SIV-512", "deterministic", "over 100"}},
	} {
		req := c.req
		req.CipherDir = filepath.Join(tmp, req.Name)
		req.MountPoint = filepath.Join(tmp, req.Name+".mnt")
		req.Options.ScryptLogN = 10
		if _, err := b.CreateVault(ctx, req, []byte("pw")); err != nil {
			t.Fatalf("%s: %v", req.Name, err)
		}
		fields, err := b.Info(ctx, registry.Entry{CipherDir: req.CipherDir})
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprint(fields)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: info %s lacks %q", req.Name, got, w)
			}
		}
	}
}

func TestRealBackendCiphers(t *testing.T) {
	b := testBackend()
	got := fmt.Sprint(b.Ciphers())
	for _, want := range []string{"AES-256-GCM", "AEGIS-256X2", "XChaCha20-Poly1305", "AES-SIV-512"} {
		if !strings.Contains(got, want) {
			t.Errorf("Ciphers() = %s, lacks %s", got, want)
		}
	}
}

func TestEscapedKeepsSentinels(t *testing.T) {
	for _, c := range []struct{ lib, ui error }{
		{vault.ErrWrongPassword, ErrWrongPassword},
		{mountmgr.ErrBusy, ErrBusy},
		{mountmgr.ErrMountpoint, ErrMountpoint},
		{mountmgr.ErrAlreadyMounted, ErrAlreadyMounted},
		{mountmgr.ErrDaemon, ErrDaemon},
	} {
		err := escaped(fmt.Errorf("/some/path: %w", c.lib))
		if !errors.Is(err, c.ui) || !errors.Is(err, c.lib) {
			t.Errorf("escaped(%v) loses a sentinel", c.lib)
		}
		if err.Error() != "/some/path: "+c.lib.Error() {
			t.Errorf("escaped changed the message to %q", err)
		}
	}
	plain := errors.New("other")
	if err := escaped(plain); !errors.Is(err, plain) || err.Error() != "other" || escaped(nil) != nil {
		t.Error("escaped changed an unrelated error")
	}
	// Text from a vault (names, config fields) is shown escaped.
	evil := escaped(fmt.Errorf("/v/[2Jname‮: %w", vault.ErrCorrupt))
	if !errors.Is(evil, vault.ErrCorrupt) || evil.Error() != `/v/\x1b[2Jname\u202e: `+vault.ErrCorrupt.Error() {
		t.Errorf("escaped shows %q", evil)
	}
}

// TestRealBackendInfoEscapes: the info screen shows a hostile config's Creator escaped.
func TestRealBackendInfoEscapes(t *testing.T) {
	dir := t.TempDir()
	if _, err := vault.Create(context.Background(), dir, []byte("pw"), vault.CreateOptions{ScryptLogN: 10, Creator: "x\x1b]0;owned\x07\u202e"}); err != nil {
		t.Fatal(err)
	}
	fields, err := testBackend().Info(context.Background(), registry.Entry{CipherDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fields {
		if strings.ContainsAny(f.Value, "\x1b\x07\u202e") {
			t.Errorf("field %s shows raw control characters: %q", f.Label, f.Value)
		}
	}
}

// TestInfoFieldsNameWhoOpensTheVault: the info screen says who opens a vault, and an AEGIS
// vault's format is not just "gocryptfs".
func TestInfoFieldsNameWhoOpensTheVault(t *testing.T) {
	field := func(fs []vault.Fact, label string) string {
		for _, f := range fs {
			if f.Label == label {
				return f.Value
			}
		}
		return ""
	}
	ae := app.Describe(vault.Info{Cipher: crypto.AEGIS, CipherName: "AEGIS-256X2", Version: 2, Creator: "vaultui"})
	if o := field(ae, "Opens in"); !strings.Contains(o, "vaultui only") || !strings.Contains(o, "AEGIS256X2") {
		t.Errorf("AEGIS opens in %q", o)
	}
	if f := field(ae, "Format"); !strings.Contains(f, "AEGIS256X2") || !strings.Contains(f, "only in vaultui") {
		t.Errorf("AEGIS format %q", f)
	}
	gcm := app.Describe(vault.Info{Cipher: crypto.AESGCM, CipherName: "AES-256-GCM", Version: 2, Creator: "gocryptfs v2.4"})
	if o := field(gcm, "Opens in"); !strings.Contains(o, "gocryptfs") || !strings.Contains(o, "cppcryptfs") {
		t.Errorf("GCM opens in %q", o)
	}
}
