package mountmgr

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/vaultui/vaultui/vault"
)

// ErrNested: the mount point is the vault's cipherdir, lies inside it, or contains it. It
// also wraps ErrMountpoint (exit code 5). A mount inside its own cipherdir would show the
// file system its own cipher files: fsck reports them, and with deterministic names a walk
// of the mount never ends. gocryptfs refuses it too.
var ErrNested = errors.New("mount point and cipherdir nested")

// errNestedMountpoint is what CheckNesting's errors wrap: both sentinels.
var errNestedMountpoint = errors.Join(ErrNested, ErrMountpoint)

// CheckNesting refuses a mount point that is the cipherdir, lies inside it or contains it.
// It decides by identity (vault.Inside: device and inode, walking up through ".."), so no
// symlink, bind mount or spelling hides the nesting. A mount point that does not exist yet is
// judged by where it would be made; a cipherdir that does not exist passes: the checks of the
// vault report that with their own errors. It is the one rule for every place that takes a
// mount point: mount (client and daemon), add and edit.
func CheckNesting(cipherDir, mountPoint string) error {
	cid, err := vault.IDOf(cipherDir)
	if err != nil {
		return nil
	}
	mpID, mpErr := vault.IDOf(mountPoint)
	real := ""
	if c, err := filepath.EvalSymlinks(cipherDir); err == nil {
		if m, err := filepath.EvalSymlinks(mountPoint); err == nil &&
			(c != filepath.Clean(cipherDir) || m != filepath.Clean(mountPoint)) {
			real = fmt.Sprintf(" (real paths %s and %s)", m, c)
		}
	}
	if mpErr == nil && mpID == cid {
		return ErrorOf(errNestedMountpoint, "mount point %s is the vault's cipherdir %s%s", mountPoint, cipherDir, real)
	}
	if in, err := vault.Inside(mountPoint, cid); err == nil && in {
		return ErrorOf(errNestedMountpoint, "mount point %s is inside the vault's cipherdir %s%s", mountPoint, cipherDir, real)
	}
	if mpErr == nil {
		if in, err := vault.Inside(cipherDir, mpID); err == nil && in {
			return ErrorOf(errNestedMountpoint, "the vault's cipherdir %s is inside mount point %s%s", cipherDir, mountPoint, real)
		}
	}
	return nil
}
