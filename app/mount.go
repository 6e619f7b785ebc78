package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/termsafe"
	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/vault"
)

// MountRequest mounts a vault. Without Password the keyring's is used, or a
// *PasswordNeededError says why there is none that works.
type MountRequest struct {
	Vault      Vault
	MountPoint string
	Password   []byte
	// Remember stores the password in the keyring once it mounted.
	Remember   bool
	ReadOnly   bool
	AllowOther bool
	NoExec     bool
	// MasterKey, when set, unlocks the vault instead of a password (recovery, gocryptfs's
	// -masterkey): no password source is tried. Such a mount is read-only unless ReadWrite.
	MasterKey []byte
	ReadWrite bool
	// Idle unmounts the vault after no file activity for that long; 0 never.
	Idle time.Duration
	// Reverse serves the read-only encrypted view of a plaintext folder (Vault.CipherDir holds
	// its .gocryptfs.reverse.conf); Exclude are its gitignore-style rules, in order.
	Reverse bool
	Exclude []string
	// ForceDecode mounts a damaged vault for recovery (read-only, damaged blocks read as
	// zeros); BadNames shows entries whose names do not decrypt (see mountmgr.MountRequest).
	ForceDecode bool
	BadNames    []string
	// SharedStorage is for a cipherdir other machines use at the same time (see
	// mountmgr.MountRequest).
	SharedStorage bool
}

// Mounted is a mount that worked, and what became of the keyring entry.
type Mounted struct {
	mountmgr.MountInfo
	Keyring KeyringChange
}

// Mount unlocks the vault in the daemon and mounts it. A missing mount point is created
// (an existing one must be an empty directory: the daemon checks again). What CheckMount
// refuses is refused before any password is asked for.
func (a *App) Mount(ctx context.Context, r MountRequest) (Mounted, error) {
	if err := a.CheckMount(r); err != nil {
		return Mounted{}, err
	}
	if r.SharedStorage {
		if f, err := vault.Open(r.Vault.CipherDir); err == nil && !f.Format.Can.Mount {
			return Mounted{}, fmt.Errorf("%s: %w: --sharedstorage is not available for %s vaults", r.Vault.CipherDir, vault.ErrUnsupported, f.Format.Name)
		}
	}
	if _, err := os.Lstat(r.MountPoint); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(r.MountPoint, 0o700); err != nil {
			return Mounted{}, fmt.Errorf("%w: %w", mountmgr.ErrMountpoint, err)
		}
	}
	var info mountmgr.MountInfo
	mount := func(pw, key []byte) (err error) {
		info, err = daemonGet(ctx, a, func(d Daemon) (mountmgr.MountInfo, error) {
			return d.Mount(ctx, mountmgr.MountRequest{
				CipherDir: r.Vault.CipherDir, MountPoint: r.MountPoint, Password: pw, MasterKey: key,
				ReadOnly: r.ReadOnly || key != nil && !r.ReadWrite, AllowOther: r.AllowOther,
				NoExec: r.NoExec, Idle: r.Idle,
				Reverse: r.Reverse, Exclude: r.Exclude, ForceDecode: r.ForceDecode, BadNames: r.BadNames,
				SharedStorage: r.SharedStorage,
				KDFCost:       uint64(crypto.CostBoundOf(kdfContext(ctx, r.Vault))),
			})
		})
		return err
	}
	var change KeyringChange
	var err error
	if r.MasterKey != nil {
		err = mount(nil, r.MasterKey)
	} else {
		change, err = a.withPassword(ctx, r.Vault, r.Password, r.Remember, func(pw []byte) error { return mount(pw, nil) })
	}
	if err == nil {
		err = a.checkHonoured(ctx, r, info)
	}
	if err != nil {
		return Mounted{}, err
	}
	return Mounted{MountInfo: info, Keyring: change}, nil
}

// checkHonoured undoes a mount that a daemon from before an option made without it: a plain
// read-only mount where the user expects damaged blocks to read as zeros (--forcedecode), or
// one that caches what other machines change (--sharedstorage).
func (a *App) checkHonoured(ctx context.Context, r MountRequest, info mountmgr.MountInfo) error {
	opt := ""
	switch {
	case r.ForceDecode && !info.ForceDecode:
		opt = "--forcedecode"
	case r.SharedStorage && !info.SharedStorage:
		opt = "--sharedstorage"
	default:
		return nil
	}
	a.Unmount(ctx, info.MountPoint, false)
	return fmt.Errorf("%w: the running daemon predates %s (its mount was undone): stop it with SIGTERM (its pid is in daemon.lock beside its socket), and this vaultui starts its own", mountmgr.ErrDaemon, opt)
}

// CheckMount refuses, before any password is asked for or any daemon started, a mount that
// cannot work for what shows without the password: no mount point, one nested with the
// cipherdir, one that exists but is not an empty directory or is mounted on already
// (mountmgr.MountPointReady; a missing one is fine, Mount creates it), or a vault the kernel
// shows mounted already, under any spelling of its path. The daemon checks all this again as
// it mounts. Mount checks it first; a front end that asks for a password before calling
// Mount calls it before asking.
func (a *App) CheckMount(r MountRequest) error {
	if r.MountPoint == "" {
		return fmt.Errorf("%w: no mount point for %s", mountmgr.ErrMountpoint, r.Vault.display())
	}
	if err := mountmgr.CheckNesting(r.Vault.CipherDir, r.MountPoint); err != nil {
		return err
	}
	if id, err := vault.IDOf(r.Vault.CipherDir); err == nil {
		mounts, _ := a.kernelMounts()
		for _, m := range mounts {
			if mid, err := vault.IDOf(m.CipherDir); err == nil && mid == id && !mountmgr.IsStale(m.MountPoint) {
				what := cmp.Or(r.Vault.Name, "vault "+r.Vault.CipherDir)
				return mountmgr.ErrorOf(mountmgr.ErrAlreadyMounted, "%s is already mounted at %s", termsafe.Escape(what), termsafe.Escape(m.MountPoint))
			}
		}
	}
	// A missing mount point is made by Mount; a stale mount there (its server gone) is
	// cleaned up by the daemon as it starts.
	if _, err := os.Lstat(r.MountPoint); err == nil && !mountmgr.IsStale(r.MountPoint) {
		return mountmgr.MountPointReady(r.MountPoint)
	}
	return nil
}

// Status lists the daemon's mounts, detached and stale ones included.
func (a *App) Status(ctx context.Context) ([]mountmgr.MountInfo, error) {
	return daemonGet(ctx, a, func(d Daemon) ([]mountmgr.MountInfo, error) { return d.Status(ctx) })
}

// Stale is the daemon's report of mounts a crashed daemon left (see mountmgr.Client.Stale).
func (a *App) Stale(ctx context.Context) ([]mountmgr.StaleMount, error) {
	return daemonGet(ctx, a, func(d Daemon) ([]mountmgr.StaleMount, error) { return d.Stale(ctx) })
}
