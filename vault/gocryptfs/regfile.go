package gocryptfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/vault/layout"
)

// openRegular opens a small file of the vault's own format (gocryptfs.conf, gocryptfs.diriv)
// for reading. The cipherdir may be written by someone else, so the file is opened as every
// file of the cipherdir is (layout.OpenFile): without following a symbolic link and without
// blocking (a FIFO would otherwise hang the open and the read forever, in the CLI and in the
// daemon), and anything but a regular file is refused with an error wrapping ErrCorrupt that
// says what it is. A missing file is returned as the *fs.PathError wrapping fs.ErrNotExist.
func openRegular(p string) (*os.File, error) {
	fd, err := layout.OpenFile(unix.AT_FDCWD, p, unix.O_RDONLY, 0, nil)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			// O_NOFOLLOW fails with ELOOP on a symbolic link as the last component; a loop
			// further up the path is reported by Lstat's own error.
			if fi, lerr := os.Lstat(p); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
				return nil, fmt.Errorf("%s: %w: it is a symbolic link, not a regular file", p, ErrCorrupt)
			}
			return nil, fmt.Errorf("%s: %w: a symbolic link loop in its path", p, ErrCorrupt)
		}
		if layout.IsNotRegular(err) {
			return nil, err
		}
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	return os.NewFile(uintptr(fd), p), nil
}
