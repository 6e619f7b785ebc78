package mountmgr

import (
	"context"
	"log"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

type osexecCmd = osexec.Cmd

func newCmd(name string, args ...string) *osexec.Cmd { return osexec.Command(name, args...) }

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func testLogger(t testing.TB) *log.Logger { return log.New(tWriter{t}, "", 0) }

// testDaemon is a daemon with nothing mounted, as newDaemon makes it but without its files.
func testDaemon(t testing.TB) *daemon {
	return &daemon{log: testLogger(t), uid: os.Getuid(), mounts: map[string]*mount{}, settling: map[chan struct{}]bool{},
		quit: make(chan struct{}), ctx: context.Background(), mtab: procMounts{}}
}

// socketPair returns two connected unix sockets; the second is what the daemon serves.
func socketPair(t *testing.T) (net.Conn, *net.UnixConn) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	fa, fb := os.NewFile(uintptr(fds[0]), "a"), os.NewFile(uintptr(fds[1]), "b")
	ca, err := net.FileConn(fa)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := net.FileConn(fb)
	if err != nil {
		t.Fatal(err)
	}
	fa.Close()
	fb.Close()
	t.Cleanup(func() { ca.Close(); cb.Close() })
	return ca, cb.(*net.UnixConn)
}

// serveTest serves conn with d for the rest of the test. When the test ends, it closes conn
// and waits for d to stop serving it: a daemon still logging to a finished test is a race.
func serveTest(t *testing.T, d *daemon, conn *net.UnixConn) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.serveConn(conn)
	}()
	t.Cleanup(func() {
		conn.Close()
		<-done
	})
}

// fakeMounts is a mount table of a test's making.
type fakeMounts struct {
	find     func(uid int, skip func(mountEntry) bool) ([]mountEntry, error)
	detachFn func(mountPoint string) error
}

func (f fakeMounts) findStale(uid int, skip func(mountEntry) bool) ([]mountEntry, error) {
	return f.find(uid, skip)
}
func (f fakeMounts) detach(mountPoint string) error { return f.detachFn(mountPoint) }

// copyTestBinary copies the running test binary to dir/name, mode 0755, for a child process of
// another user (the build directory is private).
func copyTestBinary(t *testing.T, dir, name string) string {
	t.Helper()
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, name)
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}
