package mountmgr

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vaultui/vaultui/crypto"
)

// secretName is a plaintext name that must never reach the daemon log.
const secretName = "my-secret-tax-return"

// heldFile mounts a vault and opens a file with secret plaintext names through the mount, for
// reading; it returns the open file, its content and the daemon's pid.
func heldFile(t *testing.T, base string) (f *os.File, data []byte, cipherdir, mp string, pw []byte, pid int) {
	t.Helper()
	cipherdir, mp, pw = newVault(t, base, crypto.AESGCM)
	c := connect(t)
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: append([]byte(nil), pw...)}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(mp, secretName+"-dir")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	data = make([]byte, 3<<20+123)
	rand.Read(data)
	path := filepath.Join(dir, secretName+".pdf")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	// The client that asks gets the holder's details, paths included.
	err = c.Unmount(ctx(t), mp, false)
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), secretName) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("busy unmount: %v; want ErrBusy naming this process and its open file", err)
	}
	return f, data, cipherdir, mp, pw, daemonPID(t)
}

// daemonLog reads the test daemon's log, both generations.
func daemonLog(base string) string {
	p := filepath.Join(base, "state", "vaultui", "daemon.log")
	old, _ := os.ReadFile(p + ".1")
	cur, _ := os.ReadFile(p)
	return string(old) + string(cur)
}

func checkNoPlaintext(t *testing.T, log string) {
	t.Helper()
	if os.Getenv("SHOWLOG") != "" {
		t.Logf("log:\n%s", log)
	}
	if strings.Contains(log, "secret") {
		t.Errorf("the daemon log holds a plaintext name:\n%s", log)
	}
}

// statusOf asks the running daemon for its status without starting one.
func statusOf(t *testing.T) ([]MountInfo, error) {
	c, err := dial(ctx(t), SocketPath())
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Status(ctx(t))
}

// exitedWithin waits up to d for pid to exit and reports whether it did.
func exitedWithin(pid int, d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		var ws syscall.WaitStatus
		syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return true
		}
	}
	return false
}

// TestSIGTERMServesOpenFilesUntilClosed: on SIGTERM a busy mount is detached at once, its open
// file still reads correct data, "status" says what is going on, and the daemon exits once
// the file is closed, long before its grace runs out. The log names the holder by pid only.
func TestSIGTERMServesOpenFilesUntilClosed(t *testing.T) {
	base := daemonEnv(t)
	t.Setenv(testGraceEnv, "60s")
	f, data, cipherdir, mp, pw, pid := heldFile(t, base)
	half := len(data) / 2
	got := make([]byte, len(data))
	if _, err := io.ReadFull(f, got[:half]); err != nil {
		t.Fatal(err)
	}
	// A writer, too, finishes its file after the signal.
	outPath := filepath.Join(filepath.Dir(f.Name()), secretName+".out")
	w, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	written := make([]byte, 1<<20+77)
	rand.Read(written)
	if _, err := w.Write(written[:1000]); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(pid, syscall.SIGTERM)
	var st []MountInfo
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		st, err = statusOf(t)
		if err == nil && len(st) == 1 && st[0].Detached {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("status never showed the detached mount: %+v, %v", st, err)
		}
	}
	if st[0].MountPoint != mp || time.Until(st[0].Until) < 30*time.Second || time.Until(st[0].Until) > 61*time.Second {
		t.Errorf("status of the draining mount: %+v", st[0])
	}
	if left := mountsUnder(base); len(left) != 0 {
		t.Errorf("the busy mount is still reachable by path: %v", left)
	}
	if _, err := c2Mount(t, base); err == nil || !strings.Contains(err.Error(), "shutting down") {
		t.Errorf("a stopping daemon accepted a new mount: %v", err)
	}
	// The reader finishes its file, slowly; the daemon waits for it. A bounded wait: no signal
	// says "still waiting", as the daemon sits blocked on the file system's end until the
	// file is closed or the grace (60 s here) runs out. 1.5 s is three times the shortest
	// wait a draining daemon uses (500 ms), so a timer that wrongly ends the drain shows.
	time.Sleep(1500 * time.Millisecond)
	if _, err := io.ReadFull(f, got[half:]); err != nil {
		t.Fatalf("reading after SIGTERM: %v", err)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("read wrong data after SIGTERM")
	}
	if _, err := f.ReadAt(got[:4096], 0); err != nil || !bytes.Equal(got[:4096], data[:4096]) {
		t.Fatalf("reading again from the start: %v", err)
	}
	if _, err := w.Write(written[1000:]); err != nil {
		t.Fatalf("writing after SIGTERM: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("closing the written file after SIGTERM: %v", err)
	}
	if exitedWithin(pid, 0) {
		t.Fatal("the daemon exited while the file was open")
	}
	closed := time.Now()
	f.Close()
	if !exitedWithin(pid, 10*time.Second) {
		t.Fatal("the daemon did not exit after the last file was closed")
	}
	t.Logf("daemon exited %v after the file was closed", time.Since(closed).Round(time.Millisecond))
	// What the writer wrote after the signal is in the vault.
	c := connect(t)
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw}); err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(mp, outPath)
	if back, err := os.ReadFile(filepath.Join(mp, rel)); err != nil || !bytes.Equal(back, written) {
		t.Fatalf("the file written during the drain: %v (%d bytes, want %d)", err, len(back), len(written))
	}
	if err := c.Unmount(ctx(t), mp, false); err != nil {
		t.Fatal(err)
	}
	log := daemonLog(base)
	for _, want := range []string{
		fmt.Sprintf("in use by pid %d (", os.Getpid()),
		"detaching it and serving its open files until they are closed, until ",
		"its last user is gone",
		"daemon stopped",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	checkNoPlaintext(t, log)
}

