package cryptomator

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/vault/layout"
)

// An entry's folder, on directory descriptors: the one home of these rules, for the offline
// reader, writer and settling (Vault) and for the mount (mountmgr/vfs) alike, as vault/layout
// is for gocryptfs vaults (the package doc describes the entries). Every function works
// relative to the descriptor of the folder holding the entry and never follows a symlink.

// ErrHalfMade is an entry folder that holds no payload at all (nothing but, for a .c9s
// name, its name.c9s): what a crash leaves when it stops a rename that moves an entry's
// payload into a new folder (a file's name becoming long, say) after the folder was placed
// and before the payload arrived. The payload is still under its old name; the folder holds
// no data, and may be removed.
var ErrHalfMade = errors.New("an entry folder holding no payload (an interrupted rename left it; it holds no data)")

// Mode returns k as the file type bits of a stat mode (S_IFREG, S_IFDIR, S_IFLNK).
func (k Kind) Mode() uint32 {
	return [...]uint32{syscall.S_IFREG, syscall.S_IFDIR, syscall.S_IFLNK}[k]
}

// IsShortened reports whether the stored name is a shortened one (a .c9s folder).
func IsShortened(stored string) bool { return strings.HasSuffix(stored, suffixC9S) }

// payloadNames are the files that tell what a folder entry is, by the kind each makes it.
var payloadNames = [...]string{KindFile: ContentsFile, KindDir: DirFile, KindSymlink: SymlinkFile}

// OpenEntry opens the folder of the folder entry stored in dirfd, O_PATH: a symlink or a
// file in its place is refused (ELOOP, ENOTDIR).
func OpenEntry(dirfd int, stored string) (int, error) { return layout.OpenDirPath(dirfd, stored) }

// inEntry calls fn with the folder of the entry stored in dirfd, open (OpenEntry).
func inEntry[T any](dirfd int, stored string, fn func(efd int) (T, error)) (T, error) {
	efd, err := OpenEntry(dirfd, stored)
	if err != nil {
		var zero T
		return zero, err
	}
	defer unix.Close(efd)
	return fn(efd)
}

// PayloadIn returns the payload file of the entry folder open at efd (stored is its name)
// and the kind it makes the entry. Exactly one payload must be there, contents.c9r only
// under a .c9s name: a folder holding nothing but perhaps its name.c9s is ErrHalfMade, any
// other shape is damage (layout.ErrCorrupt).
func PayloadIn(efd int, stored string) (string, Kind, error) {
	found, kind := "", Kind(0)
	for _, k := range []Kind{KindDir, KindSymlink, KindFile} {
		if k == KindFile && !IsShortened(stored) {
			continue
		}
		var st unix.Stat_t
		if unix.Fstatat(efd, payloadNames[k], &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
			if found != "" {
				return "", 0, fmt.Errorf("%w: a folder holding both %s and %s", layout.ErrCorrupt, found, payloadNames[k])
			}
			found, kind = payloadNames[k], k
		}
	}
	if found == "" {
		if halfMade(efd) {
			return "", 0, ErrHalfMade
		}
		return "", 0, fmt.Errorf("%w: a folder holding none of %s, %s, %s", layout.ErrCorrupt, DirFile, SymlinkFile, ContentsFile)
	}
	return found, kind, nil
}

// FolderKind tells what the folder entry stored in dirfd is, from its payload (PayloadIn).
func FolderKind(dirfd int, stored string) (Kind, error) {
	return inEntry(dirfd, stored, func(efd int) (Kind, error) {
		_, k, err := PayloadIn(efd, stored)
		return k, err
	})
}

// EntryKind tells what the entry stored in dirfd is: a regular file under a .c9r name is a
// file, a folder what its payload makes it (FolderKind); anything else is damage.
func EntryKind(dirfd int, stored string) (Kind, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, stored, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, err
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		if !IsShortened(stored) {
			return KindFile, nil
		}
	case unix.S_IFDIR:
		return FolderKind(dirfd, stored)
	}
	return 0, fmt.Errorf("%w: %s where a file or folder belongs", layout.ErrCorrupt, (&layout.NotRegularError{Mode: st.Mode}).Kind())
}

