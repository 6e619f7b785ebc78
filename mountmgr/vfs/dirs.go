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
	fd int
	// shared is the cache entry fd belongs to; nil for the root's descriptor, which lives as
	// long as the mount, and for descriptors the operation owns alone (owned).
	shared *cachedDir
	owned  bool
}

func (d dirRef) close() {
	switch {
	case d.shared != nil:
		d.shared.release()
	case d.owned:
		unix.Close(d.fd)
	}
}

// dirCacheSize is how many directory descriptors a mount keeps open; dirCacheTTL bounds how
// long one is trusted, so a directory replaced behind the mount's back (a sync tool) is seen.
const (
	dirCacheSize = 16
	dirCacheTTL  = time.Second
)

// dirCache maps directory nodes to open O_PATH descriptors. Operations borrow a cached
// descriptor itself, counted, rather than a duplicate of it (two system calls less for
// every operation); one evicted while borrowed is closed when its last user gives it back.
type dirCache struct {
	mu      sync.Mutex
	entries [dirCacheSize]*cachedDir
	next    int
}

// cachedDir is one cached descriptor. Its fields are guarded by the cache's mutex.
type cachedDir struct {
	c       *dirCache
	n       *node
	fd      int
	at      time.Time
	users   int  // operations holding fd
	evicted bool // out of the cache: close fd once users is 0
}

// release gives back a borrowed descriptor.
func (e *cachedDir) release() {
	e.c.mu.Lock()
	e.users--
	closeNow := e.evicted && e.users == 0
	e.c.mu.Unlock()
	if closeNow {
		unix.Close(e.fd)
	}
}

// get borrows n's cached descriptor; false if there is none (or it is too old).
func (c *dirCache) get(n *node) (dirRef, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.entries {
		if e == nil || e.n != n {
			continue
		}
		if time.Since(e.at) > dirCacheTTL {
			c.evict(i)
			return dirRef{}, false
		}
		e.users++
		return dirRef{fd: e.fd, shared: e}, true
	}
	return dirRef{}, false
}

// put caches fd, which the caller opened and hands over, as n's descriptor, and returns it
// borrowed.
func (c *dirCache) put(n *node, fd int) dirRef {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked(n)
	i := c.next
	c.next = (c.next + 1) % dirCacheSize
	c.evict(i)
	e := &cachedDir{c: c, n: n, fd: fd, at: time.Now(), users: 1}
	c.entries[i] = e
	return dirRef{fd: fd, shared: e}
}

// drop forgets n's descriptor: n was removed, or its inode number now names a new directory.
func (c *dirCache) drop(n *node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked(n)
}

func (c *dirCache) dropLocked(n *node) {
	for i, e := range c.entries {
		if e != nil && e.n == n {
			c.evict(i)
		}
	}
}

// dropAll empties the cache (the mount is gone).
func (c *dirCache) dropAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.entries {
		c.evict(i)
	}
}

// evict takes entry i out of the cache; c.mu is held.
func (c *dirCache) evict(i int) {
	e := c.entries[i]
	if e == nil {
		return
	}
	c.entries[i] = nil
	e.evicted = true
	if e.users == 0 {
		unix.Close(e.fd)
	}
}

// dirFd returns a descriptor of directory node n.
func (n *node) dirFd() (dirRef, syscall.Errno) {
	f := n.fsys
	if n.IsRoot() {
		return dirRef{fd: f.rootDir}, 0
	}
	if d, ok := f.dirs.get(n); ok {
		return d, 0
	}
	if k := n.ext().dirKey.Load(); k != nil {
		if fd, ok := f.tree.openKnown(k.bytes()); ok {
			return f.keepDir(n, fd), 0
		}
	}
	// Collect the stored names up to the root or a cached ancestor, then open them downwards.
	var path []string
	var nodes []*node
	base := dirRef{fd: f.rootDir}
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
		nodes = append(nodes, cur)
		if d, ok := f.dirs.get(pn); ok {
			base = d
			break
		}
		cur = pn
	}
	d := base
	for i := len(path) - 1; i >= 0; i-- {
		fd, key, err := f.tree.openDir(d.fd, path[i])
		d.close()
		if err != nil {
			return dirRef{}, fs2errno(err)
		}
		if key != nil {
			nodes[i].setKey(key)
		}
		d = dirRef{fd: fd, owned: true}
	}
	return f.keepDir(n, d.fd), 0
}

// keepDir caches fd, just opened for directory node n, and returns it borrowed.
func (f *fsys) keepDir(n *node, fd int) dirRef {
	d := dirRef{fd: fd, owned: true}
	if f.opts.SharedStorage {
		// Another machine may rename or replace a directory at any time: nothing is cached,
		// and each operation walks from the root, as gocryptfs does always.
		return d
	}
	if f.watch != nil {
		f.watch.add(n, d.fd)
	}
	return f.dirs.put(n, d.fd)
}

