package app

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/vaultui/vaultui/keyring"
	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/vault"
)

// fakeKeyring is a keyring in memory; down makes it unreachable, silent makes it there but
// never answering (every call waits for its context, as a hung Secret Service makes the real
// one wait for its call timeout).
type fakeKeyring struct {
	entries map[string]string
	labels  map[string]string
	down    bool
	silent  bool
}

// answer is what a call gets from a silent keyring, once its context ends; nil otherwise.
func (k *fakeKeyring) answer(ctx context.Context) error {
	if !k.silent {
		return nil
	}
	<-ctx.Done()
	return fmt.Errorf("%w: %w", keyring.ErrNoAnswer, ctx.Err())
}

func (k *fakeKeyring) open(context.Context) (Keyring, error) {
	if k.down {
		return nil, fmt.Errorf("%w: no bus", keyring.ErrUnavailable)
	}
	return k, nil
}
func (k *fakeKeyring) Get(ctx context.Context, dir string) ([]byte, error) {
	if err := k.answer(ctx); err != nil {
		return nil, err
	}
	pw, ok := k.entries[dir]
	if !ok {
		return nil, keyring.ErrNotFound
	}
	return []byte(pw), nil
}
func (k *fakeKeyring) Has(ctx context.Context, dir string) (bool, error) {
	if err := k.answer(ctx); err != nil {
		return false, err
	}
	_, ok := k.entries[dir]
	return ok, nil
}
func (k *fakeKeyring) Set(ctx context.Context, dir, label string, pw []byte) error {
	if err := k.answer(ctx); err != nil {
		return err
	}
	k.entries[dir], k.labels[dir] = string(pw), label
	return nil
}
func (k *fakeKeyring) Delete(_ context.Context, dir string) error {
	delete(k.entries, dir)
	return nil
}
func (k *fakeKeyring) Close() error { return nil }

// fakeDaemon mounts when given the vault's password; tries counts the mount requests.
type fakeDaemon struct {
	password string
	tries    int
	mounts   []mountmgr.MountInfo
	busy     map[string]bool // mount points UnmountAll cannot unmount
	events   []mountmgr.Event
}

func (d *fakeDaemon) Mount(_ context.Context, r mountmgr.MountRequest) (mountmgr.MountInfo, error) {
	d.tries++
	if string(r.Password) != d.password {
		return mountmgr.MountInfo{}, fmt.Errorf("%s: %w", r.CipherDir, vault.ErrWrongPassword)
	}
	return mountmgr.MountInfo{CipherDir: r.CipherDir, MountPoint: r.MountPoint, ForceDecode: r.ForceDecode, SharedStorage: r.SharedStorage}, nil
}
func (d *fakeDaemon) Unmount(_ context.Context, target string, _ bool) error {
	for i, m := range d.mounts {
		if m.CipherDir == target || m.MountPoint == target {
			d.mounts = append(d.mounts[:i], d.mounts[i+1:]...)
			return nil
		}
	}
	return fmt.Errorf("%s: %w", target, mountmgr.ErrNotMounted)
}
func (d *fakeDaemon) UnmountAll(context.Context) error {
	var kept []mountmgr.MountInfo
	for _, m := range d.mounts {
		if d.busy[m.MountPoint] {
			kept = append(kept, m)
		}
	}
	d.mounts = kept
	if len(kept) > 0 {
		return fmt.Errorf("%s: %w", kept[0].MountPoint, mountmgr.ErrBusy)
	}
	return nil
}
func (d *fakeDaemon) Status(context.Context) ([]mountmgr.MountInfo, error) {
	return append([]mountmgr.MountInfo(nil), d.mounts...), nil
}
func (d *fakeDaemon) Watch(context.Context, func([]mountmgr.MountInfo)) error { return nil }
func (d *fakeDaemon) Daemon(context.Context) (mountmgr.DaemonInfo, error) {
	return mountmgr.DaemonInfo{}, nil
}
func (d *fakeDaemon) Events(context.Context, uint64) ([]mountmgr.Event, error) { return d.events, nil }
func (d *fakeDaemon) FollowEvents(_ context.Context, _ uint64, each func([]mountmgr.Event)) error {
	each(d.events)
	return nil
}
func (d *fakeDaemon) Stale(context.Context) ([]mountmgr.StaleMount, error) { return nil, nil }
func (d *fakeDaemon) Conflicts(context.Context, string) ([]vault.ConflictEntry, error) {
	return nil, nil
}
func (d *fakeDaemon) SettleConflict(context.Context, string, string, vault.Keep) (vault.Settled, error) {
	return vault.Settled{}, nil
}
func (d *fakeDaemon) Fsck(context.Context, string, func(vault.FsckProgress)) ([]vault.Problem, error) {
	return nil, errors.New("fake daemon: no fsck")
}
func (d *fakeDaemon) Export(context.Context, string, string, vault.ExportOptions) error {
	return errors.New("fake daemon: no export")
}
func (d *fakeDaemon) MapPaths(context.Context, string, bool, []string) ([]mountmgr.PathResult, error) {
	return nil, errors.New("fake daemon: no path mapping")
}
func (d *fakeDaemon) Close() error { return nil }

