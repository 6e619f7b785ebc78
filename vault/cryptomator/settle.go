package cryptomator

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/vault/layout"
)

// Settling a sync tool's conflict copy (Entry.Conflict set) in its directory's folder, with
// the rules of an entry's folder (entries.go) the mount renames and removes entries with.
// Each step is one rename or unlink, and the folder is synced after the last, so that a
// crash at any point leaves the original and the copy each readable, or the state asked
// for, at worst beside a folder holding no payload (ErrHalfMade) or a temporary name, which
// hold no data and which readers report or skip:
//
//   - A file under a .c9r name is unlinked or renamed, in one step.
//   - A folder entry (a directory, a symlink, a .c9s name) is removed by renaming it to a
//     temporary name, then emptying it (TakeAway). It replaces its original by moving its
//     payload (dir.c9r, symlink.c9r, contents.c9r) over the original's, atomically, its
//     emptied folder taken away after. It gets a name of its own as the mount renames
//     an entry (Rename): by one rename where its folder can take that name, else by moving
//     its payload into an entry built under the name beforehand.
//   - A directory is a folder of its own (d/...) beside its entry: a copy naming a
//     directory that holds entries is not removed, nor is the original it would replace
//     (ENOTEMPTY, as rmdir(2) refuses), so that no entry is dropped unseen; an emptied
//     directory's folder goes after its entry. A copy naming the original's own directory
//     (its dir.c9r copied as it is) is only an entry too many: keeping either removes it,
//     and keeping both, which would make one directory reachable under two names, is
//     refused (ErrSettleUnsupported).

// ErrSettleUnsupported is wrapped by the refusal to keep both a directory's copy and its
// original when both name the same directory.
var ErrSettleUnsupported = errors.New("a directory's copy naming the original's own directory cannot be kept beside it")

// Authenticate reads the whole of the copy e and returns the first part that does not
// authenticate: nothing that does not authenticate gets a clean name. A file's content and a
// symlink's target are decrypted; a directory's ID must name its folder, whose dirid.c9r
// must hold it (its entries are checked where they are read).
func (v *Vault) Authenticate(e Entry) error {
	switch e.Kind {
	case KindSymlink:
		_, err := v.ReadLink(e)
		return err
	case KindDir:
		d, err := v.OpenDir(e)
		if err == nil {
			err = v.CheckDirIDBackup(d)
		}
		return err
	}
	_, err := v.ReadFile(e, io.Discard)
	return err
}

// RemoveCopy deletes the conflict copy e: the original is kept.
func (v *Vault) RemoveCopy(e Entry) error {
	if e.Conflict == nil {
		return fmt.Errorf("%s: not a conflict copy", e.node())
	}
	return v.inFolder(e.Parent, func(fd int) error {
		if e.Kind == KindDir {
			return v.removeDir(fd, e.Stored, e.Conflict.Base)
		}
		return RemoveEntry(fd, e.Stored, nil)
	})
}

// ReplaceWithCopy puts the conflict copy e, which must authenticate whole, in the place of
// the entry it is a copy of: the copy is kept. Where both are files, or folders of one kind,
// the copy's payload replaces the original's in one rename; otherwise the original is
// removed first, then the copy renamed to its name.
func (v *Vault) ReplaceWithCopy(e Entry) error {
	if e.Conflict == nil {
		return fmt.Errorf("%s: not a conflict copy", e.node())
	}
	if err := v.Authenticate(e); err != nil {
		return err
	}
	base := e.Conflict.Base
	return v.inFolder(e.Parent, func(fd int) error {
		k, err := EntryKind(fd, base)
		switch {
		case errors.Is(err, ErrHalfMade) || err == unix.ENOENT:
			ClearHalfMade(fd, base)
			return layout.RenameNoReplace(fd, e.Stored, fd, base)
		case err != nil:
			return err
		case k == KindDir && e.Kind == KindDir:
			return v.replaceDir(fd, e)
		case k == e.Kind:
			return MoveEntry(fd, e.Stored, k, fd, base, "", true, nil)
		case k == KindDir:
			err = v.removeDir(fd, base, "")
		default:
			err = RemoveEntry(fd, base, nil)
		}
		if err != nil {
			return err
		}
		return layout.RenameNoReplace(fd, e.Stored, fd, base)
	})
}

