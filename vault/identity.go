package vault

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// ID identifies a directory, a vault's cipherdir above all, by its device and inode: two
// paths to one directory (through a symlink, a bind mount, "..", another spelling) have one
// ID. "Identity, not spelling" (issue 24): whether two paths are one vault, or one path lies
// inside a vault, is decided by IDs, never by comparing path strings.
type ID struct{ Dev, Ino uint64 }

// IsZero reports whether id is the zero ID (no directory).
func (id ID) IsZero() bool { return id == ID{} }

// IDOf returns the ID of the directory at path, following symlinks (as every use of the path
// would). The directory is opened and fstat'ed, so the ID is that of what the path led to.
func IDOf(path string) (ID, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return ID{}, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	return fdID(fd, path)
}

func fdID(fd int, path string) (ID, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return ID{}, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	return ID{Dev: st.Dev, Ino: st.Ino}, nil
}

// Inside reports whether path is the directory dir or lies below it. path need not exist:
// its nearest existing ancestor stands for it (what does not exist yet would be made there).
// From that directory up to the root, each directory is reached through "..", as the kernel
// resolves it, not by trimming the path's spelling, and compared with dir by ID: a symlink,
// a bind mount or a second spelling cannot hide that path is inside dir. path must be
// absolute.
func Inside(path string, dir ID) (bool, error) {
	if !filepath.IsAbs(path) {
		return false, fmt.Errorf("%s: not an absolute path", path)
	}
	p := filepath.Clean(path)
	fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	for errors.Is(err, unix.ENOENT) && p != "/" {
		p = filepath.Dir(p)
		fd, err = unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return false, &os.PathError{Op: "open", Path: p, Err: err}
	}
	for {
		id, err := fdID(fd, p)
		if err != nil {
			unix.Close(fd)
			return false, err
		}
		if id == dir {
			unix.Close(fd)
			return true, nil
		}
		up, err := unix.Openat(fd, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOTDIR) {
			// p is no directory (only the first step can be): go on from the directory it
			// is in, found from what was opened, not from the path's spelling.
			var real string
			if real, err = os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd)); err == nil {
				up, err = unix.Open(filepath.Dir(real), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			}
		}
		unix.Close(fd)
		if err != nil {
			return false, &os.PathError{Op: "open", Path: p + "/..", Err: err}
		}
		upID, err := fdID(up, p+"/..")
		if err != nil {
			unix.Close(up)
			return false, err
		}
		if upID == id { // the root: its ".." is itself
			unix.Close(up)
			return false, nil
		}
		fd, p = up, p+"/.."
	}
}
