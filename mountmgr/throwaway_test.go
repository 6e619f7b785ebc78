package mountmgr

import (
	"os"
	"runtime"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// TestThrowawayThreadKeepsTheProcessNamespace: a mount namespace made on a throw-away thread
// (to abort a FUSE connection through a private fusectl) never becomes the process's. When
// the thread was the main one, the runtime parked it for good in that namespace: the
// daemon's /proc/self/mountinfo then showed a private copy, every vault was "no longer
// mounted here", and the daemon never exited.
func TestThrowawayThreadKeepsTheProcessNamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("unshare(CLONE_NEWNS) needs root (CAP_SYS_ADMIN)")
	}
	want, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		t.Fatal(err)
	}
	// The main thread runs goroutines only while the main goroutine (the test runner's) is
	// blocked, as it is now; busy goroutines around make the scheduler hand some of the
	// throw-away goroutines to it.
	var wg sync.WaitGroup
	for i := 0; i < 300; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); runtime.Gosched() }()
		tid := 0
		err := onThrowawayThread(func() error {
			tid = unix.Gettid()
			return unix.Unshare(unix.CLONE_NEWNS)
		})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := os.Readlink("/proc/self/ns/mnt"); got != want {
			t.Fatalf("after %d calls the process's mount namespace is %s, was %s", i+1, got, want)
		}
		if tid == unix.Getpid() {
			t.Fatal("f ran on the main thread")
		}
	}
	wg.Wait()
}
