package mountmgr

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// The control socket carries passwords, so both ends trust it only inside a directory that
// this user owns, that nobody else may enter (mode 0700) and that is not a symbolic link. The
// client checks the directory, opens it, and dials the socket through the opened directory
// (/proc/self/fd/N/ctl.sock; Linux has no connectat), so the directory it checked is the one
// it uses. After connecting it checks the server's uid (SO_PEERCRED) before sending a byte.
// A refusal never falls back to another path: the user is told what is wrong instead.

// unsafeSocketError is a socket directory or a server that fails the rule above. It unwraps
// to ErrDaemon (exit code 8).
type unsafeSocketError struct {
	path    string // the directory or socket refused
	problem string
}

func (e *unsafeSocketError) Error() string {
	return fmt.Sprintf("refusing the control socket at %s: %s; another user may be impersonating the daemon. "+
		"If the directory is yours, remove it; otherwise set XDG_RUNTIME_DIR to a private directory (normally /run/user/%d)",
		e.path, e.problem, os.Getuid())
}

func (e *unsafeSocketError) Unwrap() error { return ErrDaemon }

// describeUID names a uid for messages: "uid 65534 (nobody)".
func describeUID(uid uint32) string {
	s := "uid " + strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10)); err == nil && u.Username != "" {
		s += " (" + u.Username + ")"
	}
	return s
}

// checkSocketDirStat applies the rule to the stat of dir (from lstat or fstat).
func checkSocketDirStat(dir string, st *unix.Stat_t) error {
	self := uint32(os.Getuid())
	switch {
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return &unsafeSocketError{dir, "the directory is a symbolic link"}
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return &unsafeSocketError{dir, "it is not a directory"}
	case st.Uid != self:
		return &unsafeSocketError{dir, fmt.Sprintf("the directory belongs to %s, not to you (%s)", describeUID(st.Uid), describeUID(self))}
	case st.Mode&0o7777 != 0o700:
		return &unsafeSocketError{dir, fmt.Sprintf("the directory (owner %s) has mode %04o, it must be 0700 so that only you can enter it", describeUID(st.Uid), st.Mode&0o7777)}
	}
	return nil
}

// openSocketDir checks dir and returns it opened. A missing directory is an error wrapping
// os.ErrNotExist (the caller may create it); everything else the rule refuses is an
// *unsafeSocketError.
func openSocketDir(dir string) (*os.File, error) {
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return nil, fmt.Errorf("socket directory %s: %w", dir, err)
	}
	if err := checkSocketDirStat(dir, &st); err != nil {
		return nil, err
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		return nil, &unsafeSocketError{dir, "the directory was replaced while it was checked"}
	}
	if err != nil {
		return nil, fmt.Errorf("socket directory %s: %w", dir, err)
	}
	var fst unix.Stat_t
	if err := unix.Fstat(fd, &fst); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("socket directory %s: %w", dir, err)
	}
	if err := checkSocketDirStat(dir, &fst); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if fst.Dev != st.Dev || fst.Ino != st.Ino {
		unix.Close(fd)
		return nil, &unsafeSocketError{dir, "the directory was replaced while it was checked"}
	}
	return os.NewFile(uintptr(fd), dir), nil
}

// ensureSocketDir creates dir (mode 0700) when it is missing and checks it by the rule. An
// existing directory is never repaired (chmod) silently: it is refused with the reason.
func ensureSocketDir(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(dir), err)
	}
	err := unix.Mkdir(dir, 0o700)
	if err == nil {
		// Ours and new: only the umask can have narrowed the mode.
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("socket directory %s: %w", dir, err)
		}
	} else if !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("creating socket directory %s: %w", dir, err)
	}
	f, err := openSocketDir(dir)
	if err != nil {
		return err
	}
	return f.Close()
}

// dialSocket connects to the socket at path by the rule above.
func dialSocket(ctx context.Context, path string) (*net.UnixConn, error) {
	dir, name := filepath.Split(path)
	dir = filepath.Clean(dir)
	f, err := openSocketDir(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	via := fmt.Sprintf("/proc/self/fd/%d/%s", f.Fd(), name)
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", via)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	conn := c.(*net.UnixConn)
	uid, err := peerUID(conn)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if uid != os.Getuid() {
		conn.Close()
		return nil, &unsafeSocketError{path, fmt.Sprintf("the process listening there runs as %s, not as you", describeUID(uint32(uid)))}
	}
	return conn, nil
}
