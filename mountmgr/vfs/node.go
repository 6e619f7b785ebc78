package vfs

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/vault/layout"
)

// node is a file, directory or symlink of the plaintext view. go-fuse keeps one node per
// inode number and generation (identity.go), so hard links share a node and with it the
// content lock, and a new file that got a deleted file's inode number gets a node of its own.
//
// A mount holds a node for every entry the kernel knows, most of them only ever looked up
// or listed; so a node is go-fuse's inode plus two pointers, and what a directory or an
// open file needs lives in a nodeExt made on first use.
type node struct {
	fs.Inode
	fsys *fsys
	x    atomic.Pointer[nodeExt]
}

// nodeExt is the state of a node that is used as a directory or has its contents read or
// written.
type nodeExt struct {
	// dirKey caches a directory's key (directories only; see node.key).
	dirKey atomic.Pointer[dirKey]
	// conflicts maps the names sync tools' conflict copies show under (layout.ConflictName)
	// to their entries; they cannot be computed from the name, so they are kept until the
	// copy is renamed or removed (there are few). An entry with no stored name marks what an
	// entry made under another IV decrypts to by chance (gocryptfsTree.listed): no name of
	// it, nor of anything. namesMu guards it.
	namesMu   sync.Mutex
	conflicts map[string]storedEntry

	// mu serialises writers and truncation of a file against each other and against readers.
	mu sync.RWMutex
	// key caches the file's key from its header; nil means "read it from the file". It is
	// only kept while files is not empty (see newFile).
	key atomic.Pointer[cachedKey]
	// files are the handles open on the node's cipher file, and those of truncations by name.
	filesMu sync.Mutex
	files   []*file
	// dirHandles are a directory's open handles (filesMu guards them too).
	dirHandles []*dirHandle
	// birth is the cipher file's birth time (entryID.gen), kept only with shared storage,
	// where the node's generation is a counter instead (identity.go).
	birth uint64
	// wd is a directory's watch ID (watch.go): 0 none yet, -1 none possible; ewd the
	// watch of the node's entry folder (tree.entryFolder), likewise.
	wd, ewd atomic.Int32
	// childRead: a file in this directory had pages read since the kernel last listed the
	// directory from the mount, and the kernel was told to drop its listing (file.noteRead).
	childRead atomic.Bool
}

// ext returns n's nodeExt, making it on first use.
func (n *node) ext() *nodeExt {
	if x := n.x.Load(); x != nil {
		return x
	}
	n.x.CompareAndSwap(nil, new(nodeExt))
	return n.x.Load()
}

var (
	_ = (fs.NodeLookuper)((*node)(nil))
	_ = (fs.NodeGetattrer)((*node)(nil))
	_ = (fs.NodeSetattrer)((*node)(nil))
	_ = (fs.NodeMkdirer)((*node)(nil))
	_ = (fs.NodeCreater)((*node)(nil))
	_ = (fs.NodeOpener)((*node)(nil))
	_ = (fs.NodeUnlinker)((*node)(nil))
	_ = (fs.NodeRmdirer)((*node)(nil))
	_ = (fs.NodeRenamer)((*node)(nil))
	_ = (fs.NodeSymlinker)((*node)(nil))
	_ = (fs.NodeReadlinker)((*node)(nil))
	_ = (fs.NodeLinker)((*node)(nil))
	_ = (fs.NodeStatfser)((*node)(nil))
	_ = (fs.NodeMknoder)((*node)(nil))
	_ = (fs.NodeOnForgetter)((*node)(nil))
)

// OnForget stops watching a directory, or an entry folder, the kernel forgot.
func (n *node) OnForget() {
	if w := n.fsys.watch; w != nil {
		w.forget(n)
	}
}

// ino is the inode number the mount shows for a cipher entry. Entries on another device than
// the cipherdir's root (a bind mount or btrfs subvolume inside it) get their device folded in,
// so that two files never share one node, its lock and its file-ID cache.
func (f *fsys) ino(st *unix.Stat_t) uint64 {
	if st.Dev == f.rootDev {
		return st.Ino
	}
	// splitmix64 of the device spreads it over all 64 bits; st.Ino stays recoverable per device.
	z := st.Dev + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return st.Ino ^ (z ^ (z >> 31))
}