// EntryType is the file type of the entry stored in dirfd (ENOENT if there is none): for a
// folder, the type its payload makes it (FolderKind); anything else as it is.
func EntryType(dirfd int, stored string) (uint32, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, stored, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		k, err := FolderKind(dirfd, stored)
		return k.Mode(), err
	}
	return st.Mode & unix.S_IFMT, nil
}

// KindOf is the kind of an entry of the file type typ: a directory, a symlink, else a file.
func KindOf(typ uint32) Kind {
	switch typ {
	case syscall.S_IFDIR:
		return KindDir
	case syscall.S_IFLNK:
		return KindSymlink
	}
	return KindFile
}

// halfMade reports whether the entry folder open at efd holds nothing but perhaps its
// name.c9s (ErrHalfMade). The mount treats the name as free: it hides the folder and removes
// it when the name is used again (ClearHalfMade).
func halfMade(efd int) bool {
	names, err := layout.ReadDirNames(efd)
	return err == nil && !slices.ContainsFunc(names, func(n string) bool { return n != NameFile })
}

// ClearHalfMade removes the entry stored in dirfd if it is a half-made folder (ErrHalfMade),
// and reports whether it did.
func ClearHalfMade(dirfd int, stored string) bool {
	ok, _ := inEntry(dirfd, stored, func(efd int) (bool, error) { return halfMade(efd), nil })
	return ok && RemoveShell(dirfd, stored) == nil
}

// Payload returns where the payload of an entry of kind k stored in dirfd is (or goes): the
// entry itself for a file under a .c9r name (fd is then dirfd), else its file in the entry's
// folder, opened (close fd when it is not dirfd).
func Payload(dirfd int, stored string, k Kind) (fd int, name string, err error) {
	if k == KindFile && !IsShortened(stored) {
		return dirfd, stored, nil
	}
	efd, err := OpenEntry(dirfd, stored)
	return efd, payloadNames[k], err
}

// TempName is a fresh temporary name, for an entry being built or taken apart: not an entry
// of the format, which readers skip.
func TempName() string {
	var b [8]byte
	rand.Read(b[:])
	return tempPrefix + hex.EncodeToString(b[:])
}

// IsTemp reports whether a stored name is a temporary one (TempName).
func IsTemp(name string) bool { return strings.HasPrefix(name, tempPrefix) }

// Skipped reports whether a name in a directory's folder is none of its entries, nor
// anything to report: its dirid.c9r, a temporary name.
func Skipped(name string) bool { return name == dirIDBackup || IsTemp(name) }

// BuildEntry builds an entry folder in dirfd under a temporary name, durably: with the
// name.c9s of long (the full encrypted name, "" for an entry under a .c9r name) and whatever
// fill puts in it (given the folder, open O_PATH). It returns the temporary name, for
// PlaceEntry; on error nothing is left.
func BuildEntry(dirfd int, long string, fill func(efd int) error) (string, error) {
	tmp := TempName()
	if err := unix.Mkdirat(dirfd, tmp, 0o700); err != nil {
		return "", err
	}
	efd, err := OpenEntry(dirfd, tmp)
	if err == nil {
		if long != "" {
			err = layout.WriteNew(efd, NameFile, []byte(long), 0o600, true)
		}
		if err == nil && fill != nil {
			err = fill(efd)
		}
		if err == nil {
			err = SyncFolder(efd)
		}
		unix.Close(efd)
	}
	if err != nil {
		RemoveShell(dirfd, tmp)
		return "", err
	}
	return tmp, nil
}

// MakeEntry makes the folder entry stored in dirfd (long: its full encrypted name when it is
// shortened, else "") holding the payload of kind k, which write writes (given the folder
// and the payload's name): built under a temporary name and renamed into place
// (BuildEntry, PlaceEntry), so that readers see the whole entry or none.
func MakeEntry(dirfd int, stored, long string, k Kind, write func(efd int, name string) error) error {
	tmp, err := BuildEntry(dirfd, long, func(efd int) error { return write(efd, payloadNames[k]) })
	if err != nil {
		return err
	}
	return PlaceEntry(dirfd, tmp, stored)
}

