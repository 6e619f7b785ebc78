package ui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/termsafe"
	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/registry"
	"github.com/vaultui/vaultui/vault"
	"github.com/vaultui/vaultui/vault/convert"
)

// Run starts the terminal app on the real backend in the alternate screen.
// Mounts keep running in the daemon after it returns, and it says so.
func Run() error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := newRealBackend()
	defer b.Close()
	m := New(ctx, b)
	final, err := tea.NewProgram(m, tea.WithAltScreen(), tea.WithContext(ctx)).Run()
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) {
		return fmt.Errorf("terminal app: %w", err)
	}
	if fm, ok := final.(*Model); ok {
		if msg := fm.goodbye(); msg != "" {
			fmt.Println(msg)
		}
	}
	if n, _ := b.notice.Load().(string); n != "" {
		// Said once the screen is back: the daemon of another build runs on meanwhile.
		fmt.Println("note: " + n)
	}
	return nil
}

// realBackend does what the TUI asks through the product core (app), which owns the
// policies and the one daemon client; it only adapts the answers to the screens.
type realBackend struct {
	app    *app.App
	speed  *app.Speed
	notice atomic.Value // the daemon's notice (app.Options.DaemonNotice), shown after the TUI
}

func newRealBackend() *realBackend {
	b := &realBackend{speed: app.NewSpeed()}
	b.app = app.New(app.Options{DaemonNotice: func(n string) { b.notice.Store(n) }})
	return b
}

// Close drops the daemon connection; mounts stay with the daemon.
func (b *realBackend) Close() error { return b.app.Close() }

// escaped returns err with vault-controlled text (names, config fields) escaped for the
// terminal (termsafe.Escape); errors.Is and As still see the original.
func escaped(err error) error {
	if err == nil {
		return nil
	}
	return &escapedError{err}
}

type escapedError struct{ err error }

func (e *escapedError) Error() string { return termsafe.Escape(e.err.Error()) }
func (e *escapedError) Unwrap() error { return e.err }

// StoredPassword asks the keyring whether it holds the vault's password.
func (b *realBackend) StoredPassword(ctx context.Context, cipherDir string) (bool, error) {
	return b.app.HasStoredPassword(ctx, app.Vault{CipherDir: cipherDir})
}

func (b *realBackend) Vaults() ([]Vault, error) {
	list, err := b.app.List()
	if err != nil {
		return nil, err
	}
	out := make([]Vault, 0, len(list))
	for _, e := range list {
		v := Vault{Entry: e.Entry}
		if e.Err != nil {
			v.Problem = e.Err.Error()
		} else {
			v.Cipher = e.Label()
		}
		out = append(out, v)
	}
	return out, nil
}

func (b *realBackend) DefaultMountPoint(name string) string { return app.DefaultMountPoint(name) }

func (b *realBackend) CheckNewCipherDir(dir string) error {
	err := app.CheckNewCipherDir(dir)
	if errors.Is(err, vault.ErrNotEmpty) {
		return escaped(fmt.Errorf("%w (to register an existing vault, use a)", err))
	}
	return escaped(err)
}

func (b *realBackend) CheckCreate(ctx context.Context, r app.NewVault) error {
	_, _, err := b.app.CheckCreate(ctx, r)
	return escaped(err)
}

// CreateVault creates through the core. The master key comes back whenever the vault was
// written; a step that failed after that is reported with it.
func (b *realBackend) CreateVault(ctx context.Context, r app.NewVault, password []byte) ([]byte, error) {
	created, err := b.app.Create(ctx, r, password)
	if err != nil {
		return nil, escaped(err)
	}
	if created.NotRegistered != nil {
		return created.MasterKey, escaped(fmt.Errorf("the vault was created but not registered: %w (add it with a)", created.NotRegistered))
	}
	return created.MasterKey, nil
}

func (b *realBackend) AddVault(ctx context.Context, r app.NewEntry) (Vault, error, error) {
	added, err := b.app.Add(ctx, r)
	if err != nil {
		return Vault{}, nil, escaped(err)
	}
	return Vault{Entry: added.Entry, Cipher: added.Label()}, escaped(added.LockNote), nil
}

func (b *realBackend) LockPolicyWorks(ctx context.Context) error { return b.app.LockPolicyWorks(ctx) }

func (b *realBackend) Forget(name string) error {
	_, err := b.app.Forget(name)
	return escaped(err)
}

// SetAutomount changes the registry entry under the registry's lock.
func (b *realBackend) SetAutomount(name string, on bool) error {
	_, err := b.app.Edit(context.Background(), name, app.Edit{Automount: &on})
	return escaped(err)
}

func (b *realBackend) Info(ctx context.Context, v registry.Entry) ([]vault.Fact, error) {
	info, err := app.Info(v)
	if err != nil {
		return nil, escaped(err)
	}
	return app.Describe(info), nil
}

func (b *realBackend) ChangePassword(ctx context.Context, dir string, oldPassword, newPassword []byte) (string, error) {
	c, err := b.app.ChangePassword(ctx, app.ChangePasswordRequest{Vault: b.app.VaultAt(dir), OldPassword: oldPassword, NewPassword: newPassword})
	return c.Backup, escaped(err)
}

func (b *realBackend) Fsck(ctx context.Context, dir string, password []byte, progress func(vault.FsckProgress)) ([]app.Finding, error) {
	// A mounted vault is checked by the daemon with its key; app decides.
	w, _, err := b.app.OpenWalker(ctx, b.app.VaultAt(dir), password)
	if err != nil {
		return nil, escaped(err)
	}
	defer w.Close()
	problems, err := w.Fsck(ctx, func(p vault.FsckProgress) {
		p.Path = termsafe.Escape(p.Path)
		progress(p)
	})
	out := make([]app.Finding, 0, len(problems))
	for _, p := range problems {
		out = append(out, app.FindingOf(p))
	}
	return out, escaped(err)
}

// Ciphers are crypto's, in its display order.
func (b *realBackend) Ciphers() []crypto.CipherID { return slices.Clone(crypto.Ciphers) }

func (b *realBackend) SpeedTest(ctx context.Context, report func(app.SpeedReport)) (app.SpeedReport, error) {
	return b.speed.Run(ctx, "", report)
}

func (b *realBackend) CachedSpeed() (app.SpeedReport, bool) { return b.speed.Cached("") }

func (b *realBackend) CheckMount(req app.MountRequest) error {
	return escaped(b.app.CheckMount(req))
}

func (b *realBackend) Mount(ctx context.Context, req app.MountRequest) (app.Mounted, error) {
	m, err := b.app.Mount(ctx, req)
	return m, escaped(err)
}

func (b *realBackend) Unmount(ctx context.Context, target string, lazy bool) error {
	return escaped(b.app.Unmount(ctx, target, lazy))
}

func (b *realBackend) Watch(ctx context.Context, each func([]mountmgr.MountInfo)) error {
	return escaped(b.app.Watch(ctx, each))
}

func (b *realBackend) PlanConvert(ctx context.Context, dir string, to crypto.CipherID, format string) (app.ConvertPlan, error) {
	p, err := b.app.PlanConvert(ctx, app.ConvertRequest{Vault: b.app.VaultAt(dir), To: to, Format: format})
	return p, escaped(err)
}

func (b *realBackend) Convert(ctx context.Context, dir string, to crypto.CipherID, format string, password []byte, progress func(convert.Progress)) (*convert.Result, error) {
	res, _, err := b.app.Convert(ctx, app.ConvertRequest{Vault: b.app.VaultAt(dir), To: to, Format: format, Password: password, Progress: progress})
	return res, escaped(err)
}
