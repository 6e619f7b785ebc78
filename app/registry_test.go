package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/registry"
	"github.com/vaultui/vaultui/vault"
)

var errNoLogind = errors.New("no system bus")

// registryApp is an App over a registry in a temporary HOME, on a machine without logind
// (lock policies cannot work) when noLogind.
func registryApp(t *testing.T, noLogind bool) (*App, string) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	works := func(context.Context) error { return nil }
	if noLogind {
		works = func(context.Context) error { return errNoLogind }
	}
	d := &fakeDaemon{}
	a := New(Options{Registry: filepath.Join(home, "vaults.json"), LockPolicyWorks: works,
		Connect: func(context.Context) (Daemon, error) { return d, nil }})
	return a, home
}

func TestDefaultName(t *testing.T) {
	for dir, want := range map[string]string{
		"/s/work.enc": "work", "/s/.hidden.crypt": "hidden", "/s/Private": "Private", "/s/...": "vault", "/s/a.b.c": "a.b",
	} {
		if got := DefaultName(dir); got != want {
			t.Errorf("DefaultName(%q) = %q, want %q", dir, got, want)
		}
	}
}

// TestVaultAtFindsTheRegisteredVault: the TUI names a vault by its folder; the use cases
// then need its registered name, password program and accepted key derivation cost. Before,
// VaultAt looked the folder up as a name and never found it.
func TestVaultAtFindsTheRegisteredVault(t *testing.T) {
	ctx := context.Background()
	a, home := registryApp(t, true)
	dir := filepath.Join(home, "Sync", "work.enc")
	os.MkdirAll(filepath.Dir(dir), 0o700)
	c, err := a.Create(ctx, NewVault{Name: "office", CipherDir: dir, Options: vault.CreateOptions{Cipher: crypto.AESGCM, ScryptLogN: 10}}, []byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	crypto.Wipe(c.MasterKey)
	if v := a.VaultAt(dir); v.Name != "office" || v.CipherDir != dir || v.MountPoint != c.Entry.MountPoint {
		t.Errorf("VaultAt(%s) = %+v, want the registered vault office", dir, v)
	}
	other := filepath.Join(home, "elsewhere")
	if v := a.VaultAt(other); v.Name != "" || v.CipherDir != other {
		t.Errorf("VaultAt(%s) = %+v, want only its folder", other, v)
	}
}

// TestCreateDefaults: a new vault takes its name from the folder, its mount point from the
// name, lock never with a note where the lock policies cannot work; the mount point is made
// and the vault registered; the master key is returned.
func TestCreateDefaults(t *testing.T) {
	ctx := context.Background()
	a, home := registryApp(t, true)
	dir := filepath.Join(home, "Sync", "work.enc")
	os.MkdirAll(filepath.Dir(dir), 0o700)
	c, err := a.Create(ctx, NewVault{CipherDir: dir, Options: vault.CreateOptions{Cipher: crypto.AESGCM, ScryptLogN: 10}}, []byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	defer crypto.Wipe(c.MasterKey)
	want := registry.Entry{Name: "work", CipherDir: dir, MountPoint: filepath.Join(home, "Vaults", "work"), Lock: registry.LockNever}
	if c.Entry.Name != want.Name || c.Entry.CipherDir != want.CipherDir || c.Entry.MountPoint != want.MountPoint || c.Entry.Lock != want.Lock || len(c.MasterKey) != 32 || !errors.Is(c.LockNote, errNoLogind) || c.NotRegistered != nil || c.MountPointErr != nil {
		t.Fatalf("created %+v, key %d bytes, lock note %v", c.Entry, len(c.MasterKey), c.LockNote)
	}
	if fi, err := os.Stat(want.MountPoint); err != nil || !fi.IsDir() {
		t.Fatalf("mount point: %v", err)
	}
	reg, _ := a.Registry()
	if e, ok := reg.Lookup("work"); !ok || e.Lock != registry.LockNever {
		t.Fatalf("registered %+v %v", e, ok)
	}

	// With logind, the default is sleep, and no note.
	a2, _ := registryApp(t, false)
	e, note, err := a2.CheckCreate(ctx, NewVault{CipherDir: filepath.Join(t.TempDir(), "x")})
	if err != nil || e.Lock != registry.LockSleep || note != nil {
		t.Fatalf("with logind: %+v, %v, %v", e, note, err)
	}
}

// TestCreateRefusesBeforePassword: what CheckCreate refuses, Create refuses without writing.
func TestCreateRefusesBeforePassword(t *testing.T) {
	ctx := context.Background()
	a, home := registryApp(t, false)
	existing := filepath.Join(home, "existing")
	if _, err := vault.Create(context.Background(), existing, []byte("pw"), vault.CreateOptions{ScryptLogN: 10}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.CheckCreate(ctx, NewVault{CipherDir: existing}); !errors.Is(err, ErrIsVault) || !errors.Is(err, vault.ErrNotEmpty) {
		t.Fatalf("a folder holding a vault: %v", err)
	}
	full := filepath.Join(home, "full")
	os.MkdirAll(full, 0o700)
	os.WriteFile(filepath.Join(full, "f"), nil, 0o600)
	if _, _, err := a.CheckCreate(ctx, NewVault{CipherDir: full}); !errors.Is(err, vault.ErrNotEmpty) || errors.Is(err, ErrIsVault) {
		t.Fatalf("a full folder: %v", err)
	}
	dir := filepath.Join(home, "new")
	if _, err := a.Create(ctx, NewVault{CipherDir: dir, MountPoint: filepath.Join(dir, "m"), Options: vault.CreateOptions{Cipher: crypto.AESGCM, ScryptLogN: 10}}, []byte("pw")); !errors.Is(err, mountmgr.ErrNested) {
		t.Fatalf("a nested mount point: %v", err)
	}
	if _, err := a.Create(ctx, NewVault{CipherDir: dir, Name: "-bad", Options: vault.CreateOptions{Cipher: crypto.AESGCM, ScryptLogN: 10}}, []byte("pw")); !errors.Is(err, registry.ErrInvalidName) {
		t.Fatalf("a bad name: %v", err)
	}
	// Options that exclude each other: vault's rule, checked before a password is asked.
	both := vault.CreateOptions{PlaintextNames: true, DeterministicNames: true}
	if _, _, err := a.CheckCreate(ctx, NewVault{CipherDir: dir, Options: both}); !errors.Is(err, vault.ErrCreateOptions) || err.Error() != both.Validate().Error() {
		t.Fatalf("plaintext and deterministic names: %v", err)
	}
	both.Cipher, both.ScryptLogN = crypto.AESGCM, 10
	if _, err := a.Create(ctx, NewVault{CipherDir: dir, Options: both}, []byte("pw")); !errors.Is(err, vault.ErrCreateOptions) {
		t.Fatalf("create with plaintext and deterministic names: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a refused create wrote the vault")
	}
}

// TestAddChecksItIsAVault: add takes only a folder holding a vault's config, fills the same
// defaults as create, and says when a chosen lock policy does nothing here.
func TestAddChecksItIsAVault(t *testing.T) {
	ctx := context.Background()
	a, home := registryApp(t, true)
	plain := filepath.Join(home, "plain")
	os.MkdirAll(plain, 0o700)
	if _, err := a.Add(ctx, NewEntry{CipherDir: plain}); !errors.Is(err, ErrNotAVault) {
		t.Fatalf("a plain folder: %v", err)
	}
	dir := filepath.Join(home, "gc.crypt")
	if _, err := vault.Create(context.Background(), dir, []byte("pw"), vault.CreateOptions{Cipher: crypto.XChaCha, ScryptLogN: 10}); err != nil {
		t.Fatal(err)
	}
	ad, err := a.Add(ctx, NewEntry{CipherDir: dir, Lock: registry.LockScreen})
	if err != nil {
		t.Fatal(err)
	}
	if ad.Entry.Name != "gc" || ad.Entry.MountPoint != filepath.Join(home, "Vaults", "gc") || ad.Cipher != crypto.XChaCha ||
		ad.Entry.Lock != registry.LockScreen || ad.LockNote == nil || !strings.Contains(ad.LockNote.Error(), "does nothing here") {
		t.Fatalf("added %+v (%s), lock note %v", ad.Entry, ad.Cipher, ad.LockNote)
	}
	if _, err := a.Add(ctx, NewEntry{CipherDir: dir, Name: "again"}); !errors.Is(err, registry.ErrDuplicate) {
		t.Fatalf("added twice: %v", err)
	}
	list, err := a.List()
	if err != nil || len(list) != 1 || list[0].Cipher != crypto.XChaCha {
		t.Fatalf("list %+v, %v", list, err)
	}
}

// TestEditAndForget: edit changes only what is given, checks a mount point as mount does,
// and names an unknown vault; forget removes only the entry.
func TestEditAndForget(t *testing.T) {
	ctx := context.Background()
	a, home := registryApp(t, true)
	dir := filepath.Join(home, "v")
	if _, err := vault.Create(context.Background(), dir, []byte("pw"), vault.CreateOptions{ScryptLogN: 10}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Add(ctx, NewEntry{CipherDir: dir, Idle: time.Minute}); err != nil {
		t.Fatal(err)
	}
	on, inside := true, filepath.Join(dir, "m")
	if _, err := a.Edit(ctx, "v", Edit{MountPoint: &inside}); !errors.Is(err, mountmgr.ErrNested) {
		t.Fatalf("nested mount point: %v", err)
	}
	ed, err := a.Edit(ctx, "v", Edit{Automount: &on})
	if err != nil || !ed.Entry.MountAtStart || ed.Entry.Idle != time.Minute || ed.LockNote != nil {
		t.Fatalf("automount: %+v, %v", ed, err)
	}
	screen := registry.LockScreen
	if ed, err := a.Edit(ctx, "v", Edit{Lock: &screen}); err != nil || !errors.Is(ed.LockNote, errNoLogind) {
		t.Fatalf("lock: %+v, %v", ed, err)
	}
	neg := -time.Second
	if _, err := a.Edit(ctx, "v", Edit{Idle: &neg}); err == nil {
		t.Fatal("a negative idle time was taken")
	}
	// Shared storage is kept in the registry, and is a mount's default from there.
	if ed, err := a.Edit(ctx, "v", Edit{SharedStorage: &on}); err != nil || !ed.Entry.SharedStorage || !MountFor(ed.Entry).SharedStorage {
		t.Fatalf("shared storage: %+v, %v", ed, err)
	}
	if reg, err := a.Registry(); err != nil || !reg.Vaults[0].SharedStorage {
		t.Fatalf("shared storage after a reload: %+v, %v", reg, err)
	}
	if _, err := a.Edit(ctx, "nosuch", Edit{Automount: &on}); !errors.Is(err, vault.ErrNotFound) {
		t.Fatalf("unknown vault: %v", err)
	}
	if e, err := a.Forget("v"); err != nil || e.CipherDir != dir {
		t.Fatalf("forget: %+v, %v", e, err)
	}
	if _, err := os.Stat(filepath.Join(dir, crypto.ConfName)); err != nil {
		t.Fatal("forget touched the vault")
	}
	if _, err := a.Forget("v"); !errors.Is(err, vault.ErrNotFound) {
		t.Fatalf("forget twice: %v", err)
	}
}

// TestMountFor: the registry's options are a mount's defaults.
func TestMountFor(t *testing.T) {
	e := registry.Entry{Name: "w", CipherDir: "/c", MountPoint: "/m", ReadOnly: true, Idle: time.Hour, Reverse: true, Exclude: []string{"*.iso"}}
	r := MountFor(e)
	if r.Vault.Name != "w" || r.Vault.CipherDir != "/c" || r.MountPoint != "/m" || !r.ReadOnly || r.Idle != time.Hour || r.Password != nil ||
		!r.Reverse || len(r.Exclude) != 1 {
		t.Fatalf("%+v", r)
	}
}

// TestFreeFolder: the suggested folder is the first of ~/Private.crypt, ~/Private2.crypt, ...
// that free accepts, so it never leads to "directory is not empty".
func TestFreeFolder(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	if got, want := FreeFolder(CheckNewCipherDir), filepath.Join(home, "Private.crypt"); got != want {
		t.Fatalf("FreeFolder in an empty home = %q, want %q", got, want)
	}
	for _, d := range []string{"Private.crypt", "Private2.crypt"} {
		if err := os.MkdirAll(filepath.Join(home, d, "x"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(home, "Private3.crypt"), 0o700); err != nil {
		t.Fatal(err)
	}
	if got, want := FreeFolder(CheckNewCipherDir), filepath.Join(home, "Private3.crypt"); got != want {
		t.Fatalf("FreeFolder past two full folders = %q, want the empty %q", got, want)
	}
	if got := FreeFolder(func(string) error { return vault.ErrNotEmpty }); got != "" {
		t.Fatalf("FreeFolder with nothing free = %q", got)
	}
}

// TestFreeName: DefaultName, numbered past the names already taken.
func TestFreeName(t *testing.T) {
	taken := map[string]bool{"work": true, "work2": true}
	if got := FreeName("/data/work.crypt", func(n string) bool { return taken[n] }); got != "work3" {
		t.Fatalf("FreeName = %q, want work3", got)
	}
	if got := FreeName("/data/music.crypt", func(n string) bool { return taken[n] }); got != "music" {
		t.Fatalf("FreeName = %q, want music", got)
	}
}