// c2Mount asks the running daemon (without starting one) to mount a fresh vault.
func c2Mount(t *testing.T, base string) (MountInfo, error) {
	cipherdir, mp, pw := newVault(t, base, crypto.AESGCM)
	c, err := dial(ctx(t), SocketPath())
	if err != nil {
		return MountInfo{}, err
	}
	defer c.Close()
	return c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw})
}

// TestSIGTERMGraceRunsOut: a file held open past the grace does not keep the daemon: it exits
// within the bound, and the log says what it left and who held it (pid, no path).
func TestSIGTERMGraceRunsOut(t *testing.T) {
	base := daemonEnv(t)
	t.Setenv(testGraceEnv, "2s")
	f, _, _, _, _, pid := heldFile(t, base)
	start := time.Now()
	syscall.Kill(pid, syscall.SIGTERM)
	if !exitedWithin(pid, 8*time.Second) {
		t.Fatal("the daemon did not exit within 8 s with a grace of 2 s")
	}
	took := time.Since(start)
	if took < 1500*time.Millisecond {
		t.Errorf("the daemon exited after %v, before its grace of 2 s", took)
	}
	t.Logf("daemon exited %v after SIGTERM", took.Round(time.Millisecond))
	// Its user now gets an error, not silently wrong data; the log said it would.
	if _, err := f.ReadAt(make([]byte, 10), 0); err == nil {
		t.Error("read through the abandoned mount succeeded")
	}
	log := daemonLog(base)
	for _, want := range []string{
		fmt.Sprintf("still in use after 2s (pid %d (", os.Getpid()),
		`exiting anyway: its users now get "transport endpoint is not connected"`,
		"left in use at exit: ",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	checkNoPlaintext(t, log)
}

// TestSIGTERMMountCopiedToOtherNamespace: a process in another mount namespace holds a copy
// of the mount, so unmounting it here never ends the file system (daemons used to hang at
// "shutting down" forever). The daemon exits within its bounds and says what it left.
func TestSIGTERMMountCopiedToOtherNamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a new mount namespace")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare(1)")
	}
	base := daemonEnv(t)
	t.Setenv(testGraceEnv, "2s")
	cipherdir, mp, pw := newVault(t, base, crypto.AESGCM)
	c := connect(t)
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw}); err != nil {
		t.Fatal(err)
	}
	copyMounts(t, unshare)
	pid := daemonPID(t)
	start := time.Now()
	syscall.Kill(pid, syscall.SIGTERM)
	if !exitedWithin(pid, 15*time.Second) {
		t.Fatal("the daemon hangs at shutdown with a copy of its mount in another namespace")
	}
	t.Logf("daemon exited %v after SIGTERM", time.Since(start).Round(time.Millisecond))
	log := daemonLog(base)
	for _, want := range []string{
		"unmounted " + mp + " (" + cipherdir + ") here, but its file system stays in use",
		mp + " still in use after 2s (no process in this mount namespace)",
		"left in use at exit: " + mp,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

// copyMounts starts a process in a new mount namespace, which holds a copy of every mount
// (ours included) until it is killed; it is killed when the test ends.
func copyMounts(t *testing.T, unshare string) *exec.Cmd {
	t.Helper()
	ns := exec.Command(unshare, "--mount", "--propagation", "private", "sleep", "120")
	if err := ns.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Process.Kill(); ns.Wait() })
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		self, _ := os.Readlink("/proc/self/ns/mnt")
		other, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", ns.Process.Pid))
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", ns.Process.Pid))
		if other != "" && other != self && strings.TrimSpace(string(comm)) == "sleep" {
			return ns
		}
		if time.Now().After(end) {
			t.Fatal("unshare did not start")
		}
	}
}

