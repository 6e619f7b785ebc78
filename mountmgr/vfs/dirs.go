package vfs

import (
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/layout"
)

// Every cipher-side operation runs relative to a descriptor of the directory it happens in
// (see package layout for why). A directory's descriptor is found by opening each stored name
// from the cipherdir root (or from the nearest cached ancestor) with O_NOFOLLOW; a few recent
// ones are cached, since most operations come in runs within one directory.

// dirRef is a directory descriptor borrowed for one operation; close gives it back.
type dirRef struct {
	fd    int
	owned bool // false for the root's descriptor, which lives as long as the mount
}

func (d dirRef) close() {
	if d.owned {
		unix.Close(d.fd)
	}
}

// dirCacheSize is how many directory descriptors a mount keeps open; dirCacheTTL bounds how
// long one is trusted, so a directory replaced behind the mount's back (a sync tool) is seen.
const (
	dirCacheSize = 16
	dirCacheTTL  = time.Second
)

// dirCache maps directory nodes to open O_PATH descriptors. It hands out duplicates, so an
// entry can be evicted while an operation still uses its copy.
type dirCache struct {
	mu      sync.Mutex
	entries [dirCacheSize]dirCacheEntry
	next    int
}

type dirCacheEntry struct {
	n  *node
	fd int
	at time.Time
}

// get returns a duplicate of n's cached descriptor, or -1.
func (c *dirCache) get(n *node) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.entries {
		e := &c.entries[i]
		if e.n != n {
			continue
		}
		if time.Since(e.at) > dirCacheTTL {
			c.evict(e)
			return -1
		}
		fd, err := unix.FcntlInt(uintptr(e.fd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return -1
		}
		return fd
	}
	return -1
}

// put caches a duplicate of fd as n's descriptor.
func (c *dirCache) put(n *node, fd int) {
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.entries {
		if c.entries[i].n == n {
			c.evict(&c.entries[i])
		}
	}
	e := &c.entries[c.next]
	c.next = (c.next + 1) % dirCacheSize
	c.evict(e)
	*e = dirCacheEntry{n: n, fd: dup, at: time.Now()}
}

// drop forgets n's descriptor: n was removed, or its inode number now names a new directory.
func (c *dirCache) drop(n *node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.entries {
		if c.entries[i].n == n {
			c.evict(&c.entries[i])
		}
	}
}

func (c *dirCache) evict(e *dirCacheEntry) {
	if e.n != nil {
		unix.Close(e.fd)
	}
	*e = dirCacheEntry{}
}

// dirFd returns a descriptor of directory node n.
func (n *node) dirFd() (dirRef, syscall.Errno) {
	f := n.fsys
	if n.IsRoot() {
		return dirRef{fd: f.rootFd}, 0
	}
	if fd := f.dirs.get(n); fd >= 0 {
		return dirRef{fd: fd, owned: true}, 0
	}
	// Collect the stored names up to the root or a cached ancestor, then open them downwards.
	var path []string
	base := dirRef{fd: f.rootFd}
	for cur := n; !cur.IsRoot(); {
		name, parent := cur.Parent()
		if parent == nil {
			return dirRef{}, syscall.ENOENT // deleted
		}
		pn := parent.Operations().(*node)
		stored, errno := pn.storedName(name)
		if errno != 0 {
			return dirRef{}, errno
		}
		path = append(path, stored)
		if fd := f.dirs.get(pn); fd >= 0 {
			base = dirRef{fd: fd, owned: true}
			break
		}
		cur = pn
	}
	d := base
	for i := len(path) - 1; i >= 0; i-- {
		fd, err := layout.OpenDirPath(d.fd, path[i])
		d.close()
		if err != nil {
			return dirRef{}, fs2errno(err)
		}
		d = dirRef{fd: fd, owned: true}
	}
	f.dirs.put(n, d.fd)
	return d, 0
}

// parentFd returns a descriptor of n's parent directory and n's stored name in it. For a
// deleted node it fails with ENOENT. The root has no parent: callers handle it first.
func (n *node) parentFd() (dirRef, string, syscall.Errno) {
	name, parent := n.Parent()
	if parent == nil {
		return dirRef{}, "", syscall.ENOENT
	}
	pn := parent.Operations().(*node)
	stored, errno := pn.storedName(name)
	if errno != 0 {
		return dirRef{}, "", errno
	}
	d, errno := pn.dirFd()
	return d, stored, errno
}

