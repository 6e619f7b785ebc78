package app

import (
	"context"
	"fmt"

	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/vault"
)

// Conflicts lists and settles one vault's sync-tool conflicts, whether it is locked or
// mounted; Close forgets the key. Conflicts are named by vault.ConflictEntry.Path, as listed.
type Conflicts struct {
	a *App
	v Vault
	// mountPoint is set for a mounted vault, whose key is the daemon's: it lists and settles
	// (through the mount). Otherwise locked holds the key while the session is open.
	mountPoint string
	locked     vault.Volume
}

// OpenConflicts opens the vault's conflicts: through the daemon when it has the vault mounted
// (no password needed; where is the one rule of daemonMountOf), else by unlocking it with
// password, or without one with the keyring's (a *PasswordNeededError when that does not
// work).
func (a *App) OpenConflicts(ctx context.Context, v Vault, password []byte) (*Conflicts, KeyringChange, error) {
	if mp := a.daemonMountOf(ctx, v); mp != "" {
		return &Conflicts{a: a, v: v, mountPoint: mp}, KeyringChange{}, nil
	}
	locked, change, err := a.unlockVolume(ctx, v, password)
	if err != nil {
		return nil, change, err
	}
	return &Conflicts{a: a, v: v, locked: locked}, change, nil
}

// MountPoint is where the vault is mounted when its conflicts are settled through the
// mount, else "".
func (c *Conflicts) MountPoint() string { return c.mountPoint }

// List lists the conflicts, in plaintext path order (vault.Volume.Conflicts).
func (c *Conflicts) List(ctx context.Context) ([]vault.ConflictEntry, error) {
	if c.locked != nil {
		return c.locked.Conflicts(ctx)
	}
	var out []vault.ConflictEntry
	err := c.a.daemonCall(ctx, func(d Daemon) error {
		var err error
		out, err = d.Conflicts(ctx, c.v.CipherDir)
		return err
	})
	return out, err
}

// Settle settles the conflict listed at path p with keep: in the cipherdir of a locked
// vault, through the mount of a mounted one, after the same checks (vault.Volume.Settle).
func (c *Conflicts) Settle(ctx context.Context, p string, keep vault.Keep) (vault.Settled, error) {
	if c.locked == nil {
		var out vault.Settled
		err := c.a.daemonCall(ctx, func(d Daemon) error {
			var err error
			out, err = d.SettleConflict(ctx, c.v.CipherDir, p, keep)
			return err
		})
		return out, err
	}
	// Mounted meanwhile: the mount caches names, so nothing changes under it.
	if mp := mountmgr.MountedAt(c.v.CipherDir); mp != "" {
		return vault.Settled{}, fmt.Errorf("%s was mounted at %s meanwhile: open its conflicts again to settle them through the mount: %w",
			c.v.display(), mp, mountmgr.ErrAlreadyMounted)
	}
	return c.locked.Settle(ctx, p, keep)
}

// Close wipes the key of a locked vault.
func (c *Conflicts) Close() {
	if c.locked != nil {
		c.locked.Close()
		c.locked = nil
	}
}

// Choices lists how a listed conflict can be settled: a folder made twice only by merging
// (vault.KeepBoth moves what was made under the copy's IV into the folder; vault refuses
// the others with vault.ErrFolderKeepsBoth), any other copy all three ways.
func Choices(e vault.ConflictEntry) []vault.Keep {
	if e.Kind == vault.ConflictFolderMadeTwice {
		return []vault.Keep{vault.KeepBoth}
	}
	return []vault.Keep{vault.KeepBoth, vault.KeepOriginal, vault.KeepCopy}
}
