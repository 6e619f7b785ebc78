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
type Walker struct {
	a *App
	v Vault
	// mountPoint is set for a vault this user's daemon has mounted: it holds the key and
	// walks the cipherdir with it. Otherwise locked holds the key until Close.
	mountPoint string
	locked     vault.Volume
}

// OpenWalker opens the vault for fsck or export: through the daemon when the daemon has it
// mounted (no password needed), else by unlocking it with password, or without one with the
// keyring's (a *PasswordNeededError when that does not work). A vault mounted by another
// program (gocryptfs) is read offline, which a check or an export may do beside a mount.
// The vault may be a gocryptfs or a Cryptomator vault (vault.UnlockVolume tells them apart).
func (a *App) OpenWalker(ctx context.Context, v Vault, password []byte) (*Walker, KeyringChange, error) {
	if mp := a.daemonMountOf(ctx, v); mp != "" {
		return &Walker{a: a, v: v, mountPoint: mp}, KeyringChange{}, nil
	}
	locked, change, err := a.unlockVolume(ctx, v, password)
	if err != nil {
		return nil, change, err
	}
	return &Walker{a: a, v: v, locked: locked}, change, nil
}

// unlockVolume is Unlock for a vault of either format, as the walker reads it
// (vault.UnlockVolume).
func (a *App) unlockVolume(ctx context.Context, v Vault, password []byte) (vault.Volume, KeyringChange, error) {
	ctx = kdfContext(ctx, v)
	var out vault.Volume
	change, err := a.withPassword(ctx, v, password, false, func(pw []byte) error {
		var err error
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
	var list []mountmgr.MountInfo
	if err := a.daemonCall(ctx, func(d Daemon) error {
		var err error
		list, err = d.Status(ctx)
		return err
	}); err != nil {
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

// MountPoint is where the vault is mounted when the daemon walks it, else "".
func (w *Walker) MountPoint() string { return w.mountPoint }

// Fsck checks every name, symlink and block of the vault (vault.FsckVolume), through the
// daemon for a mounted vault; progress (if not nil) is called as the check goes.
func (w *Walker) Fsck(ctx context.Context, progress func(vault.FsckProgress)) ([]vault.Problem, error) {
	if w.locked != nil {
		return vault.FsckVolume(ctx, w.locked, progress)
	}
	var out []vault.Problem
	err := w.a.daemonCall(ctx, func(d Daemon) error {
		var err error
		out, err = d.Fsck(ctx, w.v.CipherDir, progress)
		return err
	})
	return out, err
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

// Close wipes the key of a locked vault.
func (w *Walker) Close() {
	if w.locked != nil {
		w.locked.Close()
		w.locked = nil
	}
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
		var out []mountmgr.PathResult
		err := w.a.daemonCall(ctx, func(d Daemon) error {
			var err error
			out, err = d.MapPaths(ctx, w.v.CipherDir, encrypt, paths)
			return err
		})
		return out, err
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