// plainAttr fills out from the stat of a node's object, translating the size: regular files
// by the block layout, symlinks by decrypting the target (the object name in dirfd; dirfd < 0
// skips it).
func (f *fsys) plainAttr(st *unix.Stat_t, dirfd int, name string, out *fuse.Attr) {
	statAttr(st, out)
	out.Ino = f.ino(st)
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		size, ok := f.geo.PlainSize(st.Size)
		if !ok {
			f.log.Printf("vfs: inode %d: impossible cipher size %d", st.Ino, st.Size)
			size = 0
		}
		out.Size = uint64(size)
	case syscall.S_IFLNK:
		// Reading the link would update its access time, so the target's length comes from
		// the stored length where the encoding allows.
		if n, ok := f.tree.symlinkLen(st.Size); ok {
			out.Size = uint64(n)
		} else if dirfd >= 0 {
			if target, errno := f.readlink(dirfd, name); errno == 0 {
				out.Size = uint64(len(target))
			}
		}
	}
}

// fdAttr answers getattr with the stat of the cipher file or folder open at fd.
func (f *fsys) fdAttr(fd int, out *fuse.AttrOut) syscall.Errno {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fs2errno(err)
	}
	f.plainAttr(&st, -1, "", &out.Attr)
	return 0
}

// statAttr copies a stat into a FUSE attribute as it is; the forward (plainAttr) and the
// reverse view (rfs.attr) then set the inode number and the size they show.
func statAttr(st *unix.Stat_t, out *fuse.Attr) {
	out.Size = uint64(st.Size)
	out.Blocks = uint64(st.Blocks)
	out.Atime, out.Atimensec = uint64(st.Atim.Sec), uint32(st.Atim.Nsec)
	out.Mtime, out.Mtimensec = uint64(st.Mtim.Sec), uint32(st.Mtim.Nsec)
	out.Ctime, out.Ctimensec = uint64(st.Ctim.Sec), uint32(st.Ctim.Nsec)
	out.Mode = st.Mode
	out.Nlink = uint32(st.Nlink)
	out.Uid, out.Gid = st.Uid, st.Gid
	out.Rdev = uint32(st.Rdev)
	out.Blksize = uint32(st.Blksize)
}

// readlink returns the plaintext target of the symlink object name in dirfd.
func (f *fsys) readlink(dirfd int, name string) ([]byte, syscall.Errno) {
	target, err := f.tree.readlink(dirfd, name)
	if errno, ok := err.(syscall.Errno); ok {
		return nil, errno
	}
	if layout.IsNotRegular(err) {
		return nil, f.notRegular(strconv.Quote(name), err)
	}
	if err != nil {
		f.log.Printf("vfs: symlink %q: target does not decrypt: %v", name, err)
		return nil, syscall.EIO
	}
	return target, 0
}

// cipherPath is n's path in the cipherdir, for log messages only: cipher names, never plaintext.
func (n *node) cipherPath() string { return n.cipherPathTo("") }

// cipherPathTo is cipherPath of the entry stored in n (n's own path when stored is "").
func (n *node) cipherPathTo(stored string) string {
	var parts []string
	if stored != "" {
		parts = append(parts, stored)
	}
	for cur := n; !cur.IsRoot(); {
		name, parent := cur.Parent()
		if parent == nil {
			return "inode " + strconv.FormatUint(n.StableAttr().Ino, 10) + " (deleted)"
		}
		pn := parent.Operations().(*node)
		stored, errno := pn.storedName(name)
		if errno != 0 {
			stored = "?"
		}
		parts = append(parts, stored)
		cur = pn
	}
	var b strings.Builder
	for i := len(parts) - 1; i >= 0; i-- {
		b.WriteByte('/')
		b.WriteString(parts[i])
	}
	return strconv.Quote(b.String())
}

// newChild turns a looked-up or created cipher entry (stored in dirfd, plain in the view)
// into an inode. The kernel looks up again what it let expire while go-fuse still holds the
// inode (every entry of "ls -l" after the timeout, READDIRPLUS): that child is reused rather
// than a node allocated for go-fuse to throw away (NewInode would return the same inode).
func (n *node) newChild(ctx context.Context, plain string, e *entryID, dirfd int, stored string, out *fuse.EntryOut) *fs.Inode {
	n.fsys.plainAttr(&e.st, dirfd, stored, &out.Attr)
	if t := n.cacheTimeout(); t != 0 {
		out.SetEntryTimeout(t)
		out.SetAttrTimeout(t)
	}
	if n.fsys.opts.SharedStorage {
		return n.sharedChild(ctx, plain, e, dirfd, stored)
	}
	sa := n.fsys.stableAttr(e)
	ch := n.GetChild(plain)
	if ch == nil || ch.StableAttr() != sa {
		ch = n.NewInode(ctx, &node{fsys: n.fsys}, sa)
	}
	if w := n.fsys.watch; w != nil && dirfd >= 0 && n.fsys.tree.entryFolder(stored, sa.Mode) {
		w.addEntry(n, ch.Operations().(*node), dirfd, stored)
	}
	return ch
}