// TestUnmountWithCopyInOtherNamespace: unmounting a vault whose mount was copied into another
// mount namespace returns within its bound; the file system, still alive there, is listed as
// detached until that copy goes away.
func TestUnmountWithCopyInOtherNamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a new mount namespace")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare(1)")
	}
	base := daemonEnv(t)
	cipherdir, mp, pw := newVault(t, base, crypto.AESGCM)
	c := connect(t)
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw}); err != nil {
		t.Fatal(err)
	}
	ns := copyMounts(t, unshare)
	start := time.Now()
	if err := c.Unmount(ctx(t), mp, false); err != nil {
		t.Fatalf("unmount: %v", err)
	}
	if took := time.Since(start); took > 8*time.Second {
		t.Errorf("unmount took %v", took)
	}
	if left := mountsUnder(base); len(left) != 0 {
		t.Fatalf("still mounted here: %v", left)
	}
	st, err := c.Status(ctx(t))
	if err != nil || len(st) != 1 || !st[0].Detached || st[0].MountPoint != mp || !st[0].Until.IsZero() {
		t.Fatalf("status: %+v, %v; want %s detached", st, err, mp)
	}
	ns.Process.Kill()
	ns.Wait()
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		st, err := c.Status(ctx(t))
		if err == nil && len(st) == 0 {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("status after the copy went away: %+v, %v", st, err)
		}
	}
	log := daemonLog(base)
	for _, want := range []string{
		"unmounted " + mp + " (" + cipherdir + ") here, but its file system stays in use (no process in this mount namespace; a copy in another mount namespace?)",
		mp + " (detached): its last user is gone; file system closed",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

// TestIdleExit: a daemon with nothing mounted and no client exits after its idle delay, and
// the next client starts a new one; a mount or a connected client keeps it.
func TestIdleExit(t *testing.T) {
	base := daemonEnv(t)
	t.Setenv(testIdleExitEnv, "2s")
	cipherdir, mp, pw := newVault(t, base, crypto.AESGCM)
	c := connect(t)
	pid := daemonPID(t)
	// A connected client keeps it ...
	if exitedWithin(pid, 4*time.Second) {
		t.Fatal("the daemon exited while a client was connected")
	}
	// ... and so does a mount.
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if exitedWithin(pid, 4*time.Second) {
		t.Fatal("the daemon exited with a vault mounted")
	}
	c = connect(t)
	if err := c.Unmount(ctx(t), mp, false); err != nil {
		t.Fatal(err)
	}
	c.Close()
	start := time.Now()
	if !exitedWithin(pid, 8*time.Second) {
		t.Fatal("idle daemon still running 8 s after its last client left (idle exit 2 s)")
	}
	if took := time.Since(start); took < 1500*time.Millisecond {
		t.Errorf("exited %v after the last client left, before its idle delay of 2 s", took)
	}
	if !strings.Contains(daemonLog(base), "nothing mounted and no client for 2s: exiting") {
		t.Errorf("log does not say why it exited:\n%s", daemonLog(base))
	}
	if _, err := os.Stat(SocketPath()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left behind: %v", err)
	}
	// On demand again.
	c = connect(t)
	if p := daemonPID(t); p == 0 || p == pid {
		t.Fatalf("no new daemon: pid %d (old %d)", p, pid)
	}
	if _, err := c.Status(ctx(t)); err != nil {
		t.Fatal(err)
	}
}

// TestIdleExitRace: clients arriving just as an idle daemon decides to exit still get a
// daemon (a new one), never an error.
func TestIdleExitRace(t *testing.T) {
	daemonEnv(t)
	t.Setenv(testIdleExitEnv, "1s")
	// The sleeps are the test, not a wait for something: they aim the next client at the
	// moments around the daemon's idle exit (1 s).
	for i := 0; i < 5; i++ {
		c := connect(t)
		c.Close()
		time.Sleep(time.Duration(900+i*50) * time.Millisecond)
	}
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < 20; i++ {
		c, err := Connect(cctx)
		if err != nil {
			t.Fatalf("connect %d: %v", i, err)
		}
		if _, err := c.Status(cctx); err != nil {
			t.Fatalf("status %d: %v", i, err)
		}
		c.Close()
		time.Sleep(100 * time.Millisecond) // spread over two idle-exit periods, as above
	}
}

// TestLogSafe: a busy error keeps its holders' paths for the client and gives the log only
// pids and process names, also wrapped or joined with others.
func TestLogSafe(t *testing.T) {
	be := &busyError{mountPoint: "/m", holders: []holder{
		{PID: 7, Comm: "vim", What: []string{"working directory /m/" + secretName, "open file /m/" + secretName + "/a"}},
		{PID: 9, Comm: "cat", What: []string{"open file /m/" + secretName + ".txt"}},
	}}
	if !errors.Is(be, ErrBusy) || !strings.Contains(be.Error(), "pid 7 (vim): working directory /m/"+secretName) {
		t.Errorf("client message: %v", be)
	}
	wrapped := fmt.Errorf("context: %w", be)
	joined := errors.Join(errors.New("other failure"), wrapped)
	for _, err := range []error{be, wrapped, joined} {
		got := logSafe(err)
		if strings.Contains(got, "secret") || !strings.Contains(got, "/m is in use by pid 7 (vim), pid 9 (cat)") {
			t.Errorf("logSafe(%v) = %q", err, got)
		}
	}
	if got := logSafe(joined); !strings.Contains(got, "other failure") {
		t.Errorf("logSafe dropped the other error: %q", got)
	}
	noHolder := &busyError{mountPoint: "/m", cause: errors.New("device or resource busy")}
	if got := logSafe(noHolder); got != noHolder.Error() || !strings.Contains(got, "device or resource busy") {
		t.Errorf("logSafe without holders: %q", got)
	}
}

// TestIdleExitKeepsUndeliveredReport: a daemon that cleaned up after a crashed one waits with
// its idle exit until a client has taken the report, unless its socket is gone (then nobody
// could ever take it).
func TestIdleExitKeepsUndeliveredReport(t *testing.T) {
	base := daemonEnv(t)
	t.Setenv(testIdleExitEnv, "1s")
	cipherdir, mp, pw := newVault(t, base, crypto.AESGCM)
	crash := func() {
		t.Helper()
		c := connect(t)
		if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: append([]byte(nil), pw...)}); err != nil {
			t.Fatal(err)
		}
		pid := daemonPID(t)
		c.Close()
		syscall.Kill(pid, syscall.SIGKILL)
		waitGone(t, pid)
	}
	crash()
	c := connect(t) // cleans up, report pending
	pid := daemonPID(t)
	c.Close()
	if exitedWithin(pid, 3*time.Second) {
		t.Fatal("the daemon exited with an undelivered stale mount report")
	}
	c = connect(t)
	if r, err := c.Stale(ctx(t)); err != nil || len(r) != 1 || r[0].MountPoint != mp {
		t.Fatalf("report: %+v, %v", r, err)
	}
	c.Close()
	if !exitedWithin(pid, 5*time.Second) {
		t.Fatal("the daemon did not exit once its report was delivered")
	}

	crash()
	connect(t).Close()
	pid = daemonPID(t)
	if err := os.Remove(SocketPath()); err != nil {
		t.Fatal(err)
	}
	if !exitedWithin(pid, 5*time.Second) {
		t.Fatal("an unreachable daemon (socket removed) with nothing mounted did not exit")
	}
}
