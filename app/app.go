package app

import (
	"context"
	"errors"
	"sync"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/keyring"
	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/mountmgr/extpass"
	"github.com/vaultui/vaultui/registry"
	"github.com/vaultui/vaultui/vault"
)

// App is vaultui's use cases over the desktop keyring and the mount daemon. Its methods are
// safe for concurrent use and may block (scrypt, FUSE, D-Bus, the socket): the TUI calls them
// from its commands.
type App struct {
	opts Options // with New's defaults in place of nil funcs
	// kernelMounts lists every vaultui mount the kernel shows (mountmgr.VaultuiMounts).
	kernelMounts func() ([]mountmgr.MountInfo, error)

	mu     sync.Mutex
	daemon Daemon
}

// Keyring is the desktop keyring as the use cases need it: *keyring.Keyring, or a fake in
// tests. Errors wrap keyring.ErrNotFound and keyring.ErrUnavailable as that package's do.
type Keyring interface {
	Get(ctx context.Context, cipherDir string) ([]byte, error)
	Has(ctx context.Context, cipherDir string) (bool, error)
	Set(ctx context.Context, cipherDir, label string, password []byte) error
	Delete(ctx context.Context, cipherDir string) error
	Close() error
}

// Daemon is the mount manager as the use cases need it: *mountmgr.Client, or a fake in tests.
type Daemon interface {
	Mount(ctx context.Context, r mountmgr.MountRequest) (mountmgr.MountInfo, error)
	Unmount(ctx context.Context, target string, lazy bool) error
	UnmountAll(ctx context.Context) error
	Status(ctx context.Context) ([]mountmgr.MountInfo, error)
	Watch(ctx context.Context, each func([]mountmgr.MountInfo)) error
	Daemon(ctx context.Context) (mountmgr.DaemonInfo, error)
	Events(ctx context.Context, after uint64) ([]mountmgr.Event, error)
	FollowEvents(ctx context.Context, after uint64, each func([]mountmgr.Event)) error
	Stale(ctx context.Context) ([]mountmgr.StaleMount, error)
	Conflicts(ctx context.Context, target string) ([]vault.ConflictEntry, error)
	SettleConflict(ctx context.Context, target, path string, keep vault.Keep) (vault.Settled, error)
	Fsck(ctx context.Context, target string, progress func(vault.FsckProgress)) ([]vault.Problem, error)
	MapPaths(ctx context.Context, target string, encrypt bool, paths []string) ([]mountmgr.PathResult, error)
	Export(ctx context.Context, target, dest string, opts vault.ExportOptions) error
	Close() error
}

var (
	_ Keyring = (*keyring.Keyring)(nil)
	_ Daemon  = (*mountmgr.Client)(nil)
)

// Options replace the real keyring and daemon; the zero value uses both.
type Options struct {
	// Keyring opens the keyring; nil: the Secret Service on the session bus.
	Keyring func(context.Context) (Keyring, error)
	// Connect reaches the daemon, starting it when none answers; nil: mountmgr.Connect.
	Connect func(context.Context) (Daemon, error)
	// Registry is the registry file; "": the user's (registry.DefaultPath).
	Registry string
	// LockPolicyWorks says whether lock policies can work here; nil: mountmgr.LockPolicyWorks.
	LockPolicyWorks func(context.Context) error
	// PasswordPrograms is how password programs run (see RunPasswordProgram): the terminal
	// they may ask on and where their messages go. The zero value: no terminal, messages kept
	// for the error only (a TUI that owns the screen).
	PasswordPrograms extpass.Options
	// DaemonNotice, if set, is told what the default Connect says of the daemon for the user
	// (mountmgr.Client.Notice: a daemon of another build kept for its mounts), once.
	DaemonNotice func(string)
}

// New returns the use cases over the keyring and daemon of opts.
func New(opts Options) *App {
	if opts.LockPolicyWorks == nil {
		opts.LockPolicyWorks = mountmgr.LockPolicyWorks
	}
	if opts.Keyring == nil {
		opts.Keyring = func(ctx context.Context) (Keyring, error) {
			k, err := keyring.Open(ctx, keyring.Options{})
			if err != nil {
				return nil, err
			}
			return k, nil
		}
	}
	if opts.Connect == nil {
		opts.Connect = func(ctx context.Context) (Daemon, error) {
			c, err := mountmgr.Connect(ctx)
			if err != nil {
				return nil, err
			}
			if n := c.Notice(); n != "" && opts.DaemonNotice != nil {
				opts.DaemonNotice(n)
			}
			return c, nil
		}
	}
	return &App{opts: opts, kernelMounts: mountmgr.VaultuiMounts}
}

// Close drops the daemon connection; mounts stay with the daemon.
func (a *App) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.daemon == nil {
		return nil
	}
	err := a.daemon.Close()
	a.daemon = nil
	return err
}

// Daemon returns the daemon's client, connecting (and starting the daemon) on first use.
func (a *App) Daemon(ctx context.Context) (Daemon, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.daemon == nil {
		d, err := a.opts.Connect(ctx)
		if err != nil {
			return nil, err
		}
		a.daemon = d
	}
	return a.daemon, nil
}

// daemonCall runs call with the daemon's client and forgets a client whose daemon went away,
// so the next call reconnects (and starts the daemon again).
func (a *App) daemonCall(ctx context.Context, call func(Daemon) error) error {
	_, err := daemonGet(ctx, a, func(d Daemon) (struct{}, error) { return struct{}{}, call(d) })
	return err
}

// daemonGet is daemonCall for a call that returns a value.
func daemonGet[T any](ctx context.Context, a *App, call func(Daemon) (T, error)) (T, error) {
	d, err := a.Daemon(ctx)
	if err != nil {
		var zero T
		return zero, err
	}
	out, err := call(d)
	if errors.Is(err, mountmgr.ErrDaemon) {
		a.mu.Lock()
		if a.daemon == d {
			d.Close()
			a.daemon = nil
		}
		a.mu.Unlock()
	}
	return out, err
}

// Vault names a vault for the use cases: its cipherdir, and the name it is registered under
// ("" when it is not), which labels its keyring entry.
type Vault struct {
	Name, CipherDir string
	// MountPoint is where the registry mounts it ("" when not registered): absolute plaintext
	// paths under it are the vault's, for path mapping.
	MountPoint string
	// ExtPass is the registry's password program for the vault, or nil (see the package doc).
	ExtPass []string
	// KDFCost is the key derivation cost the registry recorded for the vault (see
	// registry.Entry.KDFCost), or 0.
	KDFCost uint64
}

// kdfContext is ctx allowing the key derivations of v the cost the registry recorded for it,
// when that is more than ctx allows already (crypto.WithCostBound: the front end's
// --allow-costly-kdf). Every use case that derives v's key goes through it.
func kdfContext(ctx context.Context, v Vault) context.Context {
	if crypto.CostBoundOf(ctx).Allows(v.KDFCost) {
		return ctx
	}
	return crypto.WithCostBound(ctx, crypto.CostBound(v.KDFCost))
}

// VaultOf names a registered vault.
func VaultOf(e registry.Entry) Vault {
	return Vault{Name: e.Name, CipherDir: e.CipherDir, MountPoint: e.MountPoint, ExtPass: e.ExtPass, KDFCost: e.KDFCost}
}
