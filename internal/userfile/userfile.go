// Package userfile opens the files vaultui keeps in, or is given from, the user's own
// directories (the registry, passfiles, the event log and ledger, caches) so that none of them
// can hang, flood or fool it: never blocking on a FIFO, only regular files (or pipes where
// asked) the user or root owns, read with a size bound, in directories no one else can write.
//
// It imports only the standard library and x/sys; app, cli, registry and mountmgr use it.
package userfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrUnsafe is returned (wrapped, naming the path and the problem) for a file or
// directory in the user's own directories that vaultui will not read or write: not a regular
// file (a FIFO, a device), or one another user owns or may change.
var ErrUnsafe = errors.New("refusing to use it")

// Open opens for reading a file vaultui keeps in, or is given from, the user's own
// directories: the registry, a passfile, the event log, caches. Unlike openRegular it follows
// symbolic links (dotfiles managers link the registry; `<(cmd)` is /dev/fd/N), but like it
// it never blocks (O_NONBLOCK: a FIFO without a writer hangs a plain open forever) and takes
// only a regular file, owned by the user or by root (a file another user owns could be
// changed under us, as ssh reasons for its own files). Anything else is an error wrapping
// ErrUnsafe that names the path and says what it is; a missing file is the
// *fs.PathError wrapping fs.ErrNotExist.
func Open(p string) (*os.File, error) {
	return openUser(p, false)
}

// OpenPipeOrFile is Open that also takes a pipe (a FIFO, named or not) the
// user or root owns: a passfile given as `<(pass show x)` is one. The pipe comes back in
// non-blocking mode; a named FIFO that no one has opened for writing yet reads as at end of
// file, so the caller waits for it to become readable first (see the passfile reader).
func OpenPipeOrFile(p string) (*os.File, error) {
	return openUser(p, true)
}

func openUser(p string, pipeOK bool) (*os.File, error) {
	// Look before opening: opening a device can have effects of its own (a tape rewinds).
	// The check is made again on the open file, which is what counts.
	if fi, err := os.Stat(p); err == nil {
		if err := checkUserKind(p, fi, pipeOK); err != nil {
			return nil, err
		}
	}
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(fd), p)
	fi, err := f.Stat()
	if err == nil {
		err = checkUserKind(p, fi, pipeOK)
	}
	if err == nil {
		err = checkOwner(p, fi)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkUserKind takes a regular file, and a pipe when pipeOK.
func checkUserKind(p string, fi fs.FileInfo, pipeOK bool) error {
	if fi.Mode().IsRegular() || pipeOK && fi.Mode()&fs.ModeNamedPipe != 0 {
		return nil
	}
	return fmt.Errorf("%s: %w: it is %s, not a regular file", p, ErrUnsafe, Kind(fi.Mode()))
}

// checkOwner refuses a file or directory another user owns: only the user and root may
// change what vaultui reads.
func checkOwner(p string, fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%s: %w: cannot tell who owns it", p, ErrUnsafe)
	}
	if me := uint32(os.Geteuid()); st.Uid != me && st.Uid != 0 {
		return fmt.Errorf("%s: %w: it belongs to another user (uid %d)", p, ErrUnsafe, st.Uid)
	}
	return nil
}

// CheckDir refuses a directory vaultui keeps its own files in (the registry's) when
// someone else could replace those files: owned by another user than the user or root, or
// writable by its group or by everyone (ssh's rule for ~/.ssh). A missing directory is the
// *fs.PathError wrapping fs.ErrNotExist. Symbolic links are followed: the directory checked
// is the one the files land in.
func CheckDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s: %w: it is %s, not a directory", dir, ErrUnsafe, Kind(fi.Mode()))
	}
	if err := checkOwner(dir, fi); err != nil {
		return err
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s: %w: other users may write in it (mode %04o; chmod go-w %s)",
			dir, ErrUnsafe, fi.Mode().Perm(), dir)
	}
	return nil
}

// Read reads the whole of a file opened with Open, refusing one larger than
// limit bytes (a link to /dev/zero is refused as a device; a regular file that is too big, or
// one like /proc's that says size 0 and is not, is cut off at limit+1 and refused, so memory
// stays bounded).
func Read(p string, limit int64) ([]byte, error) {
	f, err := Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tooBig := fmt.Errorf("%s: %w: it is larger than %d bytes", p, ErrUnsafe, limit)
	if fi, err := f.Stat(); err == nil && fi.Size() > limit {
		return nil, tooBig
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	if int64(len(data)) > limit {
		return nil, tooBig
	}
	return data, nil
}

// BaseDir is the XDG base directory in the environment variable env ("XDG_CONFIG_HOME"), or
// the home directory's sub (".config") when it is unset or relative: the spec says a relative
// value is invalid and must be ignored.
func BaseDir(env, sub string) (string, error) {
	if dir := os.Getenv(env); filepath.IsAbs(dir) {
		return dir, nil
	}
	home, err := os.UserHomeDir()
	return filepath.Join(home, sub), err
}

// Kind names a file type for messages ("a FIFO"). The cipherdir's files have their own rule
// (vault/layout.OpenFile).
func Kind(m fs.FileMode) string {
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