func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	stored, errno := n.storedName(name)
	if errno == syscall.EPERM {
		errno = syscall.ENOENT // gocryptfs.conf is not part of the view
	}
	if errno != 0 {
		return nil, n.fsys.op(errno)
	}
	d, errno := n.dirFd()
	if errno != 0 {
		return nil, n.fsys.op(errno)
	}
	defer d.close()
	e, key, err := n.fsys.tree.stat(d.fd, stored)
	if err == unix.ENOENT && !n.fsys.plainNames && (strings.Contains(name, " (conflict ") || strings.HasSuffix(name, layout.BadNameSuffix) || n.fsys.tree.respelled(name)) {
		// A conflict copy, a bad name or a name stored in another spelling looked up before
		// its directory was listed (after a remount): list it to learn their names.
		if n.learnConflicts() == 0 {
			if stored, errno = n.storedName(name); errno == 0 {
				e, key, err = n.fsys.tree.stat(d.fd, stored)
			}
		}
	}
	if err != nil {
		return nil, n.fsys.op(fs2errno(err))
	}
	ch := n.newChild(ctx, name, &e, d.fd, stored, out)
	if first, twice := n.reachedTwice(ch, name); twice {
		n.fsys.log.Printf("vfs: %s: a directory reached twice: its folder is already shown as %s (a dir.c9r naming another directory's ID?); refused",
			n.cipherPathTo(stored), first)
		return nil, n.fsys.op(syscall.EIO)
	}
	if key != nil {
		ch.Operations().(*node).setKey(key)
	}
	return ch, n.fsys.op(0)
}

// reachedTwice reports whether the directory ch, just looked up as name in n, is n or one of
// its ancestors, or is in the tree already as another entry that still holds it: one cipher
// folder reached twice. Nothing authenticates a Cryptomator dir.c9r, so one may name another
// directory's ID, an ancestor's among them. Under an ancestor the kernel refuses the name
// (ELOOP), but go-fuse would have linked the node under it all the same: a cycle that every
// walk up the tree (dirFd, cipherPath) follows forever. Shown twice elsewhere, the folder is
// one node with two parents, whose renames and removals step on each other; go-fuse merges
// nodes by identity only after Lookup, so this is seen when the name is looked up again. A
// directory whose other entry no longer holds it was moved behind the mount's back (a sync):
// that is the same directory, and the kernel moves its name. first is the cipher path of
// where it is shown already, for the log.
func (n *node) reachedTwice(ch *fs.Inode, name string) (first string, twice bool) {
	sa := ch.StableAttr()
	if sa.Mode != syscall.S_IFDIR {
		return "", false
	}
	seen := map[*fs.Inode]bool{}
	for cur := n.EmbeddedInode(); cur != nil && !seen[cur]; _, cur = cur.Parent() {
		if cur.StableAttr() == sa {
			return cur.Operations().(*node).cipherPath(), true
		}
		seen[cur] = true
	}
	oname, oparent := ch.Parent()
	if oparent == nil || oparent == n.EmbeddedInode() && oname == name {
		return "", false // new to the tree, or known here already
	}
	on := oparent.Operations().(*node)
	stored, errno := on.storedName(oname)
	if errno != 0 {
		return "", false
	}
	d, errno := on.dirFd()
	if errno != 0 {
		return "", false
	}
	defer d.close()
	e, _, err := n.fsys.tree.stat(d.fd, stored)
	if err != nil || n.fsys.stableAttr(&e) != sa {
		return "", false
	}
	return on.cipherPathTo(stored), true
}

func (n *node) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	return n.fsys.op(statfs(n.fsys.rootFd, out))
}

// statfs answers STATFS, for the forward and the reverse view, with the file system of fd.
func statfs(fd int, out *fuse.StatfsOut) syscall.Errno {
	var st syscall.Statfs_t
	if err := syscall.Fstatfs(fd, &st); err != nil {
		return fs2errno(err)
	}
	out.FromStatfsT(&st)
	return 0
}

// fs2errno converts an error from the host file system to an errno for FUSE.
func fs2errno(err error) syscall.Errno {
	return layout.Errno(err)
}
