package vfs

import (
	"errors"
	"log"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
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

// TestTempDirLeftover: a temporary directory that a crash left in a directory (layout.MakeDir)
// is not listed, and does not keep the directory from being removed: it was never content.
func TestTempDirLeftover(t *testing.T) {
	v := realVault(t, "", crypto.AESGCM)
	mp, _ := mountTest(t, volumeOf(v), Options{})
	if err := os.Mkdir(filepath.Join(mp, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir, stored := cipherName(t, v, "d")
	tmp := filepath.Join(dir, stored, "gocryptfs.vaultui-tmp.0123456789abcdef")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, crypto.DirIVName), make([]byte, crypto.DirIVLen), 0o440); err != nil {
		t.Fatal(err)
	}
	if ents, err := os.ReadDir(filepath.Join(mp, "d")); err != nil || len(ents) != 0 {
		t.Fatalf("listing: %v %v", ents, err)
	}
	if err := os.Remove(filepath.Join(mp, "d")); err != nil {
		t.Fatalf("rmdir: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, stored)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("cipher directory still there: %v", err)
	}
	fsckClean(t, v)
}

// TestLongNameRemovalLogged: when the .name file of a removed long-name entry cannot be removed
// (here it is already gone), the unlink still succeeds and the log says which file it was.
func TestLongNameRemovalLogged(t *testing.T) {
	v := realVault(t, "", crypto.AESGCM)
	var logged lockedBuffer
	mp, _ := mountTest(t, volumeOf(v), Options{Logger: log.New(&logged, "", 0)})
	name := strings.Repeat("long-name-", 20)
	if err := os.WriteFile(filepath.Join(mp, name), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dir, stored := cipherName(t, v, name)
	if !crypto.IsLongName(stored) {
		t.Fatalf("%s is not stored as a long name", stored)
	}
	if err := os.Remove(filepath.Join(dir, stored+crypto.LongNameSuffix)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(mp, name)); err != nil {
		t.Fatalf("unlink: %v", err)
	}
	logged.mu.Lock()
	defer logged.mu.Unlock()
	if want := "removing " + stored + crypto.LongNameSuffix + ": no such file or directory"; !strings.Contains(logged.b.String(), want) {
		t.Errorf("log lacks %q:\n%s", want, logged.b.String())
	}
}
