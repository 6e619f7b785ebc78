package vault

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/internal/userfile"
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
		return nil, fmt.Errorf("%s: %w: it is %s, not a regular file", p, ErrCorrupt, userfile.Kind(fi.Mode()))
	}
	return f, nil
}
