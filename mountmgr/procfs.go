package mountmgr

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// FSType is the file system type vaultui mounts show in /proc/mounts ("fuse." + subtype).
const FSType = "fuse.vaultui"

// mountEntry is one line of /proc/self/mountinfo.
type mountEntry struct {
	MountPoint string
	FSType     string
	Source     string
	UserID     int // from the user_id= super option of FUSE mounts; -1 if absent
}

// parseMountInfo parses the mountinfo format (proc(5)).
func parseMountInfo(r io.Reader) ([]mountEntry, error) {
	var out []mountEntry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, f := range fields {
			if f == "-" && i >= 6 {
				sep = i
				break
			}
		}
		if sep < 0 || len(fields) < sep+3 || len(fields) < 5 {
			return nil, fmt.Errorf("malformed mountinfo line %q", sc.Text())
		}
		e := mountEntry{
			MountPoint: unescapeMountField(fields[4]),
			FSType:     fields[sep+1],
			Source:     unescapeMountField(fields[sep+2]),
			UserID:     -1,
		}
		if len(fields) > sep+3 {
			for _, opt := range strings.Split(fields[sep+3], ",") {
				if v, ok := strings.CutPrefix(opt, "user_id="); ok {
					if n, err := strconv.Atoi(v); err == nil {
						e.UserID = n
					}
				}
			}
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// unescapeMountField undoes the octal escapes (\040 for space, ...) of mountinfo fields.
func unescapeMountField(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func readMountInfo() ([]mountEntry, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseMountInfo(f)
}

// isMountPoint reports whether path is currently a mount point.
func isMountPoint(path string) bool {
	entries, err := readMountInfo()
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.MountPoint == path {
			return true
		}
	}
	return false
}

// mountTable is the kernel's mount table as the stale-mount cleanup uses it: the daemon's is
// procMounts; tests of the cleanup give it a table of their own.
type mountTable interface {
	findStale(uid int, skip func(mountPoint string) bool) ([]mountEntry, error)
	detach(mountPoint string) error
}

// procMounts is the real mount table: /proc/self/mountinfo, statfs and umount.
type procMounts struct{}

func (procMounts) findStale(uid int, skip func(string) bool) ([]mountEntry, error) {
	return findStale(uid, skip)
}
func (procMounts) detach(mountPoint string) error { return detach(mountPoint) }

// findStale returns this user's vaultui mounts whose FUSE server is gone: statfs on them fails
// with ENOTCONN ("transport endpoint is not connected"). statfs, unlike stat, is never answered
// from the kernel's attribute cache.
func findStale(uid int, skip func(mountPoint string) bool) ([]mountEntry, error) {
	entries, err := readMountInfo()
	if err != nil {
		return nil, err
	}
	var stale []mountEntry
	for _, e := range entries {
		if e.FSType != FSType || (e.UserID >= 0 && e.UserID != uid) || skip(e.MountPoint) {
			continue
		}
		if errors.Is(statfsTimeout(e.MountPoint, time.Second), syscall.ENOTCONN) {
			stale = append(stale, e)
		}
	}
	return stale, nil
}

// statfsTimeout is statfs that gives up after d: a FUSE server that hangs (rather than dies)
// would block the caller forever. The goroutine of a hung call is left behind.
func statfsTimeout(path string, d time.Duration) error {
	done := make(chan error, 1)
	go func() {
		var st syscall.Statfs_t
		done <- syscall.Statfs(path, &st)
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		return fmt.Errorf("statfs %s: no answer within %v", path, d)
	}
}

// detach lazily unmounts mountPoint: MNT_DETACH as root, fusermount3 -uz otherwise.
func detach(mountPoint string) error {
	if os.Geteuid() == 0 {
		if err := syscall.Unmount(mountPoint, syscall.MNT_DETACH); err == nil {
			return nil
		}
	}
	bin := "fusermount3"
	if _, err := exec.LookPath(bin); err != nil {
		bin = "fusermount"
	}
	// Bounded like every wait of the daemon: a helper that hangs must not hang it.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "-u", "-z", mountPoint).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s -uz %s: %w: %s", bin, mountPoint, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// MountedAt returns where the vault in cipherDir is mounted (by any vaultui daemon), or "".
// Offline changes to a mounted cipherdir would go behind the mount's back.
func MountedAt(cipherDir string) string {
	entries, err := readMountInfo()
	if err != nil {
		return ""
	}
	for _, e := range entries {
		if e.FSType == FSType && e.Source == cipherDir {
			return e.MountPoint
		}
	}
	return ""
}
