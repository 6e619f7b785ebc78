package vault

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/layout"
)

// ConflictEntry is a sync tool's conflict copy found in a vault.
type ConflictEntry struct {
	// Path is the plaintext path the copy shows under in a mount (a readable marker before the
	// extension); Of is the path of the file it is a copy of.
	Path, Of   string
	CipherPath string
	Tool       string
	Date       string // YYYY-MM-DD, if the tool's marker has one
	Host       string // the computer, device or user the marker names, if any
	Size       int64  // plaintext size
	ModTime    time.Time
	// Newer is "copy" or "original" by modification time, "same", or "" when the original
	// is gone.
	Newer string
}

// Conflicts lists the vault's conflict copies, in plaintext path order.
func (v *Vault) Conflicts(ctx context.Context) ([]ConflictEntry, error) {
	var out []ConflictEntry
	mtimes := map[string]time.Time{}
	err := v.Walk(ctx, func(n Node) error {
		if n.Conflict == nil {
			mtimes[n.Path] = n.Info.ModTime()
			return nil
		}
		size := n.Info.Size()
		if n.Info.Mode().IsRegular() {
			ps, err := v.Content.PlainSize(uint64(size))
			if err != nil {
				ps = 0
			}
			size = int64(ps)
		}
		out = append(out, ConflictEntry{Path: n.Path, Of: n.Conflict.Of, CipherPath: n.CipherPath,
			Tool: n.Conflict.Tool, Date: n.Conflict.Date, Host: n.Conflict.Host, Size: size, ModTime: n.Info.ModTime()})
		return nil
	}, nil)
	for i := range out {
		orig, ok := mtimes[out[i].Of]
		switch {
		case !ok:
		case out[i].ModTime.After(orig):
			out[i].Newer = "copy"
		case out[i].ModTime.Before(orig):
			out[i].Newer = "original"
		default:
			out[i].Newer = "same"
		}
	}
	return out, err
}

// Keep says how ResolveConflict settles a conflict copy.
type Keep int

const (
	KeepBoth     Keep = iota // the copy gets a name of its own (the one it shows under)
	KeepOriginal             // the copy is deleted
	KeepCopy                 // the copy replaces the original
)

// ErrNoConflict: ResolveConflict was given a path that is not a conflict copy.
var ErrNoConflict = errors.New("not a conflict copy")

// ResolveConflict settles the conflict copy at plaintext path p (ConflictEntry.Path) in the
// cipherdir. The vault must not be mounted: a mounted vault is resolved through the mount,
// with a plain rename or delete. Nothing is deleted but what keep says.
func (v *Vault) ResolveConflict(ctx context.Context, p string, keep Keep) error {
	found := false
	err := v.Walk(ctx, func(n Node) error {
		if n.Path != p || n.Conflict == nil {
			return nil
		}
		found = true
		if err := v.resolve(n, keep); err != nil {
			return err
		}
		return errStop
	}, nil)
	if err != nil && err != errStop {
		return err
	}
	if !found {
		return fmt.Errorf("%s: /%s: %w", v.Dir, p, ErrNoConflict)
	}
	return nil
}

// errStop ends a walk early once its work is done.
var errStop = errors.New("stop")

func (v *Vault) resolve(n Node, keep Keep) error {
	dirfd := n.dirfd
	// The copy's own .name file, if a sync tool made one.
	copyNameFile := n.name + crypto.LongNameSuffix
	if crypto.IsLongName(n.Conflict.Base) {
		if _, err := layout.ReadLongNameFile(dirfd, copyNameFile, n.Conflict.Base, v.Names); err != nil {
			copyNameFile = ""
		}
	} else {
		copyNameFile = ""
	}
	removeCopy := func() error {
		if n.Info.IsDir() {
			return fmt.Errorf("vault: %s is a directory: remove it through the mount", n.Path)
		}
		if err := unix.Unlinkat(dirfd, n.name, 0); err != nil {
			return fmt.Errorf("vault: removing %s: %w", n.CipherPath, err)
		}
		if copyNameFile != "" {
			unix.Unlinkat(dirfd, copyNameFile, 0)
		}
		return nil
	}
	switch keep {
	case KeepOriginal:
		return removeCopy()
	case KeepCopy:
		// Renaming the copy onto the original's stored name replaces it in one step.
		if err := unix.Renameat(dirfd, n.name, dirfd, n.Conflict.Base); err != nil {
			return fmt.Errorf("vault: replacing %s: %w", n.Conflict.Of, err)
		}
		if copyNameFile != "" {
			unix.Unlinkat(dirfd, copyNameFile, 0)
		}
		return nil
	}
	// KeepBoth: store the copy under the name it shows under, encrypted properly.
	iv, err := v.dirIVAt(dirfd)
	if err != nil {
		return err
	}
	stored, encoded, long, err := v.Names.StoredName(path.Base(n.Path), iv)
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	if long {
		if _, err := layout.WriteLongName(dirfd, stored, encoded); err != nil {
			return fmt.Errorf("vault: %w", err)
		}
	}
	if err := unix.Renameat2(dirfd, n.name, dirfd, stored, unix.RENAME_NOREPLACE); err != nil {
		if long {
			layout.RemoveLongName(dirfd, stored)
		}
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("vault: /%s already exists", n.Path)
		}
		return fmt.Errorf("vault: renaming %s: %w", n.CipherPath, err)
	}
	if copyNameFile != "" {
		unix.Unlinkat(dirfd, copyNameFile, 0)
	}
	return nil
}
