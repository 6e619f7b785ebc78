// Package layout holds the rules of the cipherdir layout that both the offline tools (package
// vault: walk, fsck, export) and the mount (package mountmgr/vfs) follow: how gocryptfs.diriv
// and long-name .name files are read and written, and how directories are opened.
//
// Everything works relative to directory file descriptors, never on string paths into the
// cipherdir: encrypted paths are about 1.4 times longer than their plaintext, so a legal
// plaintext tree can have cipher paths beyond PATH_MAX, and resolving a path component by
// component with O_NOFOLLOW means that someone who can write the cipherdir cannot redirect an
// operation through a symlink swapped in while it runs.
//
// The files read here come from a folder that may be shared or synced, so every reader is
// bounded, and every file is opened through OpenFile (open.go): without blocking (a FIFO
// would otherwise block forever), without following a symlink, and regular files only. The
// mount and the offline tools open their cipher files through it too.
//
// It imports only crypto; vault, vault/cryptomator, mountmgr and mountmgr/vfs import it.
package layout

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
)

// ErrCorrupt is wrapped by every error about a file that is there but malformed, or missing
// where the format requires it. Package vault re-exports it as vault.ErrCorrupt.
var ErrCorrupt = errors.New("vault is corrupt")

// Open flags for the two kinds of directory descriptors.
const (
	// dirPathFlags open a directory only to resolve names in it (no read permission needed).
	dirPathFlags = unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	// dirReadFlags open a directory to list it.
	dirReadFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
)

// Readlink returns the target of the symlink name in dirfd, however long.
func Readlink(dirfd int, name string) ([]byte, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			return nil, err
		}
		if n < size {
			return buf[:n], nil
		}
	}
}

// OpenDir opens directory name in dirfd for listing. A symlink in its place is an error
// (ELOOP or ENOTDIR), never followed.
func OpenDir(dirfd int, name string) (int, error) {
	return openat(dirfd, name, dirReadFlags, 0)
}

// OpenDirPath opens directory name in dirfd as an O_PATH descriptor: enough to create, remove,
// rename and stat entries in it, and usable even when the directory has no read permission.
func OpenDirPath(dirfd int, name string) (int, error) {
	return openat(dirfd, name, dirPathFlags, 0)
}

// ReadDirNames lists the directory open at dirfd (any descriptor of it, O_PATH too), without
// "." and "..".
func ReadDirNames(dirfd int) ([]string, error) {
	var names []string
	err := ScanDirNames(dirfd, func(name string) { names = append(names, name) })
	if err != nil {
		return nil, err
	}
	return names, nil
}

// ScanDirNames is ReadDirNames that calls fn with each name instead of keeping them all: a
// look through a large directory for a few names holds one buffer of names at a time.
func ScanDirNames(dirfd int, fn func(name string)) error {
	fd, err := OpenDir(dirfd, ".")
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var names []string
	buf := make([]byte, 8192)
	for {
		n, err := unix.ReadDirent(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names[:0])
		for _, name := range names {
			fn(name)
		}
	}
}

