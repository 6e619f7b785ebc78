package vault

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// openRegular opens a small file of the vault's own format (gocryptfs.conf, gocryptfs.diriv)
// for reading. The cipherdir may be written by someone else, so the file is opened without
// following a symbolic link and without blocking (a FIFO would otherwise hang the open and
// the read forever, in the CLI and in the daemon), and anything but a regular file is refused
// with an error wrapping ErrCorrupt that says what it is. A missing file is returned as the
// *fs.PathError wrapping fs.ErrNotExist.
func openRegular(p string) (*os.File, error) {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			// O_NOFOLLOW fails with ELOOP on a symbolic link as the last component; a loop
			// further up the path is reported by Lstat's own error.
			if fi, lerr := os.Lstat(p); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
				return nil, fmt.Errorf("%s: %w: it is a symbolic link, not a regular file", p, ErrCorrupt)
			}
			return nil, fmt.Errorf("%s: %w: a symbolic link loop in its path", p, ErrCorrupt)
		}
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(fd), p)
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %w: it is %s, not a regular file", p, ErrCorrupt, fileKind(fi.Mode()))
	}
	return f, nil
}

// fileKind names a file type for messages ("a FIFO").
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a regular file"
}