// SyncFolder fsyncs the folder open (O_PATH too) at fd, through a descriptor fsync accepts.
func SyncFolder(fd int) error {
	rfd, err := layout.OpenDir(fd, ".")
	if err != nil {
		return err
	}
	defer unix.Close(rfd)
	return unix.Fsync(rfd)
}

// RemoveShell removes a folder the format uses (an entry's folder, or a directory's d/ folder
// once its entry is gone) with the format's files in it: anything else in it makes the
// removal fail (ENOTEMPTY), so nothing it does not know is lost.
func RemoveShell(dirfd int, name string) error {
	efd, err := OpenEntry(dirfd, name)
	if err == nil {
		for _, f := range []string{NameFile, DirFile, SymlinkFile, ContentsFile, dirIDBackup} {
			unix.Unlinkat(efd, f, 0)
		}
		unix.Close(efd)
	}
	return unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR)
}

// PlaceEntry renames the entry folder tmp (BuildEntry) in dirfd to its stored name, which
// must be free (EEXIST; a half-made folder there is removed first): readers see the whole
// entry or none. On error tmp is removed.
func PlaceEntry(dirfd int, tmp, stored string) error {
	err := layout.RenameNoReplace(dirfd, tmp, dirfd, stored)
	if err == unix.EEXIST && ClearHalfMade(dirfd, stored) {
		err = layout.RenameNoReplace(dirfd, tmp, dirfd, stored)
	}
	if err != nil {
		RemoveShell(dirfd, tmp)
	}
	return err
}

// TakeAway removes the folder entry stored in dirfd: renamed to a temporary name (the entry
// is gone in one system call), then emptied and removed. What is left of it after a failure
// or a crash is a temporary name, which readers skip; a failure to remove it is told to
// left (if not nil), not returned: the entry is gone.
func TakeAway(dirfd int, stored string, left func(tmp string, err error)) error {
	tmp := TempName()
	if err := unix.Renameat(dirfd, stored, dirfd, tmp); err != nil {
		return err
	}
	if err := RemoveShell(dirfd, tmp); err != nil && left != nil {
		left(tmp, err)
	}
	return nil
}

// ReadDirID reads the ID of the directory stored in dirfd from its dir.c9r.
func ReadDirID(dirfd int, stored string) (string, error) {
	b, err := inEntry(dirfd, stored, func(efd int) ([]byte, error) { return layout.ReadSmall(efd, DirFile, MaxDirIDLen) })
	if err != nil {
		return "", err
	}
	return ParseDirID(b)
}

// ErrNotEntry is a name in a directory's folder that is not an entry of the format.
var ErrNotEntry = fmt.Errorf("%w: not an entry of the format (no %s or %s)", layout.ErrCorrupt, suffixC9R, suffixC9S)

// EncryptedName returns the encrypted name of the entry stored in dirfd: stored itself for a
// .c9r name, the full name in its name.c9s for a .c9s folder, which must hash to the folder's
// name (ParseNameFile). base is stored, or for a sync tool's copy the name of the entry it
// copies (the name.c9s copied with it names that). Any other name is ErrNotEntry.
func EncryptedName(dirfd int, stored, base string, threshold int) (string, error) {
	switch {
	case strings.HasSuffix(base, suffixC9R):
		return base, nil
	case !IsShortened(base):
		return "", ErrNotEntry
	}
	b, err := inEntry(dirfd, stored, func(efd int) ([]byte, error) { return layout.ReadSmall(efd, NameFile, maxNameFile) })
	if err != nil {
		return "", err
	}
	return ParseNameFile(b, base, threshold)
}

// ParseCopy reads the name stored in dirfd, the folder of the directory dirID, which is not
// an entry of the format, as a sync tool's conflict copy of one: a tool's marker
// (layout.ParseConflict) whose removal leaves a name that decrypts (for a .c9s folder, the
// hash of the copy's own name.c9s, which names the original's encrypted name). It returns
// the plaintext name of the entry it copies.
func ParseCopy(dirfd int, names *Names, dirID, stored string, threshold int) (layout.Conflict, string, bool) {
	var plain string
	c, ok := layout.ParseConflict(stored, func(base string) bool {
		enc, err := EncryptedName(dirfd, stored, base, threshold)
		if err == nil {
			plain, err = names.Decrypt(dirID, enc)
		}
		return err == nil
	})
	return c, plain, ok
}

