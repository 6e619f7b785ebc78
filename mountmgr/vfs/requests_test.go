package vfs

import (
	"bufio"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/vaultui/vaultui/crypto"
)

// requestLog collects go-fuse's debug output and counts requests per opcode.
type requestLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *requestLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.lines = append(l.lines, string(p))
	l.mu.Unlock()
	return len(p), nil
}

var rxOpcode = regexp.MustCompile(`rx \d+: ([A-Z_]+)`)

// count returns the requests per opcode logged since the last call.
func (l *requestLog) count() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for _, line := range l.lines {
		if m := rxOpcode.FindStringSubmatch(line); m != nil {
			out[m[1]]++
		}
	}
	l.lines = nil
	return out
}

// TestCreateUnlinkRequests: creating and deleting files costs no GETATTR of their directory per
// file. Each create or unlink invalidates the directory's attributes, and with the kernel's
// permission checks on it would fetch them again before the next one.
func TestCreateUnlinkRequests(t *testing.T) {
	reqs := &requestLog{}
	mp, _ := mountTest(t, testVolume(t, crypto.AESGCM, true), Options{Debug: true, Logger: log.New(reqs, "", 0)})
	dir := filepath.Join(mp, "d")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	const n = 50
	reqs.count()
	for i := 0; i < n; i++ {
		f, err := os.OpenFile(filepath.Join(dir, fmt.Sprint("f", i)), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	created := reqs.count()
	for i := 0; i < n; i++ {
		if err := os.Remove(filepath.Join(dir, fmt.Sprint("f", i))); err != nil {
			t.Fatal(err)
		}
	}
	removed := reqs.count()
	if created["CREATE"] != n || removed["UNLINK"] != n {
		t.Fatalf("requests not logged as expected: %v, %v", created, removed)
	}
	if created["GETATTR"] > 2 || removed["GETATTR"] > 2 {
		t.Errorf("GETATTR per file: %d on %d creates (%v), %d on %d unlinks (%v)",
			created["GETATTR"], n, created, removed["GETATTR"], n, removed)
	}
}

// TestDefaultPermissionsWithAllowOther: a mount other users may enter keeps the kernel's
// permission checks; a private one leaves them to the cipherdir.
func TestDefaultPermissionsWithAllowOther(t *testing.T) {
	for _, allowOther := range []bool{false, true} {
		mp, _ := mountTest(t, testVolume(t, crypto.AESGCM, true), Options{AllowOther: allowOther})
		opts := superOptions(t, mp)
		if got := strings.Contains(opts, "default_permissions"); got != allowOther {
			t.Errorf("allow_other %v: mount options %q", allowOther, opts)
		}
	}
}

// superOptions returns the super options /proc/self/mountinfo lists for mount point mp.
func superOptions(t *testing.T, mp string) string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && fields[4] == mp {
			return fields[len(fields)-1]
		}
	}
	t.Fatalf("%s not in mountinfo", mp)
	return ""
}

// TestListingStaysCached: after listing a directory as large as the name cache, every name is
// in it, so the lookups that follow need no name encryption.
func TestListingStaysCached(t *testing.T) {
	mp, m := mountTest(t, testVolume(t, crypto.AESGCM, true), Options{})
	dir := filepath.Join(mp, "d")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	const n = nameCacheMax
	for i := 0; i < n; i++ {
		fd, err := syscall.Open(filepath.Join(dir, fmt.Sprint("file-", i)), syscall.O_CREAT|syscall.O_EXCL|syscall.O_WRONLY|syscall.O_CLOEXEC, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		syscall.Close(fd)
	}
	d := m.root.GetChild("d")
	if d == nil {
		t.Fatal("no inode for d")
	}
	dn := d.Operations().(*node)
	dn.forgetNames()
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != n {
		t.Fatalf("ReadDir: %d entries, %v", len(ents), err)
	}
	dn.ext().namesMu.Lock()
	cached := len(dn.ext().names.m)
	dn.ext().namesMu.Unlock()
	if cached != n {
		t.Errorf("%d of %d listed names cached", cached, n)
	}
}

// TestNameCacheOverflow: a directory listing larger than the name cache leaves the cache full
// with the latest name in it, instead of starting over, and lookup misses in a full cache evict
// nothing; so the lookups that follow in listing order still find the cache's share of names.
func TestNameCacheOverflow(t *testing.T) {
	v := testVolume(t, crypto.AESGCM, true)
	n := &node{fsys: &fsys{names: v.Names, perDirIV: true}}
	var iv [crypto.DirIVLen]byte
	n.ext().dirIV.Store(&iv)
	const total = 3 * nameCacheMax
	name := func(i int) string { return fmt.Sprint("file-", i) }
	for i := 0; i < total; i++ { // Readdir
		n.cacheName(name(i), storedEntry{stored: "s" + name(i)})
	}
	if len(n.ext().names.m) != nameCacheMax {
		t.Fatalf("%d names cached, want %d", len(n.ext().names.m), nameCacheMax)
	}
	if e := n.ext().names.m[name(total-1)]; e.stored != "s"+name(total-1) {
		t.Errorf("latest name not cached: %+v", e)
	}
	hits := 0
	for i := 0; i < total; i++ { // the lookups of "ls -l"
		e, errno := n.storedEntry(name(i))
		if errno != 0 {
			t.Fatal(errno)
		}
		if e.stored == "s"+name(i) {
			hits++
		}
	}
	if hits != nameCacheMax {
		t.Errorf("lookups of %d listed names: %d hits, want %d", total, hits, nameCacheMax)
	}
	// A miss still caches its name while there is room.
	n.forgetNames()
	if _, errno := n.storedEntry("new"); errno != 0 || len(n.ext().names.m) != 1 {
		t.Errorf("miss in an empty cache: %v, %d cached", errno, len(n.ext().names.m))
	}
}
