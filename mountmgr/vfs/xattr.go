package vfs

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
)

// Extended attributes in gocryptfs's format (package crypto): every attribute is stored
// encrypted under user.gocryptfs.*, except POSIX ACLs, which pass through as they are so the
// host file system can apply them. security.capability is answered with EOPNOTSUPP, as
// gocryptfs does without -suid: vaults are mounted nosuid, so file capabilities mean nothing
// here, and the kernel would otherwise ask for it before every write.

var (
	_ = (fs.NodeGetxattrer)((*node)(nil))
	_ = (fs.NodeSetxattrer)((*node)(nil))
	_ = (fs.NodeRemovexattrer)((*node)(nil))
	_ = (fs.NodeListxattrer)((*node)(nil))
)

const (
	aclAccess  = "system.posix_acl_access"
	aclDefault = "system.posix_acl_default"
	capability = "security.capability"
	// xattrBufMax holds the largest value Linux allows (64 KiB) plus encryption overhead.
	xattrBufMax = 64<<10 + 256
)

func isACL(name string) bool { return name == aclAccess || name == aclDefault }

// xattrBufs holds the buffers stored values are read into before they are decrypted. "ls -l"
// asks for two attributes of every file it lists; a fresh 64 KiB buffer per request made the
// garbage collector's work, not the file system's, the cost of a listing.
var xattrBufs = sync.Pool{New: func() any { b := make([]byte, xattrBufMax); return &b }}

// xattrNameCacheMax bounds the cache of stored attribute names. Programs use a handful of
// names ("ls -l" alone asks for security.selinux and system.posix_acl_access on every file;
// encrypting one costs about 1.2 µs and 10 allocations); once full, further names are
// encrypted on every call, so no caller can grow it without end.
const xattrNameCacheMax = 256

// xattrNameCache maps attribute names to their stored names. Attribute names are encrypted
// with a fixed IV, so a stored name never goes stale.
type xattrNameCache struct {
	mu     sync.Mutex
	stored boundedMap[string, string]
}

// storedXattr returns the name an attribute is stored under in the cipherdir.
func (f *fsys) storedXattr(name string) (string, syscall.Errno) {
	if isACL(name) {
		return name, 0
	}
	c := &f.xattrStored
	c.mu.Lock()
	stored, ok := c.stored.get(name)
	c.mu.Unlock()
	if ok {
		return stored, 0
	}
	enc, err := f.xattrNames.EncryptXattrName(name)
	if err != nil {
		return "", syscall.EINVAL
	}
	stored = crypto.XattrPrefix + enc
	c.mu.Lock()
	c.stored.add(name, stored, xattrNameCacheMax)
	c.mu.Unlock()
	return stored, 0
}

// xattrEntry reaches n's cipher entry for the xattr system calls: by the parent's descriptor
// and the entry's name with the *xattrat calls, else by a /proc path through that descriptor
// (the l* calls do not follow a final symlink). The root is reached through its own
// descriptor.
type xattrEntry struct {
	at   bool   // use the *xattrat calls
	fd   int    // the parent directory, or the root itself
	name string // the cipher name in fd; "" for the root
	dir  dirRef
}

func (n *node) xattrEntry() (xattrEntry, syscall.Errno) {
	if n.IsRoot() {
		return xattrEntry{at: n.fsys.xattrAt, fd: n.fsys.rootFd}, 0
	}
	d, stored, errno := n.place()
	if errno != 0 {
		return xattrEntry{}, errno
	}
	return xattrEntry{at: n.fsys.xattrAt, fd: d.fd, name: stored, dir: d}, 0
}

// atFlags are the *xattrat flags for e: the descriptor itself for the root, else the entry
// without following it.
func (e xattrEntry) atFlags() int {
	if e.name == "" {
		return unix.AT_EMPTY_PATH
	}
	return unix.AT_SYMLINK_NOFOLLOW
}

// procPath is e's path for the older l* calls. The root's, "/proc/self/fd/N/", ends in a
// slash, which makes them follow the descriptor's link to the directory itself.
func (e xattrEntry) procPath() string { return "/proc/self/fd/" + strconv.Itoa(e.fd) + "/" + e.name }

func (e xattrEntry) get(name string, buf []byte) (int, error) {
	if e.at {
		return getxattrat(e.fd, e.name, e.atFlags(), name, buf)
	}
	return unix.Lgetxattr(e.procPath(), name, buf)
}

// read reads attribute name into buf (of xattrBufMax bytes), asking first for only guess
// bytes: the kernel allocates as much as it is asked for, and most values are small (most
// lookups find nothing at all). Only a value larger than guess costs a second call.
func (e xattrEntry) read(name string, buf []byte, guess int) ([]byte, error) {
	guess = min(max(guess, 256), len(buf))
	n, err := e.get(name, buf[:guess])
	if err == unix.ERANGE {
		n, err = e.get(name, buf)
	}
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
}

