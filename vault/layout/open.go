package layout

import (
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Opening a file of the cipherdir. Whoever can write the folder (a sync client, another
// machine, an attacker) can put anything under a name where a regular file is expected. A
// FIFO blocks a plain open(2) for reading until someone opens it for writing: the daemon sat
// in such an open for ten minutes, deaf to SIGTERM, and the reader with it. A device reads
// without end. So every open of a file of the cipherdir goes through OpenFile or Reopen:
// they open without blocking and without following a symlink, and hand back only a regular
// file; anything else is a *NotRegularError (wrapping ErrCorrupt: EIO through the mount).
// Directories are opened with O_DIRECTORY (OpenDir) or O_PATH (OpenDirPath), neither of
// which can block.

// NotRegularError is returned for a file of the cipherdir that is there but is not a regular
// file. Name is what the caller gave: a name in its directory, or a path.
type NotRegularError struct {
	Name string
	Mode uint32 // st_mode of what is there
}

func (e *NotRegularError) Error() string {
	return ErrCorrupt.Error() + ": " + e.Name + " is not a regular file (" + typeName(e.Mode) + ")"
}

func (e *NotRegularError) Unwrap() error { return ErrCorrupt }

// Kind names what is there instead ("a FIFO").
func (e *NotRegularError) Kind() string { return typeName(e.Mode) }

// OpenFile opens the file name in dirfd (a path, with unix.AT_FDCWD) with flags, plus
// O_NOFOLLOW (a symlink in its place is ELOOP), O_CLOEXEC and, while it is opened and
// checked, O_NONBLOCK, which is cleared again unless flags has it (regular files ignore it,
// but a file system under the cipherdir may not). mode is for O_CREAT. It fills st (if not
// nil) with the file's stat. Anything but a regular file is closed again and refused with a
// *NotRegularError; other errors are the system call's errno.
func OpenFile(dirfd int, name string, flags int, mode uint32, st *unix.Stat_t) (int, error) {
	fd, err := openat(dirfd, name, flags|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, mode)
	if err != nil {
		return -1, err
	}
	return checkRegular(fd, name, flags, st)
}

// Reopen opens the file that fd (any descriptor of it, O_PATH too) holds once more, with
// flags, through its /proc/self/fd link, under the rules of OpenFile. The link is followed:
// that is the point of it.
func Reopen(fd int, flags int, st *unix.Stat_t) (int, error) {
	p := "/proc/self/fd/" + strconv.Itoa(fd)
	nfd, err := openat(unix.AT_FDCWD, p, flags&^unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	return checkRegular(nfd, p, flags, st)
}

// checkRegular keeps fd, opened non-blocking for flags, if it is a regular file.
func checkRegular(fd int, name string, flags int, st *unix.Stat_t) (int, error) {
	var own unix.Stat_t
	if st == nil {
		st = &own
	}
	if err := unix.Fstat(fd, st); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return -1, &NotRegularError{Name: name, Mode: st.Mode}
	}
	if flags&unix.O_NONBLOCK == 0 {
		// F_SETFL sets these status flags at once; keep the ones the caller asked for.
		keep := flags & (unix.O_APPEND | unix.O_DIRECT | unix.O_NOATIME)
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, keep); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	return fd, nil
}

// IsNotRegular reports whether err is (or wraps) a *NotRegularError.
func IsNotRegular(err error) bool {
	var nr *NotRegularError
	return errors.As(err, &nr)
}

// ReadDirPath is os.ReadDir for a path that must be a directory (a cipherdir, one of its
// folders): opened with O_DIRECTORY, so that a FIFO in its place fails with ENOTDIR instead
// of blocking the open as os.ReadDir's plain open does. The entries are sorted by name.
func ReadDirPath(dir string) ([]os.DirEntry, error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	slices.SortFunc(ents, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, err
}