// openat retries on EINTR, which FUSE-backed and network file systems can return.
func openat(dirfd int, name string, flags int, mode uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, mode)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// ReadSmall reads the regular file name in dirfd, which must hold between 1 and max bytes.
func ReadSmall(dirfd int, name string, max int) ([]byte, error) {
	// Read at once to the end: it may stay non-blocking.
	fd, err := OpenFile(dirfd, name, unix.O_RDONLY|unix.O_NONBLOCK, 0, nil)
	if err != nil {
		switch {
		case err == unix.ENOENT:
			return nil, fmt.Errorf("%w: missing %s", ErrCorrupt, name)
		case err == unix.ELOOP:
			return nil, fmt.Errorf("%w: %s is a symlink", ErrCorrupt, name)
		case IsNotRegular(err):
			return nil, err
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer unix.Close(fd)
	buf := make([]byte, max+1)
	n := 0
	for n < len(buf) {
		m, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
		if m == 0 {
			break
		}
		n += m
	}
	switch {
	case n == 0:
		return nil, fmt.Errorf("%w: %s is empty", ErrCorrupt, name)
	case n > max:
		return nil, fmt.Errorf("%w: %s is longer than %d bytes", ErrCorrupt, name, max)
	}
	return buf[:n], nil
}

// typeName names a file type for error messages.
func typeName(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFCHR, unix.S_IFBLK:
		return "a device node"
	case unix.S_IFLNK:
		return "a symlink"
	}
	return fmt.Sprintf("file type %#o", mode&unix.S_IFMT)
}

// ReadDirIV reads the gocryptfs.diriv of the directory open at dirfd: exactly 16 bytes.
func ReadDirIV(dirfd int) ([]byte, error) {
	return ReadDirIVFile(dirfd, crypto.DirIVName)
}

// ReadDirIVFile is ReadDirIV for a diriv under another name (a sync tool's conflict copy).
func ReadDirIVFile(dirfd int, file string) ([]byte, error) {
	b, err := ReadSmall(dirfd, file, crypto.DirIVLen)
	if err != nil {
		return nil, err
	}
	iv, err := ParseDirIV(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return iv, nil
}

// ParseDirIV checks the content of a gocryptfs.diriv, read by the caller, and returns the IV:
// exactly crypto.DirIVLen bytes, any value.
func ParseDirIV(b []byte) ([]byte, error) {
	if len(b) != crypto.DirIVLen {
		return nil, fmt.Errorf("%w: the directory IV is %d bytes, want %d", ErrCorrupt, len(b), crypto.DirIVLen)
	}
	return b, nil
}

// WriteDirIV creates the gocryptfs.diriv of the new directory open at dirfd: 16 random bytes,
// mode 0440 as gocryptfs writes it, synced before it counts. On failure nothing is left.
func WriteDirIV(dirfd int) ([]byte, error) {
	iv := make([]byte, crypto.DirIVLen)
	if _, err := rand.Read(iv); err != nil {
		return nil, fmt.Errorf("reading a random directory IV: %w", err)
	}
	if err := WriteNew(dirfd, crypto.DirIVName, iv, 0o440, true); err != nil {
		return nil, err
	}
	return iv, nil
}

// WriteNew creates name in dirfd (it must not exist) with mode, holding b, synced if sync; on
// failure it removes it again.
func WriteNew(dirfd int, name string, b []byte, mode uint32, sync bool) error {
	fd, err := openat(dirfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
	if err != nil {
		return fmt.Errorf("creating %s: %w", name, err)
	}
	werr := writeAll(fd, b)
	if werr == nil && sync {
		werr = unix.Fdatasync(fd)
	}
	if cerr := unix.Close(fd); werr == nil {
		werr = cerr
	}
	if werr != nil {
		unix.Unlinkat(dirfd, name, 0)
		return fmt.Errorf("writing %s: %w", name, werr)
	}
	return nil
}

func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// ReadLongName returns the encoded name behind the long-name entry stored (a
// gocryptfs.longname.HASH name) in dirfd: the content of its .name file, which must hash to
// stored.
func ReadLongName(dirfd int, stored string, names *crypto.NameTransform) (string, error) {
	return ReadLongNameFile(dirfd, stored+crypto.LongNameSuffix, stored, names)
}

// ReadLongNameFile is ReadLongName with the .name file under another name (a sync tool's
// conflict copy of it).
func ReadLongNameFile(dirfd int, file, stored string, names *crypto.NameTransform) (string, error) {
	b, err := ReadSmall(dirfd, file, crypto.MaxLongNameFile)
	if err != nil {
		return "", err
	}
	encoded, err := ParseLongName(b, stored, names)
	if err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	return encoded, nil
}

// ParseLongName checks the content b of the .name file of the long-name entry stored (a
// gocryptfs.longname.HASH name) and returns the encoded name it holds: 1 to
// crypto.MaxLongNameFile bytes whose hash is the one in stored. It does not decrypt the name.
func ParseLongName(b []byte, stored string, names *crypto.NameTransform) (string, error) {
	if len(b) == 0 || len(b) > crypto.MaxLongNameFile {
		return "", fmt.Errorf("%w: long name of %d bytes, want 1 to %d", ErrCorrupt, len(b), crypto.MaxLongNameFile)
	}
	encoded := string(b)
	if names.HashLongName(encoded) != stored {
		return "", fmt.Errorf("%w: the long name does not match its entry's hash", ErrCorrupt)
	}
	return encoded, nil
}

// WriteLongName writes the .name file of long-name entry stored in dirfd before the entry
// itself appears, as gocryptfs does, and syncs its content, so that once the entry is on disk
// its name is too (a file system may otherwise commit the entry before the .name file's
// data after a power cut, leaving the entry without a name). It reports whether it created
// the file, so that a caller whose entry then fails to appear can remove it again. An
// existing .name file that holds encoded is kept. One that holds anything else is what a
// crash left between creating the file and writing it (empty or short): stored is the hash
// of encoded, so no entry can be named by other content, and it is written again (kept, the
// entry would appear without a name).
func WriteLongName(dirfd int, stored, encoded string) (created bool, err error) {
	file := stored + crypto.LongNameSuffix
	err = WriteNew(dirfd, file, []byte(encoded), 0o400, true)
	if !errors.Is(err, unix.EEXIST) {
		return err == nil, err
	}
	if have, rerr := ReadSmall(dirfd, file, crypto.MaxLongNameFile); rerr == nil && string(have) == encoded {
		return false, nil
	}
	if err := unix.Unlinkat(dirfd, file, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return false, fmt.Errorf("replacing %s: %w", file, err)
	}
	err = WriteNew(dirfd, file, []byte(encoded), 0o400, true)
	return err == nil, err
}

// RemoveLongName removes the .name file of the long-name entry stored in dirfd.
func RemoveLongName(dirfd int, stored string) error {
	return unix.Unlinkat(dirfd, stored+crypto.LongNameSuffix, 0)
}

// tempPrefix begins the names of the directories MakeDir and RemoveDir build and tear down
// out of sight. It is not a name of the format (no encrypted name starts with "gocryptfs."),
// so gocryptfs skips such a directory as a name that does not decrypt.
const tempPrefix = "gocryptfs.vaultui-tmp."

// IsTemp reports whether name is one of the temporary directories of MakeDir and RemoveDir:
// found in a cipherdir, it is what a crash left, it holds nothing of the vault's content and
// can be removed (RemoveTemp).
func IsTemp(name string) bool { return strings.HasPrefix(name, tempPrefix) }

func tempName() (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return tempPrefix + hex.EncodeToString(b), nil
}

// MakeDir creates directory name in dirfd with mode perm and, with perDirIV, its
// gocryptfs.diriv, and returns the IV. A directory with names in it cannot be made with its
// diriv in one system call, and one without its diriv under its name is damage (nothing can
// be created or listed in it); so it is made under a temporary name (IsTemp), its diriv
// synced and its own entries synced, and renamed into place: a crash at any point leaves no
// directory, or the whole one, or a temporary directory. On error nothing is left.
func MakeDir(dirfd int, name string, perm uint32, perDirIV bool) (iv []byte, err error) {
	if !perDirIV {
		// mkdirat makes it whole; it applies the daemon's umask, so the mode is set after (a
		// crash between leaves it with mode 0700).
		if err := unix.Mkdirat(dirfd, name, 0o700); err != nil {
			return nil, err
		}
		cfd, err := OpenDir(dirfd, name)
		if err == nil {
			err = unix.Fchmod(cfd, keepSetgid(cfd, perm))
			unix.Close(cfd)
		}
		if err != nil {
			unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR)
			return nil, err
		}
		return nil, nil
	}
	tmp, err := tempName()
	if err != nil {
		return nil, err
	}
	// Owner-writable until the diriv is in.
	if err := unix.Mkdirat(dirfd, tmp, 0o700); err != nil {
		return nil, err
	}
	cfd, err := OpenDir(dirfd, tmp)
	if err != nil {
		unix.Unlinkat(dirfd, tmp, unix.AT_REMOVEDIR)
		return nil, err
	}
	defer unix.Close(cfd)
	if iv, err = WriteDirIV(cfd); err == nil {
		if err = unix.Fchmod(cfd, keepSetgid(cfd, perm)); err == nil {
			err = unix.Fsync(cfd)
		}
		if err == nil {
			err = RenameNoReplace(dirfd, tmp, dirfd, name)
		}
		if err != nil {
			unix.Unlinkat(cfd, crypto.DirIVName, 0)
		}
	}
	if err != nil {
		unix.Unlinkat(dirfd, tmp, unix.AT_REMOVEDIR)
		return nil, err
	}
	return iv, nil
}

// keepSetgid adds to perm the setgid bit that the new directory open at cfd took from its
// parent: a directory made in a setgid directory is setgid too (and of its group), and a
// chmod to perm alone would drop that.
func keepSetgid(cfd int, perm uint32) uint32 {
	var st unix.Stat_t
	if unix.Fstat(cfd, &st) == nil {
		perm |= st.Mode & unix.S_ISGID
	}
	return perm
}

// RenameNoReplace renames without replacing anything (EEXIST), also where the file system
// does not know the flag and refusing would be wrong: there it checks first.
func RenameNoReplace(ofd int, old string, nfd int, new string) error {
	err := unix.Renameat2(ofd, old, nfd, new, unix.RENAME_NOREPLACE)
	if err == unix.EINVAL {
		var st unix.Stat_t
		if unix.Fstatat(nfd, new, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
			return unix.EEXIST
		}
		err = unix.Renameat(ofd, old, nfd, new)
	}
	return err
}

// RemoveDir removes directory name in dirfd, open at cfd, whose entries are given: with
// perDirIV it must hold nothing but its gocryptfs.diriv and temporary directories (IsTemp);
// without, nothing. Its diriv cannot go in the same system call as the directory, and the directory
// without it under its name is damage; so it is renamed to a temporary name first: a crash
// leaves the directory, or nothing, or a temporary directory. If the removal fails (something
// was put into it meanwhile), the directory is put back as it was.
func RemoveDir(dirfd, cfd int, name string, entries []string, perDirIV bool) error {
	if !perDirIV {
		return unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR)
	}
	var temps []string
	hasIV := false
	for _, e := range entries {
		switch {
		case e == crypto.DirIVName:
			hasIV = true
		case IsTemp(e):
			temps = append(temps, e)
		default:
			return unix.ENOTEMPTY
		}
	}
	for _, t := range temps {
		if err := RemoveTemp(cfd, t); err != nil {
			return unix.ENOTEMPTY
		}
	}
	if !hasIV {
		return unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR)
	}
	iv, ivErr := ReadDirIV(cfd) // a damaged diriv is removed with its directory
	tmp, err := tempName()
	if err != nil {
		return err
	}
	if err := unix.Renameat(dirfd, name, dirfd, tmp); err != nil {
		return err
	}
	if err := unix.Unlinkat(cfd, crypto.DirIVName, 0); err != nil && err != unix.ENOENT {
		RenameNoReplace(dirfd, tmp, dirfd, name)
		return err
	}
	err = unix.Unlinkat(dirfd, tmp, unix.AT_REMOVEDIR)
	if err != nil {
		if ivErr == nil { // put the IV back so the directory stays readable
			WriteNew(cfd, crypto.DirIVName, iv, 0o440, true)
		}
		RenameNoReplace(dirfd, tmp, dirfd, name)
	}
	return err
}

// RemoveTemp removes the temporary directory name (IsTemp) in dirfd that a crash during
// MakeDir or RemoveDir left: empty or holding only a diriv.
func RemoveTemp(dirfd int, name string) error {
	if !IsTemp(name) {
		return fmt.Errorf("%s is not a temporary directory", name)
	}
	cfd, err := OpenDir(dirfd, name)
	if err != nil {
		return err
	}
	defer unix.Close(cfd)
	if err := unix.Unlinkat(cfd, crypto.DirIVName, 0); err != nil && err != unix.ENOENT {
		return err
	}
	return unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR)
}

// Errno returns the errno an error from this package stands for, for FUSE: EIO for a corrupt
// file, the system call's own errno otherwise.
func Errno(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	if errors.Is(err, ErrCorrupt) {
		return syscall.EIO
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return syscall.EIO
}