// MoveEntry moves the payload of the entry src of kind k in the folder sfd to the stored name
// dst in the folder dfd: the step a rename takes where a .c9s name is involved, since a
// folder cannot take a name its name.c9s does not hash to. With replace, dst holds an entry
// of kind k whose payload is replaced in one rename (a file's content, atomically). Otherwise
// dst must be free: a folder entry is built there first (BuildEntry, PlaceEntry; long is
// dst's full encrypted name when dst is shortened, else "") unless the entry is a file going
// to a .c9r name, and the payload moves in. src's emptied folder is taken away last; a
// failure there is told to left (if not nil), as by TakeAway: the entry has moved. A crash
// leaves src whole, or dst whole beside a folder holding no payload (ErrHalfMade), which
// readers report and the mount hides: never neither.
func MoveEntry(sfd int, src string, k Kind, dfd int, dst, long string, replace bool, left func(tmp string, err error)) error {
	from, fromName, err := Payload(sfd, src, k)
	if err != nil {
		return err
	}
	if from != sfd {
		defer unix.Close(from)
	}
	built := false
	if !replace && (long != "" || k != KindFile) {
		tmp, err := BuildEntry(dfd, long, nil)
		if err != nil {
			return err
		}
		if err := PlaceEntry(dfd, tmp, dst); err != nil {
			return err
		}
		built = true
	}
	to, toName, err := Payload(dfd, dst, k)
	if err != nil {
		return err
	}
	if to != dfd {
		defer unix.Close(to)
	}
	if replace {
		err = unix.Renameat(from, fromName, to, toName)
	} else {
		err = layout.RenameNoReplace(from, fromName, to, toName)
	}
	if err != nil {
		if built {
			RemoveShell(dfd, dst) // the empty entry built for it
		}
		return err
	}
	if from != sfd {
		if err := TakeAway(sfd, src, left); err != nil && left != nil {
			left(src, err)
		}
	}
	return nil
}

// Rename moves the entry src in sfd (srcLong: src is shortened) to dst in dfd (long: dst's
// full encrypted name when it is shortened, else ""), as rename(2) does. What dst holds is
// replaced (EEXIST with noReplace): a folder holding no payload is cleared, a file under it
// gets the content of a file moving there, and anything else is removed first by remove
// (given its type), as gocryptfs does. Between .c9r names it is one rename, atomic when a
// file replaces a file; where a .c9s name is involved the payload moves (MoveEntry), which
// keeps the replacement of a file atomic too. A crash leaves src whole, or dst whole.
func Rename(sfd int, src string, srcLong bool, dfd int, dst, long string, noReplace bool, remove func(typ uint32) error, left func(string, error)) error {
	srcTyp, err := EntryType(sfd, src)
	if err != nil {
		return err
	}
	dstTyp, err := EntryType(dfd, dst)
	if errors.Is(err, ErrHalfMade) && ClearHalfMade(dfd, dst) {
		err = unix.ENOENT
	}
	switch {
	case err == unix.ENOENT:
		dstTyp = 0
	case err != nil:
		return err
	case noReplace:
		return unix.EEXIST
	}
	if dstTyp != 0 && (srcTyp != syscall.S_IFREG || dstTyp != syscall.S_IFREG) {
		if err := remove(dstTyp); err != nil {
			return err
		}
		dstTyp = 0
	}
	switch {
	case srcLong || long != "":
		return MoveEntry(sfd, src, KindOf(srcTyp), dfd, dst, long, dstTyp != 0, left)
	case noReplace:
		return layout.RenameNoReplace(sfd, src, dfd, dst)
	}
	return unix.Renameat(sfd, src, dfd, dst)
}

// RemoveEntry removes the file or symlink stored in dirfd: a file under a .c9r name at once,
// a folder entry by TakeAway, so that a crash never leaves a folder without its payload
// under an entry's name.
func RemoveEntry(dirfd int, stored string, left func(tmp string, err error)) error {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, stored, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return unix.Unlinkat(dirfd, stored, 0)
	}
	return TakeAway(dirfd, stored, left)
}

