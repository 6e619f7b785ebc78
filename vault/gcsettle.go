package vault

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/vaultui/vaultui/vault/gocryptfs"
)

// MovedEntry is an entry of a folder made twice that settling moved into the folder
// (gocryptfs.MovedEntry).
type MovedEntry = gocryptfs.MovedEntry

// Conflicts lists the vault's conflicts, in plaintext path order (a folder made twice before
// the entries made in it).
func (g gocryptfsVolume) Conflicts(ctx context.Context) ([]ConflictEntry, error) {
	var out []ConflictEntry
	err := listConflicts(ctx, g.Vault().SplitVolume(func(f gocryptfs.SplitFolder) error {
		out = append(out, folderEntry(f))
		return nil
	}), &out)
	return out, err
}

// folderEntry describes the folder made twice f.
func folderEntry(f gocryptfs.SplitFolder) ConflictEntry {
	c := f.Copies[0]
	return ConflictEntry{Kind: ConflictFolderMadeTwice, Path: f.Path, Of: f.Path,
		CipherPath: path.Join(f.CipherPath, c.Name), Tool: c.Tool, Date: c.Date, Host: c.Host,
		ModTime: c.Info.ModTime(), Entries: len(f.Entries)}
}

// Settle settles the conflict at p in the cipherdir by the rules of conflicts.go, with
// gocryptfs's steps (gocryptfs.Vault.RemoveCopy, KeepCopy, MergeFolder).
func (g gocryptfsVolume) Settle(ctx context.Context, p string, keep Keep) (Settled, error) {
	v := g.Vault()
	var done Settled
	err := g.atConflict(ctx, p, func(n Node) error {
		if keep == KeepOriginal {
			return v.RemoveCopy(n)
		}
		if err := g.authenticate(ctx, n); err != nil {
			return err
		}
		return v.KeepCopy(n, keep == KeepCopy)
	}, func(f gocryptfs.SplitFolder) (err error) {
		if err = g.checkFolder(ctx, f, keep); err == nil {
			done.Moved, done.DirIVCopies, err = v.MergeFolder(ctx, f)
		}
		return err
	})
	if err != nil {
		return Settled{}, err
	}
	return done, nil
}

// PlanSettle: a gocryptfs conflict is settled through the mount (so that the kernel's view
// stays right), after the checks Settle makes before it changes anything: a copy kept must
// authenticate whole, a folder made twice is kept both and every entry made in it
// authenticates. The plan holds the conflict and, for a folder made twice, those entries.
func (g gocryptfsVolume) PlanSettle(ctx context.Context, p string, keep Keep) (SettlePlan, error) {
	plan := SettlePlan{Mount: true}
	err := g.atConflict(ctx, p, func(n Node) error {
		plan.Entry = conflictEntry(g.Geometry(), n)
		switch {
		case keep == KeepOriginal && n.Info.IsDir():
			return fmt.Errorf("vault: %s is a directory: look inside and remove it through the mount", n.Path)
		case keep != KeepOriginal:
			return g.authenticate(ctx, n)
		}
		return nil
	}, func(f gocryptfs.SplitFolder) error {
		plan.Entry = folderEntry(f)
		if err := g.checkFolder(ctx, f, keep); err != nil {
			return err
		}
		for _, n := range f.Entries {
			plan.Made = append(plan.Made, conflictEntry(g.Geometry(), n))
		}
		return nil
	})
	if err != nil {
		return SettlePlan{Mount: true}, err
	}
	return plan, nil
}

// atConflict walks the vault to the conflict at plaintext path p and calls entry (a copy) or
// folder (a folder made twice) for it, during the walk; ErrNoConflict when there is none.
func (g gocryptfsVolume) atConflict(ctx context.Context, p string, entry func(Node) error, folder func(gocryptfs.SplitFolder) error) error {
	p = strings.Trim(p, "/")
	found := false
	return atConflict(ctx, g.Vault().SplitVolume(func(f gocryptfs.SplitFolder) error {
		if f.Path != p {
			return nil
		}
		found = true
		if err := folder(f); err != nil {
			return err
		}
		return errStop
	}), g.Folder(), p, &found, entry)
}

// checkFolder refuses to settle the folder made twice f but by keeping both, and unless
// every entry made in it authenticates.
func (g gocryptfsVolume) checkFolder(ctx context.Context, f gocryptfs.SplitFolder, keep Keep) error {
	if keep != KeepBoth {
		return fmt.Errorf("%s: %s: %w", g.Folder(), FolderArg(f.Path), ErrFolderKeepsBoth)
	}
	for _, n := range f.Entries {
		if err := g.authenticate(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// authenticate decrypts the whole entry n (its name was decrypted by the walk) and refuses it
// with ErrCorrupt if any of it does not authenticate. A directory's gocryptfs.diriv must be
// readable: its names are checked when it is walked.
func (g gocryptfsVolume) authenticate(ctx context.Context, n Node) error {
	var bad []string
	checkEntry(ctx, g, n, func(p Problem) {
		if p.Damage() {
			bad = append(bad, strings.TrimPrefix(p.String(), p.Path+": "))
		}
	}, nil)
	if err := g.Vault().CheckDir(n); err != nil {
		bad = append(bad, errDetail(err))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s: /%s (%s) does not decrypt, so it was left as it is: %s: %w",
			g.Folder(), n.Path, n.CipherPath, strings.Join(bad, "; "), ErrCorrupt)
	}
	return nil
}
