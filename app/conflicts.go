package app

import (
	"context"
	"fmt"

	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/vault"
)

// Conflicts lists and settles one vault's sync-tool conflicts, whether it is locked or
// mounted (through the mount); Close forgets the key. Conflicts are named by
// vault.ConflictEntry.Path, as listed.
type Conflicts struct{ opened }

// OpenConflicts opens the vault's conflicts (see open).
func (a *App) OpenConflicts(ctx context.Context, v Vault, password []byte) (*Conflicts, KeyringChange, error) {
	o, change, err := a.open(ctx, v, password)
	if err != nil {
		return nil, change, err
	}
	return &Conflicts{o}, change, nil
}

// List lists the conflicts, in plaintext path order (vault.Volume.Conflicts).
func (c *Conflicts) List(ctx context.Context) ([]vault.ConflictEntry, error) {
	if c.locked != nil {
		return c.locked.Conflicts(ctx)
	}
	return daemonGet(ctx, c.a, func(d Daemon) ([]vault.ConflictEntry, error) { return d.Conflicts(ctx, c.v.CipherDir) })
}

// Settle settles the conflict listed at path p with keep: in the cipherdir of a locked
// vault, through the mount of a mounted one, after the same checks (vault.Volume.Settle).
func (c *Conflicts) Settle(ctx context.Context, p string, keep vault.Keep) (vault.Settled, error) {
	if c.locked == nil {
		return daemonGet(ctx, c.a, func(d Daemon) (vault.Settled, error) { return d.SettleConflict(ctx, c.v.CipherDir, p, keep) })
	}
	// Mounted meanwhile: the mount caches names, so nothing changes under it.
	if mp := mountmgr.MountedAt(c.v.CipherDir); mp != "" {
		return vault.Settled{}, fmt.Errorf("%s was mounted at %s meanwhile: open its conflicts again to settle them through the mount: %w",
			c.v.display(), mp, mountmgr.ErrAlreadyMounted)
	}
	return c.locked.Settle(ctx, p, keep)
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
