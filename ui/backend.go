package ui

import (
	"context"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/registry"
	"github.com/vaultui/vaultui/vault"
	"github.com/vaultui/vaultui/vault/convert"
)

// Backend is everything the terminal app asks of the rest of vaultui. The
// real implementation (newRealBackend) forwards to the vault, crypto and
// mountmgr packages, so the TUI adds no second implementation of anything;
// tests use a deterministic fake. Every method may block (scrypt, FUSE,
// sockets): the models only call them from tea.Cmds.
type Backend interface {
	// Vaults lists the registered vaults with their cipher (read from each
	// vault's config); a vault whose config can't be read is still listed
	// with Problem set.
	Vaults() ([]Vault, error)
	// DefaultMountPoint is where a vault called name mounts unless the user
	// chooses otherwise (the command line uses the same place).
	DefaultMountPoint(name string) string
	// CheckNewCipherDir reports whether dir can hold a new vault: it must be
	// missing or an empty directory.
	CheckNewCipherDir(dir string) error
	// CheckCreate checks all of a new vault that can be checked before its password is
	// asked for: the folder, the name, the mount point, the registry (app.CheckCreate).
	CheckCreate(ctx context.Context, r app.NewVault) error
	// CreateVault writes a new vault with password, creates its mount point and registers
	// it (app.Create). It returns the master key, which the user sees once.
	CreateVault(ctx context.Context, r app.NewVault, password []byte) (masterKey []byte, err error)
	// AddVault registers an existing vault through app.Add, which fills the defaults (name,
	// mount point, lock policy) and refuses a name that is taken; it returns the registered
	// vault and, when its lock policy cannot work here, why (else nil).
	AddVault(ctx context.Context, r app.NewEntry) (v Vault, lockNote error, err error)
	// Forget removes a vault from the registry. It never touches its files.
	Forget(name string) error
	// SetAutomount turns a registered vault's automount option on or off.
	SetAutomount(name string, on bool) error
	// LockPolicyWorks reports whether the lock policies (sleep,
	// sleep+screenlock) can work on this machine: nil, or why not (no logind).
	LockPolicyWorks(ctx context.Context) error
	// StoredPassword reports whether the desktop keyring holds a password for
	// cipherDir; err says why it cannot tell (no keyring).
	StoredPassword(ctx context.Context, cipherDir string) (bool, error)
	// Info describes a vault's configuration as labelled lines (app.Info, app.Describe):
	// its gocryptfs.conf, or a reverse vault's .gocryptfs.reverse.conf.
	Info(ctx context.Context, v registry.Entry) ([]vault.Fact, error)
	// ChangePassword reseals the vault's key under newPassword and returns the path of the
	// old key file, kept as a backup (vault.ChangePassword).
	ChangePassword(ctx context.Context, cipherDir string, oldPassword, newPassword []byte) (backup string, err error)
	// Fsck unlocks the vault and checks every file and name in it; progress's Path is escaped
	// for the terminal, and what it found is described by the core (app.FindingOf).
	Fsck(ctx context.Context, cipherDir string, password []byte, progress func(vault.FsckProgress)) ([]app.Finding, error)
	// Ciphers lists the content ciphers a new vault can use, in display order.
	Ciphers() []crypto.CipherID
	// SpeedTest runs the speed test (app.Speed.Run), reporting the figures so
	// far after each measurement, and remembers the result for every front end.
	SpeedTest(ctx context.Context, report func(app.SpeedReport)) (app.SpeedReport, error)
	// CachedSpeed returns the remembered speed test, if there is one for this
	// CPU and build.
	CachedSpeed() (app.SpeedReport, bool)
	// CheckMount is app.CheckMount: what refuses the mount before a password is asked for.
	CheckMount(req app.MountRequest) error
	// Mount mounts through app.Mount; a request without Password uses the keyring's. The
	// screens build it from app.MountFor, so the registry's options are its defaults.
	Mount(ctx context.Context, req app.MountRequest) (app.Mounted, error)
	// Unmount takes a cipherdir or mount point; lazy detaches a busy mount.
	Unmount(ctx context.Context, target string, lazy bool) error
	// Watch calls each with the daemon's mounts about once a second until
	// ctx is done or the daemon goes away.
	Watch(ctx context.Context, each func([]mountmgr.MountInfo)) error
	// CountConflicts counts a vault's sync-conflict copies without its
	// password (cheap: it runs for every vault when the list loads).
	CountConflicts(cipherDir string) (ConflictCount, error)
	// OpenConflicts opens a vault's conflict copies for listing and
	// settling: through its mount when mountPoint is set (no password),
	// else by unlocking the cipherdir with password.
	OpenConflicts(ctx context.Context, cipherDir, mountPoint string, password []byte) (ConflictSession, error)
	// PlanConvert says what converting the vault to the cipher with ID to will do
	// (app.PlanConvert); Convert does it with password, or without one with the keyring's.
	// format is the ID of the new format ("" keeps the vault's; to "" is then its default
	// cipher).
	PlanConvert(ctx context.Context, cipherDir string, to crypto.CipherID, format string) (app.ConvertPlan, error)
	Convert(ctx context.Context, cipherDir string, to crypto.CipherID, format string, password []byte, progress func(convert.Progress)) (*convert.Result, error)
	// WatchEvents calls each with the daemon's events numbered after after, with their
	// vaults' registered names, then with every new one, until ctx is done or the daemon goes
	// away. The daemon escaped their text.
	WatchEvents(ctx context.Context, after uint64, each func([]app.NamedEvent)) error
}

// Errors a Backend wraps (errors.Is) so the screens can react to them: keep a prompt open,
// offer a lazy unmount, point at the mount point. They are the libraries' own sentinels (see
// mountmgr.Kind), named here so the screens need no other package.
var (
	ErrWrongPassword  = vault.ErrWrongPassword
	ErrBusy           = mountmgr.ErrBusy
	ErrMountpoint     = mountmgr.ErrMountpoint
	ErrAlreadyMounted = mountmgr.ErrAlreadyMounted
	ErrNotEmpty       = vault.ErrNotEmpty
	ErrDaemon         = mountmgr.ErrDaemon
)

// Vault is one registered vault: its registry entry as app.List reads it.
type Vault struct {
	registry.Entry
	// Cipher is the display name of the content cipher ("AES-256-GCM").
	Cipher string
	// Problem says why the vault's config could not be read, if it couldn't.
	Problem string
}
