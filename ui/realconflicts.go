package ui

import (
	"context"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/vault"
)

func (b *realBackend) CountConflicts(dir string) (ConflictCount, error) {
	t, err := vault.CountConflicts(dir)
	return ConflictCount{N: t.Count, Complete: t.Complete, SplitDirs: t.SplitDirs}, escaped(err)
}

// OpenConflicts opens the vault's conflicts through the core: a mounted vault's through the
// daemon (no password), a locked one's with password or, without one, the keyring's (an
// app.ErrPasswordNeeded error when that does not work). Which of the two the vault is now
// decides, whatever the screen last saw.
func (b *realBackend) OpenConflicts(ctx context.Context, dir, _ string, password []byte) (ConflictSession, error) {
	s, _, err := b.app.OpenConflicts(ctx, b.app.VaultAt(dir), password)
	if err != nil {
		return nil, escaped(err)
	}
	return conflictSession{s}, nil
}

// conflictSession is app.Conflicts as the conflicts screen uses it.
type conflictSession struct{ s *app.Conflicts }

func (c conflictSession) List(ctx context.Context) ([]vault.ConflictEntry, error) {
	list, err := c.s.List(ctx)
	return list, escaped(err)
}

func (c conflictSession) Settle(ctx context.Context, p string, keep vault.Keep) error {
	_, err := c.s.Settle(ctx, p, keep)
	return escaped(err)
}

func (c conflictSession) Close() { c.s.Close() }