// KeepCopyAs gives the conflict copy e, which must authenticate whole, the plaintext name
// name in its directory (properly encrypted), unless that name exists (an error wrapping
// os.ErrExist): both are kept.
func (v *Vault) KeepCopyAs(e Entry, name string) error {
	if e.Conflict == nil {
		return fmt.Errorf("%s: not a conflict copy", e.node())
	}
	if err := checkName(name); err != nil {
		return err
	}
	if err := v.Authenticate(e); err != nil {
		return err
	}
	stored, long := v.storedName(e.Parent, name)
	return v.inFolder(e.Parent, func(fd int) error {
		if e.Kind == KindDir {
			id, err := ReadDirID(fd, e.Stored)
			if err != nil {
				return err
			}
			if orig, err := ReadDirID(fd, e.Conflict.Base); err == nil && orig == id {
				return fmt.Errorf("%s: %w", e.node(), ErrSettleUnsupported)
			}
		}
		err := Rename(fd, e.Stored, e.shortened(), fd, stored, long, true, nil, nil)
		if errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("%s: %w", path.Join(e.Parent.Path, stored), os.ErrExist)
		}
		return err
	})
}

// removeDir removes the directory stored in dirfd, which must be empty (ENOTEMPTY) unless
// it is the directory the entry other (if not "") names too: its entry, then its folder.
func (v *Vault) removeDir(dirfd int, stored, other string) error {
	id, err := ReadDirID(dirfd, stored)
	if err != nil {
		return err
	}
	if oid, err := ReadDirID(dirfd, other); other != "" && err == nil && oid == id {
		return TakeAway(dirfd, stored, nil) // the folder is other's
	}
	return v.emptyDirFolder(id, func() error { return TakeAway(dirfd, stored, nil) })
}

// replaceDir replaces the directory the copy e is of with the copy's, by moving the copy's
// dir.c9r over the original's: the original's directory must be empty (ENOTEMPTY), and its
// folder is removed after. A copy naming the original's directory is only removed.
func (v *Vault) replaceDir(dirfd int, e Entry) error {
	id, err := ReadDirID(dirfd, e.Conflict.Base)
	if err != nil {
		return err
	}
	if cid, err := ReadDirID(dirfd, e.Stored); err == nil && cid == id {
		return TakeAway(dirfd, e.Stored, nil)
	}
	return v.emptyDirFolder(id, func() error {
		return MoveEntry(dirfd, e.Stored, KindDir, dirfd, e.Conflict.Base, "", true, nil)
	})
}

// emptyDirFolder removes the directory of the given ID (RemoveDir) with unlink, which makes
// it unreachable: only if it is empty (ENOTEMPTY). A folder already missing is no error.
func (v *Vault) emptyDirFolder(id string, unlink func() error) error {
	rel := v.names.DirPath(id)
	parent, err := v.openFolder(path.Dir(rel))
	var f *os.File
	if err == nil {
		defer parent.Close()
		if f, err = v.openFolder(rel); err == nil {
			defer f.Close()
		}
	}
	if errors.Is(err, layout.ErrCorrupt) {
		return unlink() // no folder: nothing in it to lose
	}
	if err != nil {
		return err
	}
	names, err := f.Readdirnames(-1)
	if err == nil {
		err = RemoveDir(int(parent.Fd()), path.Base(rel), int(f.Fd()), names, unlink, nil)
	}
	if err == unix.ENOTEMPTY {
		err = fmt.Errorf("%s: %w: the directory holds entries; settle them first", rel, err)
	}
	return err
}

// inFolder runs change on the descriptor of d's folder, then syncs the folder so that the
// change is durable; errors name the folder.
func (v *Vault) inFolder(d Dir, change func(fd int) error) error {
	f, err := v.openFolder(d.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	fd := int(f.Fd())
	if err := change(fd); err != nil {
		return fmt.Errorf("%s: %w", v.path(d.Path), err)
	}
	if err := unix.Fsync(fd); err != nil {
		return fmt.Errorf("%s: %w", v.path(d.Path), err)
	}
	return nil
}
