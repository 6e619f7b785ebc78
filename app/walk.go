package app

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/vault"
)

// Walker checks (fsck) or exports one vault, whether it is locked or mounted; Close forgets
// the key.
type Walker struct{ opened }

// opened is a vault opened for a use case that needs its key. For a vault this user's daemon
// has mounted, mountPoint is set: the daemon holds the key and does the work. Otherwise
// locked holds the key until Close.
type opened struct {
	a          *App
	v          Vault
	mountPoint string
	locked     vault.Volume
}

// open opens the vault through the daemon when the daemon has it mounted (no password needed;
// where is the one rule of daemonMountOf), else by unlocking it with password, or without
// one with the keyring's (a *PasswordNeededError when that does not work).
func (a *App) open(ctx context.Context, v Vault, password []byte) (opened, KeyringChange, error) {
	if mp := a.daemonMountOf(ctx, v); mp != "" {
		return opened{a: a, v: v, mountPoint: mp}, KeyringChange{}, nil
	}
	locked, change, err := a.unlockVolume(ctx, v, password)
	return opened{a: a, v: v, locked: locked}, change, err
}

// Close wipes the key of a locked vault.
func (o *opened) Close() {
	if o.locked != nil {
		o.locked.Close()
		o.locked = nil
	}
}

// OpenWalker opens the vault for fsck or export (see open). A vault mounted by another
// program (gocryptfs) is read offline, which a check or an export may do beside a mount.
// The vault may be a gocryptfs or a Cryptomator vault (vault.UnlockVolume tells them apart).
func (a *App) OpenWalker(ctx context.Context, v Vault, password []byte) (*Walker, KeyringChange, error) {
	o, change, err := a.open(ctx, v, password)
	if err != nil {
		return nil, change, err
	}
	return &Walker{o}, change, nil
}

// unlockVolume unlocks the vault, of any format, for offline work (vault.UnlockVolume) with
// password, or without one with the keyring's (see the package doc). The caller closes it.
func (a *App) unlockVolume(ctx context.Context, v Vault, password []byte) (vault.Volume, KeyringChange, error) {
	ctx = kdfContext(ctx, v)
	var out vault.Volume
	change, err := a.withPassword(ctx, v, password, false, func(pw []byte) (err error) {
		out, err = vault.UnlockVolume(ctx, v.CipherDir, pw)
		return err
	})
	return out, change, err
}

// daemonMountOf is where the daemon has the vault mounted, by identity (see
// mountmgr.MountedAt), or "". The daemon is asked only when the kernel shows the vault
// mounted; one that cannot be reached holds no key, and the vault is read offline.
func (a *App) daemonMountOf(ctx context.Context, v Vault) string {
	if mountmgr.MountedAt(v.CipherDir) == "" {
		return ""
	}
	id, err := vault.IDOf(v.CipherDir)
	if err != nil {
		return ""
	}
	list, err := a.Status(ctx)
	if err != nil {
		return ""
	}
	for _, m := range list {
		if !m.InPlace() || m.Reverse {
			continue
		}
		if mid, err := vault.IDOf(m.CipherDir); err == nil && mid == id {
			return m.MountPoint
		}
	}
	return ""
}

// Fsck checks every name, symlink and block of the vault (vault.FsckVolume), through the
// daemon for a mounted vault; progress (if not nil) is called as the check goes.
func (w *Walker) Fsck(ctx context.Context, progress func(vault.FsckProgress)) ([]vault.Problem, error) {
	if w.locked != nil {
		return vault.FsckVolume(ctx, w.locked, progress)
	}
	return daemonGet(ctx, w.a, func(d Daemon) ([]vault.Problem, error) { return d.Fsck(ctx, w.v.CipherDir, progress) })
}

// Export writes the vault's decrypted tree into dest (vault.ExportVolume), through the
// daemon for a mounted vault, with the same refusals.
func (w *Walker) Export(ctx context.Context, dest string, opts vault.ExportOptions) error {
	if w.locked != nil {
		return vault.ExportVolume(ctx, w.locked, dest, opts)
	}
	return w.a.daemonCall(ctx, func(d Daemon) error {
		return d.Export(ctx, w.v.CipherDir, dest, opts)
	})
}

// MapPaths maps paths of the vault, cipher paths to plaintext paths or the other way with
// encrypt (vault.Volume.Paths), with the key the walker holds or through the daemon for a
// mounted vault. Paths are relative to the vault's folder (decrypt) or root (encrypt); an
// absolute path inside the folder, or inside the mount point, is taken relative to it. There
// is one result per path, in order; a path that cannot be mapped has its Error set.
func (w *Walker) MapPaths(ctx context.Context, encrypt bool, paths []string) ([]mountmgr.PathResult, error) {
	base := w.v.CipherDir
	if encrypt {
		base = w.v.MountPoint
		if w.mountPoint != "" {
			base = w.mountPoint
		}
	}
	paths = relativeTo(base, paths)
	if w.locked == nil {
		return daemonGet(ctx, w.a, func(d Daemon) ([]mountmgr.PathResult, error) { return d.MapPaths(ctx, w.v.CipherDir, encrypt, paths) })
	}
	return vault.MapPaths(w.locked.Paths(), encrypt, paths), nil
}

// relativeTo makes the absolute paths inside dir relative to it; the others are left as they
// are (relative to the vault's root, leading slashes or not: see layout.CleanPath).
func relativeTo(dir string, paths []string) []string {
	if dir == "" {
		return paths
	}
	dir = filepath.Clean(dir)
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = p
		if rest, ok := strings.CutPrefix(filepath.Clean(p), dir+"/"); ok && filepath.IsAbs(p) {
			out[i] = rest
		}
	}
	return out
}