func newTestApp(k *fakeKeyring, d *fakeDaemon) *App {
	return New(Options{Keyring: k.open, Connect: func(context.Context) (Daemon, error) { return d, nil }})
}

func reason(t *testing.T, err error) NeedReason {
	t.Helper()
	var need *PasswordNeededError
	if !errors.As(err, &need) || !errors.Is(err, ErrPasswordNeeded) {
		t.Fatalf("got %v, want a PasswordNeededError", err)
	}
	if errors.Is(err, vault.ErrWrongPassword) {
		t.Fatal("a password needed is not the user's wrong password")
	}
	return need.Reason
}

// TestMountPasswordSources walks the stateless mount: none stored, stored, stored but stale
// (asked once; the typed one replaces it), remember, and no keyring at all.
func TestMountPasswordSources(t *testing.T) {
	ctx := context.Background()
	k := &fakeKeyring{entries: map[string]string{}, labels: map[string]string{}}
	d := &fakeDaemon{password: "pw"}
	a := newTestApp(k, d)
	v := Vault{Name: "work", CipherDir: "/data/work.crypt"}
	req := MountRequest{Vault: v, MountPoint: t.TempDir()}

	if _, err := a.Mount(ctx, req); reason(t, err) != NoneStored || d.tries != 0 {
		t.Fatalf("none stored: reason %v, %d mount tries", reason(t, err), d.tries)
	}
	req.Password, req.Remember = []byte("pw"), true
	m, err := a.Mount(ctx, req)
	if err != nil || m.Keyring.Action != KeyringStored || k.entries[v.CipherDir] != "pw" {
		t.Fatalf("remember: %+v, %v, keyring %q", m.Keyring, err, k.entries)
	}
	if k.labels[v.CipherDir] != keyring.Label("work", "/data/work.crypt") {
		t.Fatalf("label %q", k.labels[v.CipherDir])
	}
	req.Password, req.Remember = nil, false
	if m, err := a.Mount(ctx, req); err != nil || m.Keyring.Action != KeyringUntouched {
		t.Fatalf("from the keyring: %+v, %v", m.Keyring, err)
	}

	d.password = "changed"
	if _, err := a.Mount(ctx, req); reason(t, err) != StoredFailed {
		t.Fatal("a stale stored password must be reported as such")
	}
	req.Password = []byte("wrong")
	if _, err := a.Mount(ctx, req); !errors.Is(err, vault.ErrWrongPassword) || k.entries[v.CipherDir] != "pw" {
		t.Fatalf("a wrong typed password: %v; keyring %q must stay", err, k.entries)
	}
	req.Password = []byte("changed")
	if m, err := a.Mount(ctx, req); err != nil || m.Keyring.Action != KeyringReplaced || k.entries[v.CipherDir] != "changed" {
		t.Fatalf("the typed password must replace the stale one: %+v, %v, %q", m.Keyring, err, k.entries)
	}
	if m, err := a.Mount(ctx, req); err != nil || m.Keyring.Action != KeyringUntouched {
		t.Fatalf("typing the stored password changes nothing: %+v, %v", m.Keyring, err)
	}

	k.down = true
	req.Password = nil
	if _, err := a.Mount(ctx, req); reason(t, err) != KeyringUnavailable {
		t.Fatal("no keyring must be reported as such")
	}
	req.Password, req.Remember = []byte("changed"), true
	if m, err := a.Mount(ctx, req); err != nil || m.Keyring.Action != KeyringFailed || !errors.Is(m.Keyring.Err, keyring.ErrUnavailable) {
		t.Fatalf("remember without a keyring mounts and says why it was not stored: %+v, %v", m.Keyring, err)
	}
	req.Remember = false
	if m, err := a.Mount(ctx, req); err != nil || m.Keyring.Action != KeyringUntouched {
		t.Fatalf("no keyring and no remember is no news: %+v, %v", m.Keyring, err)
	}
}

