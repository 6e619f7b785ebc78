package vfs

import (
	"bufio"
	"bytes"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/hanwen/go-fuse/v2/fs"
	"golang.org/x/sys/unix"

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

// waitFor waits, at most 20 s, until n requests of opcode op are logged since the last count:
// the kernel sends RELEASE after close(2) has returned, in the background.
func (l *requestLog) waitFor(op string, n int) {
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		l.mu.Lock()
		k := 0
		for _, line := range l.lines {
			if m := rxOpcode.FindStringSubmatch(line); m != nil && m[1] == op {
				k++
			}
		}
		l.mu.Unlock()
		if k >= n {
			return
		}
	}
}

// TestCreateUnlinkRequests: creating and deleting files costs no GETATTR of their directory per
// file. Each create or unlink invalidates the directory's attributes, and with the kernel's
// permission checks on it would fetch them again before the next one.
func TestCreateUnlinkRequests(t *testing.T) {
	reqs := &requestLog{}
	mp, _ := mountTest(t, testVolume(t, crypto.AESGCM, true), Options{Debug: true, Logger: log.New(reqs, "", 0), cacheTimeout: countedCache})
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
		t.Run(fmt.Sprint("allow_other=", allowOther), func(t *testing.T) {
			if allowOther {
				needAllowOther(t)
			}
			mp, _ := mountTest(t, testVolume(t, crypto.AESGCM, true), Options{AllowOther: allowOther})
			opts := superOptions(t, mp)
			if got := strings.Contains(opts, "default_permissions"); got != allowOther {
				t.Errorf("mount options %q", opts)
			}
		})
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

// TestListingStaysCached: after listing a large directory, every name is in the name cache, so
// the lookups that follow need no name encryption. The cache serves the whole mount, so the
// listing leaves room for the few names other lookups (of d itself) put there meanwhile.
func TestListingStaysCached(t *testing.T) {
	mp, m := mountTest(t, testVolume(t, crypto.AESGCM, true), Options{})
	dir := filepath.Join(mp, "d")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	const n = nameCacheMax - 64
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
	df, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer df.Close()
	// Emptied after the open, whose lookup of d would take a place in the cache.
	c := &dn.fsys.storedNames
	c.mu.Lock()
	c.m = boundedMap[nameKey, storedEntry]{}
	c.mu.Unlock()
	ents, err := df.ReadDir(-1)
	if err != nil || len(ents) != n {
		t.Fatalf("ReadDir: %d entries, %v", len(ents), err)
	}
	iv, errno := dn.key()
	if errno != 0 {
		t.Fatal(errno)
	}
	cached := 0
	c.mu.Lock()
	for _, e := range ents {
		if _, ok := c.m.get(dn.nameKey(iv, e.Name())); ok {
			cached++
		}
	}
	c.mu.Unlock()
	if cached != n {
		t.Errorf("%d of %d listed names cached", cached, n)
	}
}

// TestNameCacheOverflow: listings larger than the name cache, in one directory or spread over
// many, leave the mount's cache full with the latest name in it, instead of starting over or
// growing with the tree, and lookup misses in a full cache evict nothing; so the lookups that
// follow in listing order still find the cache's share of names.
func TestNameCacheOverflow(t *testing.T) {
	v := testVolume(t, crypto.AESGCM, true)
	f := &fsys{names: v.Names, perDirIV: true}
	f.tree = gocryptfsTree{f}
	const dirs = 3
	var nodes [dirs]*node
	for d := range nodes {
		nodes[d] = &node{fsys: f}
		iv := make([]byte, crypto.DirIVLen)
		iv[0] = byte(d)
		nodes[d].setKey(iv)
	}
	const perDir = nameCacheMax
	name := func(i int) string { return fmt.Sprint("file-", i) }
	for _, n := range nodes { // Readdir of each directory
		iv, _ := n.key()
		for i := 0; i < perDir; i++ {
			n.cacheName(iv, name(i), storedEntry{stored: "s" + name(i)})
		}
	}
	// Full, less at most the eighth that a put into a full cache evicts.
	cached := len(f.storedNames.m.m)
	if cached > nameCacheMax || cached < nameCacheMax-nameCacheMax/8-1 {
		t.Fatalf("%d names cached, want %d or a little fewer", cached, nameCacheMax)
	}
	last := nodes[dirs-1]
	if e, _ := last.storedEntry(name(perDir - 1)); e.stored != "s"+name(perDir-1) {
		t.Errorf("latest name not cached: %+v", e)
	}
	hits := 0
	for _, n := range nodes { // the lookups of "ls -l"
		for i := 0; i < perDir; i++ {
			e, errno := n.storedEntry(name(i))
			if errno != 0 {
				t.Fatal(errno)
			}
			if e.stored == "s"+name(i) {
				hits++
			}
		}
	}
	if hits != cached {
		t.Errorf("lookups of %d listed names: %d hits, want %d", dirs*perDir, hits, cached)
	}
	// A miss still caches its name while there is room, under its directory's IV only.
	f.storedNames.m = boundedMap[nameKey, storedEntry]{}
	if _, errno := nodes[0].storedEntry("new"); errno != 0 || len(f.storedNames.m.m) != 1 {
		t.Errorf("miss in an empty cache: %v, %d cached", errno, len(f.storedNames.m.m))
	}
	e0, _ := nodes[0].storedEntry("new")
	e1, _ := nodes[1].storedEntry("new")
	if e0.stored == e1.stored {
		t.Errorf("one name in two directories stored as %q in both", e0.stored)
	}
}

// TestMadeNameCachedInFullCache: a name the mount makes goes into the name cache even when the
// cache is full (of a long-lived mount's older names), because the requests that follow ask
// for it: tar sets each file's owner and times by name after writing it. Before, a full
// cache took no new name, and every such request encrypted the name again.
func TestMadeNameCachedInFullCache(t *testing.T) {
	mp, m := mountTest(t, testVolume(t, crypto.AESGCM, true), Options{})
	root := m.root
	iv, errno := root.key()
	if errno != 0 {
		t.Fatal(errno)
	}
	c := &root.fsys.storedNames
	c.mu.Lock()
	for i := 0; len(c.m.m) < nameCacheMax; i++ {
		c.m.put(root.nameKey(iv, fmt.Sprint("old-", i)), storedEntry{stored: fmt.Sprint("s", i)}, nameCacheMax)
	}
	c.mu.Unlock()
	for _, name := range []string{"made-file", "made-dir"} {
		var err error
		if name == "made-dir" {
			err = os.Mkdir(filepath.Join(mp, name), 0o700)
		} else {
			err = os.WriteFile(filepath.Join(mp, name), []byte("x"), 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
		c.mu.Lock()
		_, ok := c.m.get(root.nameKey(iv, name))
		n := len(c.m.m)
		c.mu.Unlock()
		if !ok {
			t.Errorf("%s: not in the full name cache after it was made", name)
		}
		if n > nameCacheMax {
			t.Errorf("%d names cached, want at most %d", n, nameCacheMax)
		}
	}
}

// TestNodeSize: a mount holds a node for every entry the kernel knows, a hundred thousand
// after a walk of a large tree, so a node stays go-fuse's inode plus two pointers; what
// directories and open files need goes in nodeExt.
func TestNodeSize(t *testing.T) {
	if got, max := unsafe.Sizeof(node{}), unsafe.Sizeof(fs.Inode{})+2*unsafe.Sizeof(uintptr(0)); got > max {
		t.Errorf("node is %d bytes, want at most %d", got, max)
	}
}

// countedCache is the cache timeout of mounts whose requests tests count: long enough that no
// entry expires during a test however slow the machine, so the counts are the kernel's and
// ours alone. (Timing is for the benchmarks: BenchmarkSmallFiles.)
const countedCache = time.Hour

// TestRequestBudget: the small-file workloads of "vaultui bench" (create, ls -l, rm -rf) are
// bound by FUSE round trips, so their speed is the number of requests per file. These are the
// kernel's minimum, and one fewer per create than gocryptfs v2.6 sends (it answers FLUSH, so
// the kernel sends one on every close):
//   - create: LOOKUP (the kernel looks a new name up before CREATE), CREATE, RELEASE;
//   - ls -l: a READDIRPLUS entry, then GNU ls's lstat (answered from that entry) and two
//     getxattrs (security.selinux, system.posix_acl_access);
//   - rm -rf: UNLINK (the name is known from the listing).
//
// ls -l runs on a new mount of the vault, so the kernel knows none of the files, as in the
// bench after the create's entries expired: the listing has to bring them back.
func TestRequestBudget(t *testing.T) {
	reqs := &requestLog{}
	v := volumeOf(realVault(t, "", crypto.AESGCM))
	opts := Options{Debug: true, Logger: log.New(reqs, "", 0), cacheTimeout: countedCache}
	mp, m := mountTest(t, v, opts)
	dir := filepath.Join(mp, "d")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	const n = 200
	roundTrips := func(c map[string]int) int {
		total := 0
		for op, k := range c {
			if op != "FORGET" && op != "BATCH_FORGET" && op != "INTERRUPT" { // no reply
				total += k
			}
		}
		return total
	}
	check := func(what string, c map[string]int, want map[string]int, perFile, slack int) {
		t.Helper()
		for op, k := range want {
			if c[op] != k {
				t.Errorf("%s: %d %s requests for %d files, want %d (all: %v)", what, c[op], op, n, k, c)
			}
		}
		if got := roundTrips(c); got > perFile*n+slack {
			t.Errorf("%s: %d round trips for %d files, want at most %d per file (+%d): %v", what, got, n, perFile, slack, c)
		}
	}

	reqs.count()
	for i := 0; i < n; i++ {
		fd, err := syscall.Open(filepath.Join(dir, fmt.Sprint("file-", i)), syscall.O_CREAT|syscall.O_EXCL|syscall.O_WRONLY|syscall.O_CLOEXEC, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		syscall.Close(fd)
	}
	// Every close's RELEASE arrives before the unmount: one the kernel still had queued
	// when the mount ended would never come (fsys.close closes its handle instead).
	reqs.waitFor("RELEASE", n)
	if err := unmount(m); err != nil {
		t.Fatal(err)
	}
	created := reqs.count()
	// One RELEASE per file; the go-fuse epoll probe's RELEASE may land here too, late.
	check("create", created, map[string]int{"CREATE": n}, 3, 8)
	if k := created["RELEASE"]; k < n || k > n+1 {
		t.Errorf("create: %d RELEASE requests for %d files, want %d (all: %v)", k, n, n, created)
	}
	if created["FLUSH"] > 1 {
		t.Errorf("create: %d FLUSH requests; after the first ENOSYS the kernel should send none", created["FLUSH"])
	}

	mp, _ = mountTest(t, v, opts)
	dir = filepath.Join(mp, "d")
	reqs.count()
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != n {
		t.Fatalf("ReadDir: %d entries, %v", len(ents), err)
	}
	buf := make([]byte, 256)
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			t.Fatal(err)
		}
		for _, attr := range []string{"security.selinux", "system.posix_acl_access"} {
			if _, err := unix.Lgetxattr(p, attr, buf); err != unix.ENODATA {
				t.Fatalf("lgetxattr %s %s: %v, want ENODATA", p, attr, err)
			}
		}
	}
	listed := reqs.count()
	for _, e := range ents {
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	removed := reqs.count()
	check("ls -l", listed, map[string]int{"GETXATTR": 2 * n, "LOOKUP": 1}, 3, 6) // LOOKUP: of d
	check("rm", removed, map[string]int{"UNLINK": n, "LOOKUP": 0}, 1, 4)
	t.Logf("requests for %d files: create %v; ls -l %v; rm %v", n, created, listed, removed)
}

// TestLocksStayInKernel: file locks are the kernel's own, with POSIX semantics, and cost no
// round trip (an SQLite transaction takes nine): a process's two POSIX locks on a file do not
// conflict, an open file description lock conflicts with them, and flock locks belong to
// their open file.
func TestLocksStayInKernel(t *testing.T) {
	reqs := &requestLog{}
	mp, _ := mountTest(t, testVolume(t, crypto.AESGCM, true), Options{Debug: true, Logger: log.New(reqs, "", 0)})
	p := filepath.Join(mp, "db")
	f1, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f1.Close()
	f2, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	reqs.count()
	wr := unix.Flock_t{Type: unix.F_WRLCK}
	if err := unix.FcntlFlock(f1.Fd(), unix.F_SETLK, &wr); err != nil {
		t.Fatalf("write lock: %v", err)
	}
	rd := unix.Flock_t{Type: unix.F_RDLCK}
	if err := unix.FcntlFlock(f2.Fd(), unix.F_SETLK, &rd); err != nil {
		t.Errorf("this process's second POSIX lock: %v, want it granted", err)
	}
	// The process's lock is now a read lock (its second lock replaced the first); an open file
	// description is an owner of its own.
	ofd := unix.Flock_t{Type: unix.F_WRLCK}
	if err := unix.FcntlFlock(f2.Fd(), unix.F_OFD_SETLK, &ofd); err != unix.EAGAIN {
		t.Errorf("OFD write lock against this process's POSIX read lock: %v, want EAGAIN", err)
	}
	if err := unix.Flock(int(f1.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatalf("flock: %v", err)
	}
	if err := unix.Flock(int(f2.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != unix.EWOULDBLOCK {
		t.Errorf("flock of another open file: %v, want EWOULDBLOCK", err)
	}
	unix.Flock(int(f1.Fd()), unix.LOCK_UN)
	un := unix.Flock_t{Type: unix.F_UNLCK}
	unix.FcntlFlock(f1.Fd(), unix.F_SETLK, &un)
	if c := reqs.count(); c["SETLK"]+c["SETLKW"]+c["GETLK"] != 0 {
		t.Errorf("lock calls reached the file system: %v", c)
	}
}

// TestClosedFileKeepsNoExt: a mount holds a node for every file it created as long as the
// kernel knows it; the lock, file-ID cache and handle list go with the last handle, so such
// a node costs no more than one only looked up.
func TestClosedFileKeepsNoExt(t *testing.T) {
	mp, m := mountTest(t, testVolume(t, crypto.AESGCM, true), Options{})
	// The kernel sends RELEASE after close(2) has returned, so the test waits for it.
	released := func(n *node) bool {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if n.x.Load() == nil {
				return true
			}
		}
		return false
	}
	if err := os.WriteFile(filepath.Join(mp, "f"), []byte("contents"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := m.root.GetChild("f")
	if f == nil {
		t.Fatal("no inode for f")
	}
	fn := f.Operations().(*node)
	if !released(fn) {
		t.Error("a closed file's node keeps its nodeExt")
	}
	// Open again: the new handle gets a nodeExt, and reads what was written.
	if b, err := os.ReadFile(filepath.Join(mp, "f")); err != nil || string(b) != "contents" {
		t.Errorf("read back %q, %v", b, err)
	}
	if !released(fn) {
		t.Error("the nodeExt stays after the second close")
	}
	// A directory keeps its nodeExt (its IV).
	if err := os.Mkdir(filepath.Join(mp, "d"), 0o700); err != nil {
		t.Fatal(err)
	}
	if d := m.root.GetChild("d"); d == nil || d.Operations().(*node).x.Load() == nil {
		t.Error("a directory's node has no nodeExt after mkdir")
	}
}

// TestReadAgainRequests: reading a tree's files a second time ("grep -r" again) costs OPEN and
// RELEASE per file, not a GETATTR too. The first pass's READs make the kernel mark each file's
// access time stale, and grep's fstat of the open file would fetch it with a GETATTR per
// file; a listing with attributes (READDIRPLUS) refreshes the whole directory's instead. A
// third pass reads no pages, so it also lists nothing: the kernel keeps the listing.
func TestReadAgainRequests(t *testing.T) {
	reqs := &requestLog{}
	v := volumeOf(realVault(t, "", crypto.AESGCM))
	mp, m := mountTest(t, v, Options{Debug: true, Logger: log.New(reqs, "", 0)})
	if !m.root.fsys.longCache {
		t.Skip("the cipherdir's file system keeps no long caches (watched local file systems only)")
	}
	const dirs, perDir = 3, 40
	for d := range dirs {
		dir := filepath.Join(mp, fmt.Sprint("d", d))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range perDir {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprint("f", i)), []byte("some text\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// grep -r: list each directory, then open, fstat, read and close each file.
	pass := func() map[string]int {
		reqs.count()
		for d := range dirs {
			dir := filepath.Join(mp, fmt.Sprint("d", d))
			ents, err := os.ReadDir(dir)
			if err != nil || len(ents) != perDir {
				t.Fatalf("ReadDir %s: %d entries, %v", dir, len(ents), err)
			}
			for _, e := range ents {
				b, err := os.ReadFile(filepath.Join(dir, e.Name()))
				if err != nil || string(b) != "some text\n" {
					t.Fatalf("%s: %q, %v", e.Name(), b, err)
				}
			}
		}
		reqs.waitFor("RELEASE", dirs*perDir)
		return reqs.count()
	}
	// The files' pages were written through the mount; drop them so the first pass reads.
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("1"), 0); err != nil {
		for d := range dirs {
			for i := range perDir {
				f, err := os.Open(filepath.Join(mp, fmt.Sprint("d", d), fmt.Sprint("f", i)))
				if err != nil {
					t.Fatal(err)
				}
				unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
				f.Close()
			}
		}
	}
	first := pass()
	if first["READ"] < dirs*perDir {
		t.Fatalf("the first pass read %d files of %d from the mount: %v", first["READ"], dirs*perDir, first)
	}
	second := pass()
	third := pass()
	t.Logf("first %v, second %v, third %v", first, second, third)
	if second["GETATTR"] > dirs+1 || second["READ"] > 0 {
		t.Errorf("second pass: %v; want no GETATTR or READ per file", second)
	}
	if third["GETATTR"] > 0 || third["READ"] > 0 || third["READDIRPLUS"] > 0 {
		t.Errorf("third pass: %v; want only OPEN and RELEASE (and the directories' OPENDIR, RELEASEDIR)", third)
	}
}

// TestOwnWriteKeepsPages: a write through the mount leaves the kernel's pages of the rest of
// the file in place. With AUTO_INVAL_DATA the kernel dropped them all at its next look at the
// file's attributes, for the new modification time that write gave it; such a drop while
// another process reads the file and a third extends it let the reader return zeros no one
// wrote (the atomic-save stress). A watched mount tells the kernel itself what changed
// behind it, so it keeps the pages.
func TestOwnWriteKeepsPages(t *testing.T) {
	reqs := &requestLog{}
	v := volumeOf(realVault(t, "", crypto.AESGCM))
	mp, m := mountTest(t, v, Options{Debug: true, Logger: log.New(reqs, "", 0), cacheTimeout: countedCache})
	if m.root.fsys.watch == nil {
		t.Skip("no watcher: the kernel drops pages for new sizes and times (AUTO_INVAL_DATA)")
	}
	p := filepath.Join(mp, "f")
	old := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB: whole pages, cached by the write
	if err := os.WriteFile(p, old, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf := make([]byte, len(old))
	if _, err := r.ReadAt(buf, 0); err != nil || !bytes.Equal(buf, old) {
		t.Fatalf("first read: %v", err)
	}
	time.Sleep(20 * time.Millisecond) // a modification time of its own for the next write
	w, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteAt([]byte("appended"), int64(len(old))); err != nil {
		t.Fatal(err)
	}
	w.Close()
	reqs.count()
	st, err := r.Stat() // the kernel looks at the attributes again: new size and mtime
	if err != nil || st.Size() != int64(len(old))+8 {
		t.Fatalf("stat after the write: %v, %v", st, err)
	}
	if _, err := r.ReadAt(buf, 0); err != nil || !bytes.Equal(buf, old) {
		t.Fatalf("read after the write: %v", err)
	}
	if got := reqs.count(); got["READ"] > 0 {
		t.Errorf("reading the unchanged part again after a write through the mount: %v; want no READ", got)
	}
}