// iv returns the directory IV of directory node n, reading gocryptfs.diriv once.
func (n *node) iv() ([]byte, syscall.Errno) {
	if !n.fsys.perDirIV {
		return n.fsys.zeroIV, 0
	}
	if iv := n.ext().dirIV.Load(); iv != nil {
		return iv[:], 0
	}
	d, errno := n.dirFd()
	if errno != 0 {
		return nil, errno
	}
	defer d.close()
	b, err := layout.ReadDirIV(d.fd)
	if err != nil {
		n.fsys.log.Printf("vfs: directory inode %d: reading its IV: %v", n.StableAttr().Ino, err)
		return nil, layout.Errno(err)
	}
	n.setIV(b)
	return b, 0
}

// setIV caches a directory's IV (nil forgets it).
func (n *node) setIV(b []byte) {
	if b == nil {
		n.ext().dirIV.Store(nil)
		return
	}
	var iv [crypto.DirIVLen]byte
	copy(iv[:], b)
	n.ext().dirIV.Store(&iv)
}

// storedName returns the on-disk name of child plain of directory n.
func (n *node) storedName(plain string) (string, syscall.Errno) {
	e, errno := n.storedEntry(plain)
	return e.stored, errno
}

// storedEntry returns the on-disk name of child plain of directory n; long names also carry
// the encoded name that goes into the .name file. A name over NameMax bytes is ENAMETOOLONG,
// whatever the vault's name encryption, as on a local file system.
func (n *node) storedEntry(plain string) (storedEntry, syscall.Errno) {
	if len(plain) > crypto.NameMax {
		return storedEntry{}, syscall.ENAMETOOLONG
	}
	if n.fsys.names == nil {
		if n.IsRoot() && plain == crypto.ConfName {
			return storedEntry{}, syscall.EPERM
		}
		return storedEntry{stored: plain}, 0
	}
	x := n.ext()
	x.namesMu.Lock()
	e, ok := x.conflicts[plain] // first: the name cache may hold what the name encrypts to
	if !ok {
		e, ok = x.names[plain]
	}
	x.namesMu.Unlock()
	if ok {
		return e, 0
	}
	iv, errno := n.iv()
	if errno != 0 {
		return storedEntry{}, errno
	}
	stored, encoded, long, err := n.fsys.names.StoredName(plain, iv)
	if err != nil {
		// ValidName refused it: the kernel never sends "", "." or names with '/' or NUL.
		return storedEntry{}, syscall.EINVAL
	}
	e = storedEntry{stored: stored, encoded: encoded, long: long}
	x.namesMu.Lock()
	// A miss in a full cache evicts nothing: in a pass of lookups over a listing larger than
	// the cache, it would evict the names still to come.
	if x.names == nil {
		x.names = make(map[string]storedEntry)
	}
	if len(x.names) < nameCacheMax {
		x.names[plain] = e
	}
	x.namesMu.Unlock()
	return e, 0
}

func (n *node) cacheName(plain string, e storedEntry) {
	x := n.ext()
	x.namesMu.Lock()
	if x.names == nil {
		x.names = make(map[string]storedEntry)
	} else if _, ok := x.names[plain]; !ok && len(x.names) >= nameCacheMax {
		// Evict one entry at random (map order) rather than start over: the lookups after
		// a listing larger than the cache, in listing order, then still find the cache's
		// share of it, where starting over would leave only the listing's tail.
		for k := range x.names {
			delete(x.names, k)
			break
		}
	}
	x.names[plain] = e
	x.namesMu.Unlock()
}

// forgetNames empties a directory's name cache, for a node whose inode number now belongs to
// a new directory with a new IV.
func (n *node) forgetNames() {
	x := n.ext()
	x.namesMu.Lock()
	x.names, x.conflicts = nil, nil
	x.namesMu.Unlock()
}

// nameCacheMax bounds each directory's name cache; a full cache evicts at random. Readdir fills it
// for the lookups of "ls -l" that follow, in the same order, so a listing larger than the
// cache would miss on nearly every lookup and encrypt each name again: 32768 entries (a few
// MB at most per directory) keep a 10,000-file listing whole.
const nameCacheMax = 1 << 15

type storedEntry struct {
	stored, encoded string
	long            bool
}

// writeLongName writes the .name file of a long name before its entry appears; it reports
// whether it created one, so that a failure can remove it again.
func writeLongName(dirfd int, e storedEntry) (bool, syscall.Errno) {
	if !e.long {
		return false, 0
	}
	created, err := layout.WriteLongName(dirfd, e.stored, e.encoded)
	return created, fs2errno(err)
}

// removeLongName removes the .name file of a long name whose entry is gone.
func removeLongName(dirfd int, e storedEntry) {
	if e.long {
		layout.RemoveLongName(dirfd, e.stored)
	}
}