// TestMountDoesNotWaitForSilentKeyring: a mount with a typed password and no "remember" asks
// the keyring only whether a stale stored password should be replaced. A keyring that is there
// but does not answer does not hold that mount up for its call timeout: the check gives up
// after followWait. With "remember" the user asked for the keyring, and the answer is waited
// for (here until the caller's context ends), then reported.
func TestMountDoesNotWaitForSilentKeyring(t *testing.T) {
	k := &fakeKeyring{entries: map[string]string{}, labels: map[string]string{}, silent: true}
	d := &fakeDaemon{password: "pw"}
	a := newTestApp(k, d)
	req := MountRequest{Vault: Vault{Name: "work", CipherDir: "/data/work.crypt"}, MountPoint: t.TempDir(), Password: []byte("pw")}
	done := make(chan error, 1)
	go func() {
		m, err := a.Mount(context.Background(), req)
		if err == nil && m.Keyring.Action != KeyringUntouched {
			err = fmt.Errorf("keyring action %v (%v), want untouched", m.Keyring.Action, m.Keyring.Err)
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the mount waited for a keyring that never answers")
	}

	req.Remember = true
	ctx, cancel := context.WithTimeout(context.Background(), 3*followWait)
	defer cancel()
	m, err := a.Mount(ctx, req)
	if err != nil || m.Keyring.Action != KeyringFailed || !errors.Is(m.Keyring.Err, keyring.ErrNoAnswer) {
		t.Fatalf("remember with a silent keyring: %+v, %v; want the mount, and why the password was not stored", m.Keyring, err)
	}
	if ctx.Err() == nil {
		t.Error("with remember the keyring's answer was not waited for")
	}
}

// TestMountRefusesNestingFirst: a mount point inside the cipherdir is refused before the
// keyring or the daemon is asked.
func TestMountRefusesNestingFirst(t *testing.T) {
	k := &fakeKeyring{entries: map[string]string{}, labels: map[string]string{}, down: true}
	d := &fakeDaemon{password: "pw"}
	dir := t.TempDir()
	_, err := newTestApp(k, d).Mount(context.Background(), MountRequest{Vault: Vault{CipherDir: dir}, MountPoint: filepath.Join(dir, "in")})
	if !errors.Is(err, mountmgr.ErrNested) || d.tries != 0 {
		t.Fatalf("got %v after %d tries, want ErrNested first", err, d.tries)
	}
}

// TestChangePasswordUpdatesKeyring: the keyring follows passwd in the same step, and a vault
// with no entry gets none; the same for a Cryptomator vault.
func TestChangePasswordUpdatesKeyring(t *testing.T) {
	for _, cm := range []bool{false, true} {
		t.Run(fmt.Sprint("cryptomator=", cm), func(t *testing.T) { testChangePasswordUpdatesKeyring(t, cm) })
	}
}

func testChangePasswordUpdatesKeyring(t *testing.T, cm bool) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "v")
	if _, err := vault.Create(context.Background(), dir, []byte("old"), vault.CreateOptions{ScryptLogN: 10, Format: formatIf(cm)}); err != nil {
		t.Fatal(err)
	}
	k := &fakeKeyring{entries: map[string]string{}, labels: map[string]string{}}
	a := newTestApp(k, &fakeDaemon{})
	v := Vault{Name: "v", CipherDir: dir}
	c, err := a.ChangePassword(ctx, ChangePasswordRequest{Vault: v, OldPassword: []byte("old"), NewPassword: []byte("new")})
	if err != nil || c.Keyring.Action != KeyringUntouched || len(k.entries) != 0 {
		t.Fatalf("no entry: %+v, %v, %q", c, err, k.entries)
	}
	k.entries[dir] = "new"
	c, err = a.ChangePassword(ctx, ChangePasswordRequest{Vault: v, OldPassword: []byte("new"), NewPassword: []byte("newer")})
	if err != nil || c.Keyring.Action != KeyringReplaced || k.entries[dir] != "newer" {
		t.Fatalf("stored entry: %+v, %v, %q", c, err, k.entries)
	}
	// Then unlocking (fsck, export, conflicts) takes it without asking.
	u, _, err := a.unlockVolume(ctx, v, nil)
	if err != nil {
		t.Fatalf("unlock with the keyring's password: %v", err)
	}
	u.Close()
	if _, err := a.ChangePassword(ctx, ChangePasswordRequest{Vault: v, OldPassword: []byte("wrong"), NewPassword: []byte("x")}); !errors.Is(err, vault.ErrWrongPassword) || k.entries[dir] != "newer" {
		t.Fatalf("a failed passwd must leave the keyring: %v, %q", err, k.entries)
	}
}

// formatIf is the Cryptomator format's ID if cm, else the default format's.
func formatIf(cm bool) string {
	if cm {
		return "cryptomator"
	}
	return ""
}