// RemoveDir removes a directory whose d/ folder is name in pfd, open at cfd and listing
// names: if it holds none of the directory's entries (only its dirid.c9r and temporary
// names; else ENOTEMPTY), unlink takes its entry away, then the folder goes, so that a crash
// leaves an unreferenced folder, never an entry naming none. A failure to remove the folder
// is told to left (if not nil): the directory is gone.
func RemoveDir(pfd int, name string, cfd int, names []string, unlink func() error, left func(string, error)) error {
	if !holdsNoEntries(names) {
		return unix.ENOTEMPTY
	}
	if err := unlink(); err != nil {
		return err
	}
	for _, n := range names {
		if IsTemp(n) {
			RemoveShell(cfd, n)
		}
	}
	if err := RemoveShell(pfd, name); err != nil && left != nil {
		left(name, err)
	}
	return nil
}

// holdsNoEntries reports whether a d/ folder listing names holds none of its directory's
// entries: only its dirid.c9r and temporary names.
func holdsNoEntries(names []string) bool {
	return !slices.ContainsFunc(names, func(n string) bool { return n != dirIDBackup && !IsTemp(n) })
}

// RemoveCopyOfDir removes the entry stored in dirfd when it is a sync tool's copy of an entry
// of dirfd naming the same directory id (its dir.c9r copied as it is), and reports whether
// it was one. The directory is the original's: only the copy's entry goes (unlink), under
// rmdir's rule all the same (ENOTEMPTY while names, its folder's listing, holds entries).
func RemoveCopyOfDir(dirfd int, stored, id string, names []string, unlink func() error) (bool, error) {
	_, copied := layout.ParseConflict(stored, func(base string) bool {
		bid, err := ReadDirID(dirfd, base)
		return err == nil && bid == id
	})
	switch {
	case !copied:
		return false, nil
	case !holdsNoEntries(names):
		return true, unix.ENOTEMPTY
	}
	return true, unlink()
}

// MakeDirFolder makes the d/ folder name in pfd (d/XX) of a new directory, with mode and its
// dirid.c9r (backup: the directory's ID encrypted as a file, Seal), durably, before an entry
// names it: a crash leaves an unreferenced folder at worst, never an entry naming none. On
// error nothing is left.
func MakeDirFolder(pfd int, name string, backup []byte, mode uint32) error {
	if err := unix.Mkdirat(pfd, name, 0o700); err != nil {
		return err
	}
	dfd, err := layout.OpenDir(pfd, name)
	if err == nil {
		err = layout.WriteNew(dfd, dirIDBackup, backup, 0o600, true)
		if err == nil {
			err = unix.Fchmod(dfd, mode&07777)
		}
		unix.Close(dfd)
	}
	if err != nil {
		RemoveShell(pfd, name)
	}
	return err
}

// Seal returns b encrypted as a file's content (a symlink's target, a dirid.c9r).
func (c *Content) Seal(b []byte) ([]byte, error) {
	var out bytes.Buffer
	_, err := c.Encrypt(&out, bytes.NewReader(b))
	return out.Bytes(), err
}

// DecryptSmall returns the content of the encrypted file name in dirfd (a symlink.c9r, a
// dirid.c9r), which must hold at most max bytes: a larger one is refused unread
// (layout.ErrCorrupt), not cut short. Anything but a regular file is a
// *layout.NotRegularError; what does not authenticate wraps layout.ErrCorrupt.
func (c *Content) DecryptSmall(dirfd int, name string, max int64) ([]byte, error) {
	var st unix.Stat_t
	fd, err := layout.OpenFile(dirfd, name, unix.O_RDONLY, 0, &st)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	if n, ok := c.geo.PlainSize(st.Size); !ok || n > max {
		return nil, fmt.Errorf("%w: %d bytes, not an encrypted file of at most %d bytes", layout.ErrCorrupt, st.Size, max)
	}
	var b bytes.Buffer
	if _, err := c.Decrypt(&b, io.LimitReader(f, st.Size)); err != nil {
		return nil, fmt.Errorf("%w: %w", layout.ErrCorrupt, err)
	}
	return b.Bytes(), nil
}
