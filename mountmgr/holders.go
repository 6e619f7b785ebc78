package mountmgr

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// holder is a process that keeps a mount busy.
type holder struct {
	PID  int
	Comm string
	// What it holds: "working directory /mnt/x/dir", "open file /mnt/x/f". These are plaintext
	// paths inside the mount: they go to the client that asked, never into the log.
	What []string
}

// holders lists the processes (at most max) that keep the file system with device number dev
// busy: a working directory, root or open file on it. Files are matched by device, not by
// path, so this also finds the users of a mount that was detached lazily (their paths no
// longer start with the mount point). The stats use AT_STATX_DONT_SYNC: no FUSE request, so
// a hung file system elsewhere cannot block the daemon here.
func holders(dev uint64, max int) []holder {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	sortByPID(procs)
	self := os.Getpid()
	var out []holder
	var what []string
	// held adds the link p, as what, when it leads to the file system.
	held := func(p, as string) bool {
		var st unix.Statx_t
		err := unix.Statx(unix.AT_FDCWD, p, unix.AT_STATX_DONT_SYNC, unix.STATX_TYPE, &st)
		if err != nil || unix.Mkdev(st.Dev_major, st.Dev_minor) != dev {
			return false
		}
		target, _ := os.Readlink(p)
		what = append(what, as+target)
		return true
	}
	for _, dir := range procs {
		pid, err := strconv.Atoi(filepath.Base(dir))
		if err != nil || pid == self {
			continue
		}
		what = nil
		held(dir+"/cwd", "working directory ")
		held(dir+"/root", "root ")
		fds, _ := os.ReadDir(dir + "/fd")
		for _, fd := range fds {
			if held(dir+"/fd/"+fd.Name(), "open file ") {
				break
			}
		}
		if len(what) == 0 {
			continue
		}
		comm, _ := os.ReadFile(dir + "/comm")
		out = append(out, holder{PID: pid, Comm: strings.TrimSpace(string(comm)), What: what})
		if len(out) >= max {
			break
		}
	}
	return out
}

// sortByPID sorts /proc/PID paths by number, not as text (where 10 comes before 9): pids
// grow, so a shell comes before the children it started and the first max holders are the
// oldest.
func sortByPID(procs []string) {
	slices.SortFunc(procs, func(a, b string) int {
		pa, _ := strconv.Atoi(filepath.Base(a))
		pb, _ := strconv.Atoi(filepath.Base(b))
		return cmp.Compare(pa, pb)
	})
}

// pids names the holders for the log: pids and process names, no paths.
func pids(hs []holder) string {
	if len(hs) == 0 {
		return "no process in this mount namespace"
	}
	parts := make([]string, len(hs))
	for i, h := range hs {
		parts[i] = fmt.Sprintf("pid %d (%s)", h.PID, h.Comm)
	}
	return strings.Join(parts, ", ")
}

// busyError is ErrBusy with the processes that hold the mount. Its message, with their paths
// inside the mount, is for the client that asked; the log gets logText.
type busyError struct {
	mountPoint string
	holders    []holder
	cause      error // the unmount's own error, when no holder was found
}

func (e *busyError) Error() string {
	if len(e.holders) == 0 {
		return fmt.Sprintf("unmounting %s: %v: %v", e.mountPoint, e.cause, ErrBusy)
	}
	parts := make([]string, len(e.holders))
	for i, h := range e.holders {
		parts[i] = fmt.Sprintf("pid %d (%s): %s", h.PID, h.Comm, strings.Join(h.What, ", "))
	}
	return fmt.Sprintf("%s is in use by %s", e.mountPoint, strings.Join(parts, "; "))
}

func (e *busyError) Unwrap() error { return ErrBusy }

func (e *busyError) logText() string {
	if len(e.holders) == 0 {
		return e.Error()
	}
	return fmt.Sprintf("%s is in use by %s", e.mountPoint, pids(e.holders))
}

// logSafe is the text of err for the daemon log: busy errors without their holders' paths.
func logSafe(err error) string {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var parts []string
		for _, e := range j.Unwrap() {
			parts = append(parts, logSafe(e))
		}
		return strings.Join(parts, "; ")
	}
	var be *busyError
	if errors.As(err, &be) {
		return be.logText()
	}
	return err.Error()
}
