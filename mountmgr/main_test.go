package mountmgr

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/testdeps"
	"github.com/vaultui/vaultui/vault"
)

// The daemon runs as a separate process in these tests: the test binary itself, re-executed
// with testDaemonEnv set, so no build of the whole program is needed.
const testDaemonEnv = "VAULTUI_MOUNTMGR_TEST_DAEMON"

// testForeignClientEnv makes the test binary a raw client of the socket it names: it sends a
// status request and prints the answer line (TestOtherUIDRefused runs it as another user).
const testForeignClientEnv = "VAULTUI_MOUNTMGR_TEST_FOREIGN_CLIENT"

// The test daemon's ServeOptions.ShutdownGrace, IdleExit and LogMax, when set.
const (
	testGraceEnv    = "VAULTUI_MOUNTMGR_TEST_GRACE"
	testIdleExitEnv = "VAULTUI_MOUNTMGR_TEST_IDLE_EXIT"
	testLogMaxEnv   = "VAULTUI_MOUNTMGR_TEST_LOG_MAX"
)

// testBuildEnv is the test daemon's ServeOptions.Build, when set: the build it claims to be
// (builds_test.go runs daemons of two "builds" from the one test binary).
const testBuildEnv = "VAULTUI_MOUNTMGR_TEST_BUILD"

// testFakeDaemonEnv makes the test binary an impostor daemon on the socket it names (the
// attacker tests run it as another user): it answers every request line with success and, on
// SIGTERM, prints how many bytes it received and what.
const testFakeDaemonEnv = "VAULTUI_MOUNTMGR_TEST_FAKE_DAEMON"

func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == crypto.KDFHelperArg {
		// A costly key derivation re-executes the running binary, this one (see crypto.KDFHelperArg).
		if err := crypto.ServeKDFHelper(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if sock := os.Getenv(testFakeDaemonEnv); sock != "" {
		os.Exit(runFakeDaemon(sock))
	}
	if sock := os.Getenv(testForeignClientEnv); sock != "" {
		conn, err := net.Dial("unix", sock)
		if err != nil {
			fmt.Println("dial:", err)
			os.Exit(1)
		}
		fmt.Fprintf(conn, `{"v":%d,"id":1,"op":"status"}`+"\n", ProtocolVersion)
		line, _ := bufio.NewReader(conn).ReadString('\n')
		fmt.Print(line)
		os.Exit(0)
	}
	if os.Getenv(testDaemonEnv) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
		opts := ServeOptions{}
		// Knobs of the tests that need a short grace, an idle exit or a small log.
		if v := os.Getenv(testGraceEnv); v != "" {
			opts.ShutdownGrace, _ = time.ParseDuration(v)
		}
		if v := os.Getenv(testIdleExitEnv); v != "" {
			opts.IdleExit, _ = time.ParseDuration(v)
		}
		if v := os.Getenv(testLogMaxEnv); v != "" {
			opts.LogMax, _ = strconv.ParseInt(v, 10, 64)
		}
		opts.Automount = os.Getenv(testAutomountEnv) == "1"
		opts.Build = os.Getenv(testBuildEnv)
		err := Serve(ctx, opts)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "daemon:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	DaemonCommand = func() (*exec.Cmd, error) {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), testDaemonEnv+"=1")
		// If the test binary dies before its cleanups run, its daemons go too (SIGTERM
		// unmounts their vaults).
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
		return cmd, nil
	}
	os.Exit(m.Run())
}

// daemonEnv gives the test its own runtime, state and config dirs (so its own daemon), and
// stops that daemon and any mount under the test's dirs when the test ends.
func daemonEnv(t *testing.T) (base string) {
	t.Helper()
	testdeps.Need(t, testdeps.FUSE)
	// Short paths: a unix socket path must fit in 108 bytes.
	base, err := os.MkdirTemp("", "vmm")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_RUNTIME_DIR", filepath.Join(base, "run"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(base, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(base, "config"))
	t.Cleanup(func() {
		stopDaemon(t)
		for _, e := range mountsUnder(base) {
			t.Errorf("mount left behind: %s", e.MountPoint)
			detach(e.MountPoint)
		}
		log, _ := os.ReadFile(filepath.Join(base, "state", "vaultui", "daemon.log"))
		if strings.Contains(string(log), "DATA RACE") || strings.Contains(string(log), "panic:") {
			t.Errorf("the daemon reported a data race or panic")
		}
		if t.Failed() {
			t.Logf("daemon log:\n%s", log)
		}
		os.RemoveAll(base)
	})
	return base
}

func mountsUnder(dir string) []mountEntry {
	entries, _ := readMountInfo()
	var out []mountEntry
	for _, e := range entries {
		if strings.HasPrefix(e.MountPoint, dir+"/") {
			out = append(out, e)
		}
	}
	return out
}

// daemonPID asks the running daemon for its pid (0 if none answers).
func daemonPID(t *testing.T) int {
	c, err := dial(context.Background(), SocketPath())
	if err != nil {
		return 0
	}
	defer c.Close()
	resp, err := c.call(context.Background(), request{Op: opPing})
	if err != nil {
		return 0
	}
	return resp.PID
}

// stopDaemon sends SIGTERM to the test's daemon and waits for it to exit.
func stopDaemon(t *testing.T) {
	pid := daemonPID(t)
	if pid == 0 {
		return
	}
	syscall.Kill(pid, syscall.SIGTERM)
	waitGone(t, pid)
}

// waitGone waits for the daemon pid to exit after SIGTERM. The budget is generous: under the
// race detector on a loaded 2-core machine (CI runs three race packages at once) a daemon
// that had logged "daemon stopped" once took over 5 s to be gone. What it was doing then is
// logged (its state and kernel wait channel), so a real hang names itself.
func waitGone(t *testing.T, pid int) {
	for i := 0; i < 2000; i++ {
		// The daemon is our child only when this process started it; reap if so.
		var ws syscall.WaitStatus
		syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	wchan, _ := os.ReadFile(fmt.Sprintf("/proc/%d/wchan", pid))
	state := ""
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "State:") || strings.HasPrefix(line, "Threads:") || strings.HasPrefix(line, "PPid:") {
			state += " " + strings.Join(strings.Fields(line), " ")
		}
	}
	t.Errorf("daemon pid %d did not exit in 20 s:%s wchan %q", pid, state, wchan)
	syscall.Kill(pid, syscall.SIGKILL)
}

// newVault creates a vault with a cheap KDF in a fresh dir and an empty mount point.
func newVault(t *testing.T, base string, c crypto.CipherID) (cipherdir, mountpoint string, password []byte) {
	t.Helper()
	return newVaultWith(t, base, vault.CreateOptions{Cipher: c})
}

func newVaultWith(t *testing.T, base string, opts vault.CreateOptions) (cipherdir, mountpoint string, password []byte) {
	t.Helper()
	cipherdir, err := os.MkdirTemp(base, "cipher")
	if err != nil {
		t.Fatal(err)
	}
	password = []byte("correct horse " + string(opts.Cipher))
	opts.ScryptLogN = crypto.MinScryptLogN
	key, err := vault.Create(context.Background(), cipherdir, password, opts)
	if err != nil {
		t.Fatal(err)
	}
	crypto.Wipe(key)
	mountpoint, err = os.MkdirTemp(base, "mnt")
	if err != nil {
		t.Fatal(err)
	}
	return cipherdir, mountpoint, password
}

func connect(t *testing.T) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Connect(ctx)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}
