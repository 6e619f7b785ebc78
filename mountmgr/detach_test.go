package mountmgr

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
)

// daemonFD is what descriptor fd of process pid refers to.
func daemonFD(t *testing.T, pid, fd int) string {
	t.Helper()
	p, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", pid, fd))
	if err != nil {
		t.Fatalf("fd %d of the daemon: %v", fd, err)
	}
	return p
}

// TestUnusableStateDir: with XDG_STATE_HOME unusable (a regular file; a read-only file
// system), the daemon still starts and mounts, logging to its stderr, which is /dev/null since
// a client started it, and keeping its event log in memory; it says so (Client.Daemon, which
// status shows). Issue 24: the client could not start a daemon at all, so nothing mounted.
func TestUnusableStateDir(t *testing.T) {
	for _, tc := range []string{"file", "read-only"} {
		t.Run(tc, func(t *testing.T) {
			base := daemonEnv(t)
			state := filepath.Join(base, "badstate")
			switch tc {
			case "file":
				if err := os.WriteFile(state, []byte("not a directory\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			case "read-only":
				if os.Geteuid() != 0 {
					t.Skip("mounting a read-only file system needs root")
				}
				os.Mkdir(state, 0o700)
				if err := unix.Mount("tmpfs", state, "tmpfs", unix.MS_RDONLY, "size=1m"); err != nil {
					t.Skipf("mounting a read-only tmpfs: %v", err)
				}
				t.Cleanup(func() { unix.Unmount(state, unix.MNT_DETACH) })
			}
			t.Setenv("XDG_STATE_HOME", state)
			cipherdir, mp, pw := newVault(t, base, crypto.AESGCM)
			c := connect(t)
			if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw}); err != nil {
				t.Fatalf("mount with an unusable state dir: %v", err)
			}
			if err := os.WriteFile(filepath.Join(mp, "f"), []byte("data"), 0o600); err != nil {
				t.Fatal(err)
			}
			info, err := c.Daemon(ctx(t))
			if err != nil {
				t.Fatal(err)
			}
			if info.Log != "" || !info.StderrNull || info.LogError == "" || info.EventsError == "" || info.PID == 0 {
				t.Errorf("daemon info %+v: want no log file, stderr /dev/null, and both errors", info)
			}
			evs, err := c.Events(ctx(t), 0)
			if err != nil || len(evs) != 1 || evs[0].Kind != EventMounted {
				t.Errorf("events kept in memory: %+v, %v", evs, err)
			}
			for fd := range 3 {
				if p := daemonFD(t, info.PID, fd); p != os.DevNull {
					t.Errorf("daemon fd %d is %s, want %s", fd, p, os.DevNull)
				}
			}
			if err := c.Unmount(ctx(t), mp, false); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestDaemonKeepsNothingOfTheClient: a daemon started by a client holds none of the client's
// descriptors once it answers: stdin is /dev/null, stdout and stderr its log, and a
// descriptor the client inherited without close-on-exec (a shell's pipe that something waits
// to see closed) is closed. Issue 24: the daemon kept the client's descriptors.
func TestDaemonKeepsNothingOfTheClient(t *testing.T) {
	base := daemonEnv(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if _, err := unix.FcntlInt(w.Fd(), unix.F_SETFD, 0); err != nil { // as a shell leaves it
		t.Fatal(err)
	}
	var pipeSt, errSt syscall.Stat_t
	syscall.Fstat(int(w.Fd()), &pipeSt)
	syscall.Fstat(2, &errSt)
	connect(t)
	pid := daemonPID(t)
	if pid == 0 {
		t.Fatal("no daemon")
	}
	w.Close() // the client lets go; the daemon must not hold it either
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		var st syscall.Stat_t
		if syscall.Stat(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name()), &st) != nil {
			continue
		}
		if st.Dev == pipeSt.Dev && st.Ino == pipeSt.Ino {
			t.Errorf("the daemon holds the client's pipe as fd %s", e.Name())
		}
		if st.Dev == errSt.Dev && st.Ino == errSt.Ino && st.Mode&syscall.S_IFMT != syscall.S_IFCHR {
			t.Errorf("the daemon holds the client's stderr as fd %s", e.Name())
		}
	}
	logPath := filepath.Join(base, "state", "vaultui", "daemon.log")
	if p := daemonFD(t, pid, 0); p != os.DevNull {
		t.Errorf("daemon stdin is %s", p)
	}
	for _, fd := range []int{1, 2} {
		if p := daemonFD(t, pid, fd); p != logPath {
			t.Errorf("daemon fd %d is %s, want %s", fd, p, logPath)
		}
	}
}

// TestDaemonStartFailureReachesClient: why a daemon could not start reaches the user in the
// client's error, and the log: here another process holds the daemon lock. Before, the client
// only said the daemon exited, and where its log was.
func TestDaemonStartFailureReachesClient(t *testing.T) {
	base := daemonEnv(t)
	dir := SocketDir()
	if err := ensureSocketDir(dir); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, "daemon.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(lock, "%d\n", os.Getpid())
	_, err = Connect(ctx(t))
	want := fmt.Sprintf("another daemon is running (pid %d", os.Getpid())
	if !errors.Is(err, ErrDaemon) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Connect with the lock held: %v; want %q", err, want)
	}
	if log, _ := os.ReadFile(filepath.Join(base, "state", "vaultui", "daemon.log")); !strings.Contains(string(log), want) {
		t.Errorf("the log does not say why:\n%s", log)
	}
}
