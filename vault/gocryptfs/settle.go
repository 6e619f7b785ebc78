package gocryptfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/format"
	"github.com/vaultui/vaultui/vault/layout"
)

// Settling a sync tool's conflict copy (format.Node.Conflict set) that a walk of SplitVolume
// found, during the walk's call for it, by the rules of package vault's conflicts.go, which
// makes the checks first: one rename or unlink a step, the directory synced after it.

// CheckDir reports what keeps the names of the directory n from being read (its
// gocryptfs.diriv missing or damaged); nil when they can be read, and for entries that are
// not directories or plaintext names.
func (v *Vault) CheckDir(n format.Node) error {
	if !n.Info.IsDir() || v.Names == nil {
		return nil
	}
	fd, err := layout.OpenDirPath(RefOf(n).Dirfd, RefOf(n).Name)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	_, err = v.DirIVAt(fd)
	return err
}

// RemoveCopy deletes the conflict copy n: the original is kept. A directory is refused: what
// it holds is removed through the mount.
func (v *Vault) RemoveCopy(n format.Node) error {
	if n.Info.IsDir() {
		return fmt.Errorf("vault: %s is a directory: remove it through the mount", n.Path)
	}
	return v.settle(n, func(dirfd int) error {
		if err := unix.Unlinkat(dirfd, RefOf(n).Name, 0); err != nil {
			return fmt.Errorf("vault: removing %s: %w", n.CipherPath, err)
		}
		return nil
	})
}

// KeepCopy keeps the conflict copy n, which the caller authenticated: with replace, in the
// place of the entry it is a copy of (for an entry made in a folder made twice, the entry of
// its name under the folder's IV), in one rename, so that a crash leaves the old one or the
// new one; else beside it, under the name it shows under, encrypted properly.
func (v *Vault) KeepCopy(n format.Node, replace bool) error {
	return v.settle(n, func(dirfd int) error {
		iv, err := v.DirIVAt(dirfd)
		if err != nil {
			return err
		}
		if !replace {
			_, err := v.moveNoReplace(n, path.Base(n.Path), iv)
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("vault: /%s already exists", n.Path)
			}
			return err
		}
		// The original's stored name: a copy's base, or for an entry made under a diriv
		// copy's IV the name it has in the folder under the folder's own IV.
		target, createdNameFile := n.Conflict.Base, false
		if n.Conflict.Kind == format.ConflictMadeInSecondFolder {
			if target, createdNameFile, err = v.storeUnder(dirfd, path.Base(n.Conflict.Of), iv); err != nil {
				return fmt.Errorf("vault: %w", err)
			}
		}
		if isFormatFile(target) {
			return fmt.Errorf("vault: /%s: refusing to settle onto %s", n.Path, target)
		}
		if err := unix.Renameat(dirfd, RefOf(n).Name, dirfd, target); err != nil {
			if createdNameFile {
				layout.RemoveLongName(dirfd, target)
			}
			return fmt.Errorf("vault: replacing %s: %w", n.Conflict.Of, err)
		}
		return nil
	})
}

// settle runs step on the directory of the copy n, then removes what went with the copy (its
// own .name file) and makes the change durable.
func (v *Vault) settle(n format.Node, step func(dirfd int) error) error {
	dirfd := RefOf(n).Dirfd
	ownNameFile := v.ownNameFile(n)
	if err := step(dirfd); err != nil {
		return err
	}
	if ownNameFile != "" {
		unix.Unlinkat(dirfd, ownNameFile, 0)
	}
	if err := unix.Fsync(dirfd); err != nil {
		return fmt.Errorf("vault: syncing the directory of %s: %w", n.CipherPath, err)
	}
	return nil
}

// isFormatFile reports whether name is one of the format's own files, which settling never
// renames onto or removes as a copy.
func isFormatFile(name string) bool {
	return name == crypto.DirIVName || name == crypto.ConfName || crypto.IsLongNameFile(name)
}

// ownNameFile is the .name file that belongs to entry n alone and goes when n goes: a long
// name's own for an entry made under a diriv copy's IV, or a copy the tool made of the
// original's (then the original keeps its own). "" when there is none.
func (v *Vault) ownNameFile(n format.Node) string {
	file := RefOf(n).Name + crypto.LongNameSuffix
	stored := n.Conflict.Base
	if n.Conflict.Kind == format.ConflictMadeInSecondFolder {
		stored = RefOf(n).Name
	}
	if !crypto.IsLongName(stored) {
		return ""
	}
	if _, err := layout.ReadLongNameFile(RefOf(n).Dirfd, file, stored, v.Names); err != nil {
		return ""
	}
	return file
}