// place returns where n's object is (tree.place): a directory descriptor and a name in it,
// through which its attributes are read and changed and its content opened. For a deleted
// node it fails with ENOENT. The root has no place: callers handle it first.
func (n *node) place() (dirRef, string, syscall.Errno) {
	d, stored, errno := n.parentFd()
	if errno != 0 {
		return d, stored, errno
	}
	return n.fsys.tree.place(n, d, stored)
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

// key returns what the names in directory node n are encrypted under (tree.dirKey: its
// gocryptfs IV, its Cryptomator ID), read once and cached.
func (n *node) key() ([]byte, syscall.Errno) {
	if k := n.ext().dirKey.Load(); k != nil {
		return k.bytes(), 0
	}
	d, errno := n.dirFd()
	if errno != 0 {
		return nil, errno
	}
	defer d.close()
	if k := n.ext().dirKey.Load(); k != nil { // opening it may have read it
		return k.bytes(), 0
	}
	b, err := n.fsys.tree.dirKey(n, d.fd)
	if err != nil {
		n.fsys.log.Printf("vfs: directory inode %d: reading its key: %v", n.StableAttr().Ino, err)
		return nil, layout.Errno(err)
	}
	n.setKey(b)
	return b, 0
}

// dirKey is a directory's key, kept by value: an IV of 16 bytes or an ID of up to 36.
type dirKey struct {
	b [36]byte
	n uint8
}

func (k *dirKey) bytes() []byte { return k.b[:k.n] }

// setKey caches a directory's key (nil forgets it).
func (n *node) setKey(b []byte) {
	if b == nil || len(b) > len(dirKey{}.b) {
		n.ext().dirKey.Store(nil)
		return
	}
	k := &dirKey{n: uint8(len(b))}
	copy(k.b[:], b)
	n.ext().dirKey.Store(k)
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
	if n.fsys.plainNames {
		return n.fsys.tree.storedEntry(plain, nil, n.IsRoot()) // PlaintextNames
	}
	x := n.ext()
	x.namesMu.Lock()
	e, ok := x.conflicts[plain] // first: the name cache may hold what the name encrypts to
	x.namesMu.Unlock()
	if ok {
		if e.stored == "" {
			return storedEntry{}, syscall.ENOENT // what an entry made under another IV decrypts to by chance
		}
		return e, 0
	}
	iv, errno := n.key()
	if errno != 0 {
		return storedEntry{}, errno
	}
	k := n.nameKey(iv, plain)
	c := &n.fsys.storedNames
	c.mu.Lock()
	e, ok = c.m.get(k)
	c.mu.Unlock()
	if ok {
		return e, 0
	}
	e, errno = n.fsys.tree.storedEntry(plain, iv, false) // the root is special with PlaintextNames only
	if errno != 0 {
		return storedEntry{}, errno
	}
	c.mu.Lock()
	// A miss in a full cache evicts nothing: in a pass of lookups over a listing larger than
	// the cache, it would evict the names still to come.
	c.m.add(k, e, nameCacheMax)
	c.mu.Unlock()
	return e, 0
}

// byChance reports whether plain is only what an entry of directory n made under another IV
// decrypts to by chance (gocryptfsTree.conflicts): no name of it, which shows under another.
func (n *node) byChance(plain string) bool {
	x := n.ext()
	x.namesMu.Lock()
	e, ok := x.conflicts[plain]
	x.namesMu.Unlock()
	return ok && e.stored == ""
}

// cacheName remembers the stored name of child plain of directory n, whose key is iv.
func (n *node) cacheName(iv []byte, plain string, e storedEntry) {
	k := n.nameKey(iv, plain)
	c := &n.fsys.storedNames
	c.mu.Lock()
	// A full cache evicts some entries at random (boundedMap.put) rather than start over: the
	// lookups after a listing larger than the cache, in listing order, then still find the
	// cache's share of it, where starting over would leave only the listing's tail.
	c.m.put(k, e, nameCacheMax)
	c.mu.Unlock()
}

// forgetNames drops a directory's conflict copies, for a node whose inode number now belongs
// to a new directory. Its cached stored names need no forgetting: they are keyed by the old IV
// (nameKey).
func (n *node) forgetNames() {
	x := n.ext()
	x.namesMu.Lock()
	x.conflicts = nil
	x.namesMu.Unlock()
}

// storedNameCache maps a directory and a plain name to the stored name. One cache serves the
// whole mount, rather than one per directory: per directory, a walk of a large tree kept a
// name for every file the kernel knew, on top of go-fuse's node, and the mount outgrew
// gocryptfs's memory (which keeps no such cache).
type storedNameCache struct {
	mu sync.Mutex
	m  boundedMap[nameKey, storedEntry]
}

// nameKey names a directory by its inode number and its IV: a stored name is a function of
// the IV and the plain name, but a listing caches the name it found on disk, which only
// holds for that directory (deterministic names share one IV). A new directory that got a
// deleted one's number has a new IV, so it never finds the old one's names.
type nameKey struct {
	key   dirKey
	ino   uint64
	plain string
}

func (n *node) nameKey(key []byte, plain string) nameKey {
	k := nameKey{ino: n.StableAttr().Ino, plain: plain}
	k.key.n = uint8(copy(k.key.b[:], key))
	return k
}

// nameCacheMax bounds the mount's name cache (about 1 MiB); a full cache evicts at random. The
// cache saves encrypting a name again (about 1.5 µs, against tens of µs for the request): the
// CREATE after a LOOKUP that found nothing, and the UNLINK, RENAME or LOOKUP of a listed name.
// A listing of up to 8192 names stays cached whole for the lookups of "ls -l" that follow.
const nameCacheMax = 1 << 13

type storedEntry struct {
	stored, encoded string
	long            bool
}
