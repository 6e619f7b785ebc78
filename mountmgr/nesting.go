package mountmgr

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// ErrNested: the mount point is the vault's cipherdir, lies inside it, or contains it. It
// also wraps ErrMountpoint (exit code 5). A mount inside its own cipherdir would show the
// file system its own cipher files: fsck reports them, and with deterministic names a walk
// of the mount never ends. gocryptfs refuses it too.
var ErrNested = errors.New("mount point and cipherdir nested")

// errNestedMountpoint is what CheckNesting's errors wrap: both sentinels.
var errNestedMountpoint = errors.Join(ErrNested, ErrMountpoint)

// CheckNesting refuses a mount point that is the cipherdir, lies inside it or contains it,
// comparing real paths (symlinks resolved), so a symlink cannot hide the nesting. A path
// that cannot be resolved (missing) passes: the checks of the mount point and of the vault
// report that with their own errors.
func CheckNesting(cipherDir, mountPoint string) error {
	c, err := filepath.EvalSymlinks(cipherDir)
	if err != nil {
		return nil
	}
	m, err := filepath.EvalSymlinks(mountPoint)
	if err != nil {
		return nil
	}
	c, m = filepath.Clean(c), filepath.Clean(m)
	real := ""
	if c != filepath.Clean(cipherDir) || m != filepath.Clean(mountPoint) {
		real = fmt.Sprintf(" (real paths %s and %s)", m, c)
	}
	switch {
	case c == m:
		return errorOf(errNestedMountpoint, "mount point %s is the vault's cipherdir %s%s", mountPoint, cipherDir, real)
	case within(m, c):
		return errorOf(errNestedMountpoint, "mount point %s is inside the vault's cipherdir %s%s", mountPoint, cipherDir, real)
	case within(c, m):
		return errorOf(errNestedMountpoint, "the vault's cipherdir %s is inside mount point %s%s", cipherDir, mountPoint, real)
	}
	return nil
}

// within reports whether path lies strictly below dir; both are clean absolute paths.
func within(path, dir string) bool {
	if dir == "/" {
		return path != "/"
	}
	return strings.HasPrefix(path, dir+"/")
}
