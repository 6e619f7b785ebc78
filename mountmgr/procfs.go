package mountmgr

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/vault"
)

// FSType is the file system type vaultui mounts show in /proc/mounts ("fuse." + subtype).
const FSType = "fuse.vaultui"

// mountEntry is one line of /proc/self/mountinfo.
type mountEntry struct {
	ID         int    // the mount ID (field 1)
	Dev        uint64 // the file system's device number (field 3, major:minor)
	MountPoint string
	FSType     string
	Source     string
	UserID     int // from the user_id= super option of FUSE mounts; -1 if absent
}

// mountID identifies a mount, wherever its mount point has moved since (a parent renamed, a
// symlink to it re-pointed): its mount ID, and the device number of its file system, since
// the kernel reuses the ID of an unmounted mount. The zero mountID is "not known".
type mountID struct {
	ID  int
	Dev uint64
}

func (id mountID) known() bool { return id != mountID{} }

func (e mountEntry) identity() mountID { return mountID{ID: e.ID, Dev: e.Dev} }

// mountAt returns the identity of the mount whose root is at path (the topmost one, if
// mounts are stacked there), as statx reports it: no mountinfo line is matched by spelling.
func mountAt(path string) (mountID, error) {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, unix.AT_NO_AUTOMOUNT, unix.STATX_MNT_ID|unix.STATX_INO, &st); err != nil {
		return mountID{}, &os.PathError{Op: "statx", Path: path, Err: err}
	}
	if st.Mask&unix.STATX_MNT_ID == 0 {
		return mountID{}, fmt.Errorf("statx %s: the kernel gives no mount ID (Linux 5.8 or later needed)", path)
	}
	if st.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT != 0 && st.Attributes&unix.STATX_ATTR_MOUNT_ROOT == 0 {
		return mountID{}, fmt.Errorf("%s is not a mount point", path)
	}
	return mountID{ID: int(st.Mnt_id), Dev: unix.Mkdev(st.Dev_major, st.Dev_minor)}, nil
}

// findMount returns the mountinfo line of the mount id: where it is now.
func findMount(id mountID) (mountEntry, bool, error) {
	entries, err := readMountInfo()
	if err != nil {
		return mountEntry{}, false, err
	}
	if i := slices.IndexFunc(entries, func(e mountEntry) bool { return e.identity() == id }); i >= 0 {
		return entries[i], true, nil
	}
	return mountEntry{}, false, nil
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
		id, err := strconv.Atoi(fields[0])
		if err != nil {
			return nil, fmt.Errorf("malformed mountinfo line %q: %w", sc.Text(), err)
		}
		var major, minor uint32
		if _, err := fmt.Sscanf(fields[2], "%d:%d", &major, &minor); err != nil {
			return nil, fmt.Errorf("malformed mountinfo line %q: %w", sc.Text(), err)
		}
		e := mountEntry{
			ID:         id,
			Dev:        unix.Mkdev(major, minor),
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
	return err == nil && slices.ContainsFunc(entries, func(e mountEntry) bool { return e.MountPoint == path })
}

// mountTable is the kernel's mount table as the stale-mount cleanup uses it: the daemon's is
// procMounts; tests of the cleanup give it a table of their own.
type mountTable interface {
	findStale(uid int, skip func(mountEntry) bool) ([]mountEntry, error)
	detach(mountPoint string) error
}

// procMounts is the real mount table: /proc/self/mountinfo, statfs and umount.
type procMounts struct{}

func (procMounts) detach(mountPoint string) error { return detach(mountPoint) }

// findStale returns this user's vaultui mounts whose FUSE server is gone: statfs on them fails
// with ENOTCONN ("transport endpoint is not connected"). statfs, unlike stat, is never answered
// from the kernel's attribute cache.
func (procMounts) findStale(uid int, skip func(mountEntry) bool) ([]mountEntry, error) {
	entries, err := readMountInfo()
	if err != nil {
		return nil, err
	}
	var stale []mountEntry
	for _, e := range entries {
		if e.FSType != FSType || (e.UserID >= 0 && e.UserID != uid) || skip(e) {
			continue
		}
		if IsStale(e.MountPoint) {
			stale = append(stale, e)
		}
	}
	return stale, nil
}

// IsStale reports whether the FUSE mount at mountPoint has lost its server: statfs fails
// with ENOTCONN (one that does not answer within a second is not called stale; see within).
// A daemon cleans such mounts up as it starts.
func IsStale(mountPoint string) bool {
	_, err := within(time.Second, "statfs "+mountPoint, func() (struct{}, error) {
		var st syscall.Statfs_t
		return struct{}{}, syscall.Statfs(mountPoint, &st)
	})
	return errors.Is(err, syscall.ENOTCONN)
}

// within runs f, giving up after d with an error naming what: a FUSE server that hangs
// (rather than dies) would block the caller forever. The goroutine of a hung call is left
// behind.
func within[T any](d time.Duration, what string, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-time.After(d):
		var zero T
		return zero, fmt.Errorf("%s: no answer within %v", what, d)
	}
}

// detach lazily unmounts mountPoint: MNT_DETACH as root, fusermount3 -uz otherwise.
func detach(mountPoint string) error { return umount(mountPoint, true) }

// MountedAt returns where the vault in cipherDir is mounted, by vaultui (any daemon),
// gocryptfs or any other file system whose source is that directory, or "". The vault is
// compared by identity (see mountsOf). Offline changes to a mounted cipherdir would go behind
// the mount's back.
func MountedAt(cipherDir string) string {
	id, err := vault.IDOf(cipherDir)
	if err != nil {
		return ""
	}
	if ms := mountsOf(id); len(ms) > 0 {
		return ms[0].MountPoint
	}
	return ""
}

// mountsOf lists the mounts whose source is the directory id: vaultui's (fuse.vaultui),
// gocryptfs's (fuse.gocryptfs) and any other whose source is a path to it, however spelled.
// A source that is no absolute path (tmpfs, proc) is skipped; the others are stat'ed, each
// with a bound, since a source may lie on a hung file system.
func mountsOf(id vault.ID) []mountEntry {
	entries, err := readMountInfo()
	if err != nil {
		return nil
	}
	var out []mountEntry
	seen := map[string]vault.ID{}
	for _, e := range entries {
		if !filepath.IsAbs(e.Source) {
			continue
		}
		sid, ok := seen[e.Source]
		if !ok {
			sid, _ = idTimeout(e.Source, time.Second)
			seen[e.Source] = sid
		}
		if sid == id {
			out = append(out, e)
		}
	}
	return out
}

// idTimeout is vault.IDOf that gives up after d (see within).
func idTimeout(path string, d time.Duration) (vault.ID, error) {
	return within(d, path, func() (vault.ID, error) { return vault.IDOf(path) })
}

// VaultuiMounts lists this user's vaultui mounts as the kernel shows them, whichever daemon
// (runtime directory) owns them: for saying what "unmount --all" of one daemon left to others.
// CipherDir is the mount's source.
func VaultuiMounts() ([]MountInfo, error) {
	entries, err := readMountInfo()
	if err != nil {
		return nil, err
	}
	uid := os.Getuid()
	var out []MountInfo
	for _, e := range entries {
		if e.FSType == FSType && (e.UserID < 0 || e.UserID == uid) {
			out = append(out, MountInfo{MountPoint: e.MountPoint, CipherDir: e.Source})
		}
	}
	return out, nil
}
