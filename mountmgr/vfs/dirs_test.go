package vfs

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func openPath(t *testing.T) int {
	t.Helper()
	fd, err := unix.Open(t.TempDir(), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	return fd
}

func isOpen(fd int) bool {
	_, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	return err == nil
}

// TestDirCacheBorrowing: operations borrow cached descriptors, and one taken out of the cache
// (dropped, replaced, too old, pushed out) is closed when its last borrower gives it back,
// never before and never twice.
func TestDirCacheBorrowing(t *testing.T) {
	var c dirCache
	n := &node{}
	fd := openPath(t)
	first := c.put(n, fd)
	second, ok := c.get(n)
	if !ok || second.fd != fd {
		t.Fatalf("get after put: %v, fd %d, want %d", ok, second.fd, fd)
	}
	c.drop(n)
	if _, ok := c.get(n); ok {
		t.Fatal("a dropped descriptor is still handed out")
	}
	first.close()
	if !isOpen(fd) {
		t.Fatal("closed while still borrowed")
	}
	second.close()
	if isOpen(fd) {
		t.Fatal("not closed after the last borrower gave it back")
	}

	// Too old: get refuses it and, unborrowed, it is closed at once.
	fd = openPath(t)
	c.put(n, fd).close()
	for _, e := range c.entries {
		if e != nil && e.n == n {
			e.at = time.Now().Add(-2 * dirCacheTTL)
		}
	}
	if _, ok := c.get(n); ok || isOpen(fd) {
		t.Fatalf("a descriptor past its TTL: handed out %v, still open %v", ok, isOpen(fd))
	}

	// A full cache pushes out its oldest entry; a put for the same node replaces it.
	var fds []int
	for i := 0; i < dirCacheSize+1; i++ {
		fd := openPath(t)
		fds = append(fds, fd)
		c.put(&node{}, fd).close()
	}
	if isOpen(fds[0]) {
		t.Error("the entry pushed out of a full cache stays open")
	}
	for _, fd := range fds[1:] {
		if !isOpen(fd) {
			t.Errorf("descriptor %d of a cached entry was closed", fd)
		}
	}
	old := openPath(t)
	c.put(n, old).close()
	c.put(n, openPath(t)).close()
	if isOpen(old) {
		t.Error("a replaced entry stays open")
	}
	c.dropAll()
	for _, fd := range fds[1:] {
		if isOpen(fd) {
			t.Errorf("descriptor %d open after dropAll", fd)
		}
	}
}
