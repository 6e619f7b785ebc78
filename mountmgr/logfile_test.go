package mountmgr

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
)

// TestRotatingLog: the log is cut at max bytes into daemon.log and one older daemon.log.1,
// lines stay whole, and the fd standing for stderr follows the current file.
func TestRotatingLog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "daemon.log")
	// An fd that stands for the daemon's stderr.
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	fd, err := unix.Dup(int(null.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.NewFile(uintptr(fd), "stderr")
	defer stderr.Close()

	const max = 1000
	l, err := openRotatingLog(path, max, fd)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := 0; i < 100; i++ {
		if _, err := fmt.Fprintf(l, "line %03d %s\n", i, strings.Repeat("x", 40)); err != nil {
			t.Fatal(err)
		}
	}
	cur, _ := os.ReadFile(path)
	old, _ := os.ReadFile(path + ".1")
	if len(cur) == 0 || len(cur) > max || len(old) == 0 || len(old) > max || len(old) < max-100 {
		t.Fatalf("sizes: daemon.log %d, daemon.log.1 %d; want each at most %d", len(cur), len(old), max)
	}
	if !bytes.HasSuffix(cur, []byte("line 099 "+strings.Repeat("x", 40)+"\n")) {
		t.Errorf("the newest line is not at the end of daemon.log:\n%s", cur)
	}
	for _, b := range [][]byte{cur, old} {
		if !bytes.HasPrefix(b, []byte("line ")) || !bytes.HasSuffix(b, []byte("\n")) {
			t.Errorf("a line was cut:\n%s", b)
		}
	}
	if m, _ := filepath.Glob(path + "*"); len(m) != 2 {
		t.Errorf("log files %v, want daemon.log and daemon.log.1", m)
	}
	// What the runtime writes to stderr (a panic) lands in the current file, and counts.
	stderr.WriteString("panic: from stderr\n")
	if cur, _ := os.ReadFile(path); !bytes.HasSuffix(cur, []byte("panic: from stderr\n")) {
		t.Errorf("stderr does not follow the rotation:\n%s", cur)
	}
	// An existing oversized log is rotated at the first line.
	l.Close()
	os.WriteFile(path, bytes.Repeat([]byte("old\n"), 500), 0o600)
	l, err = openRotatingLog(path, max)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(l, "first")
	if cur, _ := os.ReadFile(path); string(cur) != "first\n" {
		t.Errorf("daemon.log after reopening an oversized one: %q", cur)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("daemon.log mode: %v %v", fi, err)
	}
}

// TestDaemonLogRotates: the daemon started by a client rotates its log at its cap.
func TestDaemonLogRotates(t *testing.T) {
	base := daemonEnv(t)
	t.Setenv(testLogMaxEnv, "4000")
	c := connect(t)
	cipherdir, _, pw := newVault(t, base, crypto.AESGCM)
	for i := 0; i < 60; i++ {
		// Each failure is a log line of about 200 bytes.
		mp := filepath.Join(base, fmt.Sprintf("missing-%02d", i))
		if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw}); err == nil {
			t.Fatal("mounted at a missing mount point")
		}
	}
	// The daemon may log a failure after answering it: wait for the last one's line.
	path := filepath.Join(base, "state", "vaultui", "daemon.log")
	waitUntil(t, "the last failure in daemon.log", func() bool {
		cur, _ := os.ReadFile(path)
		return bytes.Contains(cur, []byte("missing-59"))
	})
	cur, _ := os.ReadFile(path)
	old, _ := os.ReadFile(path + ".1")
	if len(cur) > 4000 || len(old) > 4000 || len(old) < 3000 {
		t.Fatalf("daemon.log %d bytes, daemon.log.1 %d; cap 4000", len(cur), len(old))
	}
	if !bytes.Contains(cur, []byte("missing-59")) {
		t.Errorf("the last line is not in daemon.log:\n%s", cur)
	}
	if m, _ := filepath.Glob(path + "*"); len(m) != 2 {
		t.Errorf("log files %v", m)
	}
	// The daemon's stdout and stderr (a panic's way out) follow the rotation.
	pid := daemonPID(t)
	for _, fd := range []string{"1", "2"} {
		if p, err := os.Readlink(filepath.Join("/proc", fmt.Sprint(pid), "fd", fd)); err != nil || p != path {
			t.Errorf("daemon fd %s is %q (%v), want %s", fd, p, err, path)
		}
	}
}
