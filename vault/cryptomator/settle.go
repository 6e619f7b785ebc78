package cryptomator

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// Settling a sync tool's conflict copy (Entry.Conflict set) changes one name in its
// directory's folder with one unlink or rename, then syncs the folder, so a crash leaves the
// state before or the state after. That holds for a file stored under a .c9r name, which is
// what is settled here; a copy stored in a folder (a directory, a symlink, a shortened name)
// would take several steps and is refused (ErrSettleUnsupported), as is a copy that is to
// get a name long enough to be shortened.

// ErrSettleUnsupported is wrapped by the refusals to settle a copy that is not a file stored
// under a .c9r name.
var ErrSettleUnsupported = errors.New("only files stored under a .c9r name are settled in a Cryptomator vault")

// checkSettleable refuses what cannot be settled in one step, and a copy that is not one.
func checkSettleable(e Entry) error {
	if e.Conflict == nil {
		return fmt.Errorf("%s: not a conflict copy", e.node())
	}
	if e.Kind != KindFile || e.shortened() || !strings.HasSuffix(e.Conflict.Base, suffixC9R) {
		return fmt.Errorf("%s (a %s): %w; settle it through the mount", e.node(), e.Kind, ErrSettleUnsupported)
	}
	return nil
}

// Authenticate decrypts the whole of the copy e and returns the first part that does not
// authenticate: nothing that does not authenticate gets a clean name.
func (v *Vault) Authenticate(e Entry) error {
	_, err := v.ReadFile(e, io.Discard)
	return err
}

// RemoveCopy deletes the conflict copy e: the original is kept.
func (v *Vault) RemoveCopy(e Entry) error {
	if err := checkSettleable(e); err != nil {
		return err
	}
	return v.inFolder(e.Parent, func(fd int) error { return unix.Unlinkat(fd, e.Stored, 0) })
}

// ReplaceWithCopy renames the conflict copy e, which must authenticate whole, onto the
// entry it is a copy of, in one rename: the copy is kept.
func (v *Vault) ReplaceWithCopy(e Entry) error {
	if err := checkSettleable(e); err != nil {
		return err
	}
	if err := v.Authenticate(e); err != nil {
		return err
	}
	return v.inFolder(e.Parent, func(fd int) error { return unix.Renameat(fd, e.Stored, fd, e.Conflict.Base) })
}

// KeepCopyAs gives the conflict copy e, which must authenticate whole, the plaintext name
// name in its directory (properly encrypted), unless that name exists (an error wrapping
// os.ErrExist): both are kept.
func (v *Vault) KeepCopyAs(e Entry, name string) error {
	if err := checkSettleable(e); err != nil {
		return err
	}
	if err := checkName(name); err != nil {
		return err
	}
	stored, long := v.storedName(e.Parent, name)
	if long != "" {
		return fmt.Errorf("%s: %q would be shortened: %w", e.node(), name, ErrSettleUnsupported)
	}
	if err := v.Authenticate(e); err != nil {
		return err
	}
	return v.inFolder(e.Parent, func(fd int) error {
		err := unix.Renameat2(fd, e.Stored, fd, stored, unix.RENAME_NOREPLACE)
		if errors.Is(err, unix.EEXIST) {
			return os.ErrExist
		}
		return err
	})
}

// inFolder runs change on the descriptor of d's folder, then syncs the folder so that the
// change is durable; errors name the folder.
func (v *Vault) inFolder(d Dir, change func(fd int) error) error {
	f, err := v.root.OpenFile(d.Path, os.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", v.path(d.Path), err)
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