// storeUnder returns the stored name of plain in the directory dirfd under iv, first writing
// (and syncing) its .name file if it is a long name.
func (v *Vault) storeUnder(dirfd int, plain string, iv []byte) (stored string, created bool, err error) {
	stored, encoded, long, err := v.Names.StoredName(plain, iv)
	if err != nil || !long {
		return stored, false, err
	}
	if created, err = layout.WriteLongName(dirfd, stored, encoded); err != nil {
		return "", false, err
	}
	return stored, created, syncAt(dirfd, stored+crypto.LongNameSuffix)
}

// syncAt makes the file name in dirfd durable.
func syncAt(dirfd int, name string) error {
	fd, err := layout.OpenFile(dirfd, name, unix.O_RDONLY|unix.O_NONBLOCK, 0, nil)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fsync(fd)
}

// moveNoReplace renames entry n to plaintext name plain in its directory under iv, unless
// that name exists (an error wrapping fs.ErrExist). It returns the new stored name.
func (v *Vault) moveNoReplace(n format.Node, plain string, iv []byte) (string, error) {
	stored, created, err := v.storeUnder(RefOf(n).Dirfd, plain, iv)
	if err != nil {
		return "", fmt.Errorf("vault: %w", err)
	}
	if isFormatFile(stored) {
		return "", fmt.Errorf("vault: /%s: refusing to settle onto %s", n.Path, stored)
	}
	if err := unix.Renameat2(RefOf(n).Dirfd, RefOf(n).Name, RefOf(n).Dirfd, stored, unix.RENAME_NOREPLACE); err != nil {
		if created {
			layout.RemoveLongName(RefOf(n).Dirfd, stored)
		}
		if errors.Is(err, unix.EEXIST) {
			return "", fmt.Errorf("vault: %s: %w", n.CipherPath, fs.ErrExist)
		}
		return "", fmt.Errorf("vault: renaming %s: %w", n.CipherPath, err)
	}
	return stored, nil
}

// MovedEntry is an entry that was made under a diriv copy's IV (listed as Path, made as Of)
// and now is in the folder under To. Renamed is set when the folder already held Of: To then
// carries a conflict marker.
type MovedEntry struct {
	Path, Of, To string
	Renamed      bool
}

// MergeFolder settles the folder made on two computers f, whose entries the caller
// authenticated: every entry made under a copy of its gocryptfs.diriv is renamed to its own
// name encrypted under the folder's IV (a conflict marker added when the folder already holds
// that name), then the copies are removed (their cipher paths are returned). Each rename is
// atomic and a moved entry decrypts under the folder's IV, so after a crash the folder is
// still made twice with fewer entries under the copy: settling it again finishes.
func (v *Vault) MergeFolder(ctx context.Context, f SplitFolder) (moved []MovedEntry, copies []string, err error) {
	iv, err := v.DirIVAt(f.dirfd)
	if err != nil {
		return nil, nil, err
	}
	for _, n := range f.Entries {
		if err := ctx.Err(); err != nil {
			return moved, nil, err
		}
		plain := path.Base(n.Conflict.Of)
		ownNameFile := v.ownNameFile(n)
		to, renamed := plain, false
		for i := 0; ; i++ {
			_, err := v.moveNoReplace(n, to, iv)
			if err == nil {
				break
			}
			if !errors.Is(err, fs.ErrExist) || i > 100 {
				return moved, nil, err
			}
			// The folder holds the name: the entry gets a conflict marker, as a copy shows.
			renamed = true
			to = layout.ConflictName(plain, n.Conflict.Conflict, func(s string) bool {
				stored, _, _, err := v.Names.StoredName(s, iv)
				var st unix.Stat_t
				return err != nil || unix.Fstatat(RefOf(n).Dirfd, stored, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
			})
		}
		if ownNameFile != "" {
			unix.Unlinkat(RefOf(n).Dirfd, ownNameFile, 0)
		}
		moved = append(moved, MovedEntry{Path: n.Path, Of: n.Conflict.Of, To: path.Join(f.Path, to), Renamed: renamed})
	}
	// The copies go only once nothing is left under their IVs, and after the moves are durable.
	if err := unix.Fsync(f.dirfd); err != nil {
		return moved, nil, fmt.Errorf("vault: syncing %s: %w", format.FolderArg(f.Path), err)
	}
	for _, c := range f.Copies {
		if c.iv == nil {
			continue // not a diriv (wrong size): nothing was placed under it; leave it to the user
		}
		if err := unix.Unlinkat(f.dirfd, c.Name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
			return moved, copies, fmt.Errorf("vault: removing %s: %w", path.Join(f.CipherPath, c.Name), err)
		}
		copies = append(copies, path.Join(f.CipherPath, c.Name))
	}
	if err := unix.Fsync(f.dirfd); err != nil {
		return moved, copies, fmt.Errorf("vault: syncing %s: %w", format.FolderArg(f.Path), err)
	}
	return moved, copies, nil
}