func (e xattrEntry) set(name string, value []byte, flags int) error {
	if e.at {
		return setxattrat(e.fd, e.name, e.atFlags(), name, value, flags)
	}
	return unix.Lsetxattr(e.procPath(), name, value, flags)
}

func (e xattrEntry) remove(name string) error {
	if e.at {
		return removexattrat(e.fd, e.name, e.atFlags(), name)
	}
	return unix.Lremovexattr(e.procPath(), name)
}

func (e xattrEntry) list(buf []byte) (int, error) {
	if e.at {
		return listxattrat(e.fd, e.name, e.atFlags(), buf)
	}
	return unix.Llistxattr(e.procPath(), buf)
}

func (n *node) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	size, errno := n.getxattr(attr, dest)
	return size, n.fsys.op(errno)
}

func (n *node) getxattr(attr string, dest []byte) (uint32, syscall.Errno) {
	f := n.fsys
	if attr == capability {
		return 0, syscall.EOPNOTSUPP
	}
	stored, errno := f.storedXattr(attr)
	if errno != 0 {
		return 0, errno
	}
	e, errno := n.xattrEntry()
	if errno != 0 {
		return 0, errno
	}
	defer e.dir.close()
	bp := xattrBufs.Get().(*[]byte)
	defer xattrBufs.Put(bp)
	value, err := e.read(stored, *bp, len(dest)+f.enc.BlockOverhead())
	if err != nil {
		return 0, fs2errno(err)
	}
	if !isACL(attr) {
		if value, err = f.enc.DecryptXattrValue(value); err != nil {
			f.log.Printf("vfs: %s: attribute %q: %v", n.cipherPath(), stored, err)
			return 0, syscall.EIO
		}
	}
	if len(dest) < len(value) {
		return uint32(len(value)), syscall.ERANGE
	}
	return uint32(copy(dest, value)), 0
}

func (n *node) Setxattr(ctx context.Context, attr string, data []byte, flags uint32) syscall.Errno {
	value := data
	if !isACL(attr) {
		value = n.fsys.enc.EncryptXattrValue(data)
	}
	return n.changeXattr(attr, func(e xattrEntry, stored string) error { return e.set(stored, value, int(flags)) })
}

func (n *node) Removexattr(ctx context.Context, attr string) syscall.Errno {
	return n.changeXattr(attr, xattrEntry.remove)
}

// changeXattr runs change on the stored name of attribute attr of n's cipher entry, as a
// change of the entry's attributes.
func (n *node) changeXattr(attr string, change func(e xattrEntry, stored string) error) syscall.Errno {
	f := n.fsys
	stored, errno := f.storedXattr(attr)
	if errno != 0 {
		return f.op(errno)
	}
	e, errno := n.xattrEntry()
	if errno != 0 {
		return f.op(errno)
	}
	defer e.dir.close()
	return f.op(fs2errno(change(e, stored)))
}

func (n *node) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	f := n.fsys
	e, errno := n.xattrEntry()
	if errno != 0 {
		return 0, f.op(errno)
	}
	defer e.dir.close()
	bp := xattrBufs.Get().(*[]byte)
	defer xattrBufs.Put(bp)
	sz, err := e.list(*bp)
	if err != nil {
		return 0, f.op(fs2errno(err))
	}
	var out bytes.Buffer
	for _, stored := range strings.Split(string((*bp)[:sz]), "\x00") {
		name, ok := f.plainXattrName(stored)
		if !ok {
			if stored != "" && strings.HasPrefix(stored, crypto.XattrPrefix) {
				f.log.Printf("vfs: %s: attribute %q does not decrypt, hidden", n.cipherPath(), stored)
			}
			continue
		}
		out.WriteString(name)
		out.WriteByte(0)
	}
	if len(dest) < out.Len() {
		return uint32(out.Len()), f.op(syscall.ERANGE)
	}
	return uint32(copy(dest, out.Bytes())), f.op(0)
}

// plainXattrName returns the name a stored attribute shows under in the mount; false for
// attributes that are not part of the view (another program's, or damaged).
func (f *fsys) plainXattrName(stored string) (string, bool) {
	if isACL(stored) {
		return stored, true
	}
	c, ok := strings.CutPrefix(stored, crypto.XattrPrefix)
	if !ok {
		return "", false
	}
	name, err := f.xattrNames.DecryptXattrName(c)
	if err != nil || isACL(name) { // gocryptfs once encrypted ACLs; they are not valid so
		return "", false
	}
	return name, true
}
