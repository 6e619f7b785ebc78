package vfs

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
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
	// dirIV caches a directory's IV (directories only).
	dirIV atomic.Pointer[[crypto.DirIVLen]byte]
	// names caches the stored names of a directory's children. A stored name depends only on
	// the plain name and the directory's IV, which never changes, so entries never go stale.
	namesMu sync.Mutex
	names   boundedMap[storedEntry]
	// conflicts maps the names sync tools' conflict copies show under (layout.ConflictName)
	// to their entries; they cannot be computed from the name, so they are kept until the
	// copy is renamed or removed (there are few).
	conflicts map[string]storedEntry

	// mu serialises writers and truncation of a file against each other and against readers.
	mu sync.RWMutex
	// fileID caches the file ID from the file header; nil means "read it from the file".
	// It is only kept while files is not empty (see newFile).
	fileID atomic.Pointer[[crypto.FileIDLen]byte]
	// files are the handles open on the node's cipher file, and those of truncations by name.
	filesMu sync.Mutex
	files   []*file
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
)

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

// plainAttr fills out from the cipher entry's stat, translating the size: regular files by the
// block layout, symlinks by decrypting the target (name in dirfd; dirfd < 0 skips it).
func (f *fsys) plainAttr(st *unix.Stat_t, dirfd int, name string, out *fuse.Attr) {
	out.Ino = f.ino(st)
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
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		size, err := f.enc.PlainSize(uint64(st.Size))
		if err != nil {
			f.log.Printf("vfs: inode %d: impossible cipher size %d: %v", st.Ino, st.Size, err)
			size = 0
		}
		out.Size = size
	case syscall.S_IFLNK:
		// Reading the link would update its access time, so the target's length comes from
		// the stored length where the encoding allows.
		if f.names == nil {
			break // PlaintextNames: targets are stored as they are
		}
		if n, ok := f.enc.SymlinkTargetLen(int(st.Size)); ok {
			out.Size = uint64(n)
		} else if dirfd >= 0 {
			if target, errno := f.readlink(dirfd, name); errno == 0 {
				out.Size = uint64(len(target))
			}
		}
	}
}

// readlink returns the plaintext target of symlink name in dirfd.
func (f *fsys) readlink(dirfd int, name string) ([]byte, syscall.Errno) {
	buf := make([]byte, 256)
	for {
		n, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			return nil, fs2errno(err)
		}
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	if f.names == nil {
		return buf, 0 // PlaintextNames: targets are stored as they are
	}
	target, err := f.enc.DecryptSymlink(string(buf))
	if err != nil {
		f.log.Printf("vfs: symlink %q: target does not decrypt: %v", name, err)
		return nil, syscall.EIO
	}
	return []byte(target), 0
}

// cipherPath is n's path in the cipherdir, for log messages only: cipher names, never plaintext.
func (n *node) cipherPath() string {
	var parts []string
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
	sa := n.fsys.stableAttr(e)
	ch := n.GetChild(plain)
	if ch == nil || ch.StableAttr() != sa {
		ch = n.NewInode(ctx, &node{fsys: n.fsys}, sa)
	}
	return ch
}

// newFile makes a handle of n from fd, a descriptor of n's cipher file (see openEntry).
//
// The handle's descriptor keeps the cipher inode alive, so while n has a handle its inode
// number names that one file and the file ID cached in n is that file's. Once the last
// handle is gone, the file may be deleted and the number given to a new file (tmpfs and
// ext4 hand it out again at once), which the kernel may reach through the same node: so the
// cache goes with the last handle, and the next handle reads the ID from its own descriptor.
func (n *node) newFile(fd int, writable bool) *file {
	f := &file{node: n, fd: fd, writable: writable}
	x := n.ext()
	x.filesMu.Lock()
	x.files = append(x.files, f)
	x.filesMu.Unlock()
	return f
}

// close ends handle f. The cached file ID is dropped before the descriptor is closed: once
// it is closed, the inode number may name another file.
func (f *file) close() syscall.Errno {
	x := f.node.ext()
	x.filesMu.Lock()
	if i := slices.Index(x.files, f); i >= 0 {
		x.files = slices.Delete(x.files, i, i+1)
	}
	if len(x.files) == 0 {
		x.fileID.Store(nil)
		x.files = nil
	}
	x.filesMu.Unlock()
	return fs2errno(unix.Close(f.fd))
}

// reopen opens n's cipher file again through a handle open on it, for an open that cannot
// reach it by name any more (see openEntry). The kernel found n before the rename or unlink
// that took its name, so the file that was there then is the one to open, as on a local
// file system; without a handle on it, it is gone, and the open fails with ESTALE.
func (n *node) reopen(flags int) (int, syscall.Errno) {
	x := n.ext()
	x.filesMu.Lock()
	defer x.filesMu.Unlock() // the handle's descriptor stays open until the reopen is done
	if len(x.files) == 0 {
		return -1, syscall.ESTALE
	}
	// The /proc link is a symlink by nature: following it is the point.
	fd, err := unix.Open(procFdPath(x.files[0].fd), flags&^unix.O_NOFOLLOW, 0)
	return fd, fs2errno(err)
}

// openEntry opens n's cipher file, stored in dirfd, with flags; it must be n's own file. The
// kernel looks a name up and then opens the node it found; in between, a rename can put
// another file under that name or take n's away (an editor saving by renaming a new file
// over the old one). A handle on another file than its node's would use the node's lock and
// cached file ID for a file they do not belong to: so n's file is reopened through one of
// its handles instead, and without one the open fails with ESTALE; the kernel then looks
// the path up again and retries the open once, and gets the file now under the name.
func (n *node) openEntry(dirfd int, stored string, flags int) (int, syscall.Errno) {
	fd, err := unix.Openat(dirfd, stored, flags, 0)
	if err == unix.ENOENT {
		return n.reopen(flags)
	}
	if err != nil {
		return -1, fs2errno(err)
	}
	e, err := statFd(fd)
	if err != nil {
		unix.Close(fd)
		return -1, fs2errno(err)
	}
	if n.fsys.stableAttr(&e) != n.StableAttr() {
		unix.Close(fd)
		return n.reopen(flags)
	}
	return fd, 0
}

// preserveOwner gives a new entry to the caller when the daemon runs as root, as a local file
// system would.
func (n *node) preserveOwner(ctx context.Context, dirfd int, name string) syscall.Errno {
	if !n.fsys.asRoot {
		return 0
	}
	caller, ok := fuse.FromContext(ctx)
	if !ok || caller.Uid == 0 && caller.Gid == 0 {
		return 0
	}
	return fs2errno(unix.Fchownat(dirfd, name, int(caller.Uid), int(caller.Gid), unix.AT_SYMLINK_NOFOLLOW))
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
	e, err := statAt(d.fd, stored)
	if err == unix.ENOENT && n.fsys.names != nil && (strings.Contains(name, " (conflict ") || strings.HasSuffix(name, layout.BadNameSuffix)) {
		// A conflict copy or a bad name looked up before its directory was listed (after a
		// remount): list it to learn their names.
		if n.learnConflicts() == 0 {
			if stored, errno = n.storedName(name); errno == 0 {
				e, err = statAt(d.fd, stored)
			}
		}
	}
	if err != nil {
		return nil, n.fsys.op(fs2errno(err))
	}
	return n.newChild(ctx, name, &e, d.fd, stored, out), n.fsys.op(0)
}

func (n *node) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if f, ok := fh.(*file); ok && f != nil {
		return n.fsys.op(f.getattr(out))
	}
	return n.fsys.op(n.getattr(out))
}

// getattr stats n's cipher entry through its parent (the root through its own descriptor).
func (n *node) getattr(out *fuse.AttrOut) syscall.Errno {
	var st unix.Stat_t
	if n.IsRoot() {
		if err := unix.Fstat(n.fsys.rootFd, &st); err != nil {
			return fs2errno(err)
		}
		n.fsys.plainAttr(&st, -1, "", &out.Attr)
		return 0
	}
	d, stored, errno := n.parentFd()
	if errno != 0 {
		return errno
	}
	defer d.close()
	if err := unix.Fstatat(d.fd, stored, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fs2errno(err)
	}
	n.fsys.plainAttr(&st, d.fd, stored, &out.Attr)
	return 0
}

func (n *node) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return n.fsys.op(n.setattr(ctx, fh, in, out))
}

// setattr changes mode, owner, size and times, through the open file when there is one (it
// may be deleted), else through the entry's parent directory without following symlinks.
func (n *node) setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	f, _ := fh.(*file)
	var e entry
	switch {
	case f != nil:
		e = entry{fd: f.fd}
	case n.IsRoot():
		e = entry{fd: n.fsys.rootFd}
	default:
		d, stored, errno := n.parentFd()
		if errno != 0 {
			return errno
		}
		defer d.close()
		e = entry{fd: -1, dirfd: d.fd, name: stored}
	}
	if m, ok := in.GetMode(); ok {
		if errno := e.chmod(m & 07777); errno != 0 {
			return errno
		}
	}
	uid, uok := in.GetUID()
	gid, gok := in.GetGID()
	if uok || gok {
		su, sg := -1, -1
		if uok {
			su = int(uid)
		}
		if gok {
			sg = int(gid)
		}
		if errno := e.chown(su, sg); errno != 0 {
			return errno
		}
	}
	if size, ok := in.GetSize(); ok {
		if errno := n.truncateEntry(f, e, size); errno != 0 {
			return errno
		}
		if errno := e.killSuid(ctx); errno != 0 {
			return errno
		}
	}
	mtime, mok := in.GetMTime()
	atime, aok := in.GetATime()
	if mok || aok {
		ts := [2]unix.Timespec{{Nsec: unix.UTIME_OMIT}, {Nsec: unix.UTIME_OMIT}}
		if aok {
			ts[0] = unix.NsecToTimespec(atime.UnixNano())
			if in.Valid&fuse.FATTR_ATIME_NOW != 0 {
				ts[0] = unix.Timespec{Nsec: unix.UTIME_NOW}
			}
		}
		if mok {
			ts[1] = unix.NsecToTimespec(mtime.UnixNano())
			if in.Valid&fuse.FATTR_MTIME_NOW != 0 {
				ts[1] = unix.Timespec{Nsec: unix.UTIME_NOW}
			}
		}
		if errno := e.utimens(&ts); errno != 0 {
			return errno
		}
	}
	if f != nil {
		return f.getattr(out)
	}
	return n.getattr(out)
}

// entry is a cipher entry to change attributes of: an open descriptor (fd >= 0), or name in
// dirfd.
type entry struct {
	fd    int
	dirfd int
	name  string
}

func (e entry) chmod(mode uint32) syscall.Errno {
	if e.fd >= 0 {
		return fs2errno(unix.Fchmod(e.fd, mode))
	}
	// fchmodat2 (Linux 6.6) changes the entry itself, refusing a symlink with EOPNOTSUPP as
	// every Linux file system does. It is what "tar x" costs per file: tar sets the mode by
	// name after closing the file.
	err := unix.Fchmodat(e.dirfd, e.name, mode, unix.AT_SYMLINK_NOFOLLOW)
	if err != unix.EOPNOTSUPP {
		return fs2errno(err)
	}
	// A symlink, or a kernel without fchmodat2 (x/sys answers EOPNOTSUPP for both). fchmodat
	// follows symlinks, so pin the entry with an O_PATH descriptor that does not, and change
	// the mode of what that descriptor holds through its /proc link.
	fd, err := unix.Openat(e.dirfd, e.name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fs2errno(err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fs2errno(err)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return syscall.EOPNOTSUPP // a symlink's mode cannot change on Linux
	}
	return fs2errno(unix.Chmod(procFdPath(fd), mode))
}

func (e entry) chown(uid, gid int) syscall.Errno {
	if e.fd >= 0 {
		return fs2errno(unix.Fchown(e.fd, uid, gid))
	}
	return fs2errno(unix.Fchownat(e.dirfd, e.name, uid, gid, unix.AT_SYMLINK_NOFOLLOW))
}

func (e entry) utimens(ts *[2]unix.Timespec) syscall.Errno {
	if e.fd >= 0 {
		// utimensat(fd, NULL, ...) is futimens: it changes the open file itself.
		_, _, errno := unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(e.fd), 0, uintptr(unsafe.Pointer(ts)), 0, 0, 0)
		return errno
	}
	return fs2errno(unix.UtimesNanoAt(e.dirfd, e.name, ts[:], unix.AT_SYMLINK_NOFOLLOW))
}

// truncateEntry truncates through the open handle if it can write, else through a temporary
// descriptor.
func (n *node) truncateEntry(f *file, e entry, size uint64) syscall.Errno {
	if f != nil && f.writable {
		return f.truncate(size)
	}
	var fd int
	var errno syscall.Errno
	if e.fd >= 0 {
		var err error
		fd, err = unix.Open(procFdPath(e.fd), unix.O_RDWR|unix.O_CLOEXEC, 0)
		errno = fs2errno(err)
	} else {
		fd, errno = n.openEntry(e.dirfd, e.name, unix.O_RDWR|unix.O_CLOEXEC|unix.O_NOFOLLOW)
	}
	if errno != 0 {
		return errno
	}
	tmp := n.newFile(fd, true)
	defer tmp.close()
	return tmp.truncate(size)
}

// forgetConflict drops a conflict copy that was renamed or removed.
func (n *node) forgetConflict(plain string) {
	x := n.ext()
	x.namesMu.Lock()
	delete(x.conflicts, plain)
	x.namesMu.Unlock()
}

// makeEntry creates the cipher entry for the plaintext name with mk(dirfd, stored). A long
// name's .name file is written first and removed again when mk fails, so a .name file is
// never left without its entry; mk cleans up after itself. The caller closes the returned
// directory reference.
func (n *node) makeEntry(name string, mk func(dirfd int, stored string) error) (dirRef, string, syscall.Errno) {
	e, errno := n.storedEntry(name)
	if errno != 0 {
		return dirRef{}, "", errno
	}
	d, errno := n.dirFd()
	if errno != 0 {
		return dirRef{}, "", errno
	}
	createdName, errno := writeLongName(d.fd, e)
	if errno != 0 {
		d.close()
		return dirRef{}, "", errno
	}
	if err := mk(d.fd, e.stored); err != nil {
		if createdName {
			removeLongName(d.fd, e)
		}
		d.close()
		return dirRef{}, "", fs2errno(err)
	}
	return d, e.stored, 0
}

// newEntry gives a freshly made entry (stored in dirfd) to the caller and returns its inode.
func (n *node) newEntry(ctx context.Context, name string, dirfd int, stored string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if errno := n.preserveOwner(ctx, dirfd, stored); errno != 0 {
		return nil, errno
	}
	e, err := statAt(dirfd, stored)
	if err != nil {
		return nil, fs2errno(err)
	}
	return n.newChild(ctx, name, &e, dirfd, stored, out), 0
}

func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	ch, errno := n.mkdir(ctx, name, mode, out)
	return ch, n.fsys.op(errno)
}

func (n *node) mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	var iv []byte
	d, stored, errno := n.makeEntry(name, func(dirfd int, stored string) (err error) {
		// Built out of sight and renamed into place, so that a crash never leaves it without
		// its diriv. The kernel holds the parent locked, so nobody creates the name meanwhile.
		iv, err = layout.MakeDir(dirfd, stored, mode&07777, n.fsys.perDirIV)
		if err != nil && n.fsys.perDirIV {
			n.fsys.log.Printf("vfs: mkdir in directory inode %d: %v", n.StableAttr().Ino, err)
		}
		return err
	})
	if errno != 0 {
		return nil, errno
	}
	defer d.close()
	ch, errno := n.newEntry(ctx, name, d.fd, stored, out)
	if errno != 0 {
		return nil, errno
	}
	// Where the node is known by its inode number alone (identity.go), it may be that of a
	// directory that is gone but not yet forgotten by the kernel: this one has a new IV, so
	// nothing cached for the old one may survive.
	cn := ch.Operations().(*node)
	cn.forgetNames()
	cn.setIV(iv)
	n.fsys.dirs.drop(cn)
	return ch, 0
}

func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	fd := -1
	d, stored, errno := n.makeEntry(name, func(dirfd int, stored string) (err error) {
		fd, err = unix.Openat(dirfd, stored, openFlags(flags, true)|unix.O_CREAT, mode&07777)
		if err == nil && mode&n.fsys.umask != 0 {
			if err = unix.Fchmod(fd, mode&07777); err != nil {
				unix.Close(fd)
				unix.Unlinkat(dirfd, stored, 0)
			}
		}
		return err
	})
	if errno != 0 {
		return nil, nil, 0, n.fsys.op(errno)
	}
	defer d.close()
	if errno := n.preserveOwner(ctx, d.fd, stored); errno != 0 {
		unix.Close(fd)
		return nil, nil, 0, n.fsys.op(errno)
	}
	e, err := statFd(fd)
	if err != nil {
		unix.Close(fd)
		return nil, nil, 0, n.fsys.op(fs2errno(err))
	}
	ch := n.newChild(ctx, name, &e, -1, "", out)
	return ch, ch.Operations().(*node).newFile(fd, true), 0, n.fsys.op(0)
}

// openFlags turns the kernel's open flags into the flags for the cipher file: always readable
// (partial block writes read the block first), never O_APPEND (pwrite with O_APPEND ignores
// the offset on Linux; the kernel passes the right offsets).
func openFlags(flags uint32, write bool) int {
	fl := int(flags) &^ (syscall.O_ACCMODE | syscall.O_APPEND | syscall.O_CREAT | syscall.O_EXCL | syscall.O_DIRECT)
	if write {
		fl |= syscall.O_RDWR
	} else {
		fl |= syscall.O_RDONLY
	}
	if flags&syscall.O_EXCL != 0 {
		fl |= syscall.O_EXCL
	}
	return fl | syscall.O_CLOEXEC | syscall.O_NOFOLLOW
}

func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	// O_TRUNC needs write permission whatever the access mode, as writing does.
	trunc := flags&syscall.O_TRUNC != 0
	write := flags&syscall.O_ACCMODE != syscall.O_RDONLY || trunc
	// Truncation waits until the file is known to be n's (openEntry), and then takes n's lock.
	oflags := openFlags(flags&^syscall.O_TRUNC, write)
	var fd int
	d, stored, errno := n.parentFd()
	switch errno {
	case 0:
		fd, errno = n.openEntry(d.fd, stored, oflags)
		d.close()
	case syscall.ENOENT: // n was renamed over or deleted since the kernel looked it up
		fd, errno = n.reopen(oflags)
	}
	if errno != 0 {
		return nil, 0, n.fsys.op(errno)
	}
	f := n.newFile(fd, write)
	if trunc {
		// The kernel sends O_TRUNC with OPEN instead of a SETATTR (CAP_ATOMIC_O_TRUNC), and
		// with it the duty to drop setuid/setgid as truncate(2) would.
		errno := f.truncateToZero()
		if errno == 0 {
			errno = (entry{fd: fd}).killSuid(ctx)
		}
		if errno != 0 {
			f.close()
			return nil, 0, n.fsys.op(errno)
		}
	}
	// Every change comes through this mount, so the kernel may keep the file's pages across
	// opens (it still drops them when size or mtime change, AUTO_INVAL_DATA), as long as the
	// node cannot have stood for another file before: not where it is known by its inode
	// number alone (see identity.go).
	var keep uint32
	if n.StableAttr().Gen != 0 {
		keep = fuse.FOPEN_KEEP_CACHE
	}
	return f, keep, n.fsys.op(0)
}

// truncateToZero empties the cipher file for a truncating open; the next write makes a new
// header. Unlike truncate, it changes the times even when the file is empty already, as
// O_TRUNC does.
func (f *file) truncateToZero() syscall.Errno {
	x := f.node.ext()
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := unix.Ftruncate(f.fd, 0); err != nil {
		return fs2errno(err)
	}
	x.fileID.Store(nil)
	return 0
}

// unprivileged reports whether the caller lacks CAP_FSETID, as far as a FUSE server can tell:
// anyone but root. Its writes drop setuid and setgid, as on a local file system; the mount
// has HANDLE_KILLPRIV_V2, so the kernel leaves that to us.
func unprivileged(ctx context.Context) bool {
	caller, ok := fuse.FromContext(ctx)
	return ok && caller.Uid != 0
}

// suidBits returns the bits a write by an unprivileged caller drops from mode: setuid, and
// setgid on a group-executable file (without group execute it marks mandatory locking).
func suidBits(mode uint32) uint32 {
	kill := mode & unix.S_ISUID
	if mode&(unix.S_ISGID|unix.S_IXGRP) == unix.S_ISGID|unix.S_IXGRP {
		kill |= unix.S_ISGID
	}
	return kill
}

// killSuid drops setuid/setgid from the entry when an unprivileged caller changed its
// contents (O_TRUNC, truncate).
func (e entry) killSuid(ctx context.Context) syscall.Errno {
	if !unprivileged(ctx) {
		return 0
	}
	var st unix.Stat_t
	var err error
	if e.fd >= 0 {
		err = unix.Fstat(e.fd, &st)
	} else {
		err = unix.Fstatat(e.dirfd, e.name, &st, unix.AT_SYMLINK_NOFOLLOW)
	}
	if err != nil {
		return fs2errno(err)
	}
	if kill := suidBits(st.Mode); kill != 0 {
		return e.chmod(st.Mode & 07777 &^ kill)
	}
	return 0
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	e, errno := n.storedEntry(name)
	if errno != 0 {
		return n.fsys.op(errno)
	}
	d, errno := n.dirFd()
	if errno != 0 {
		return n.fsys.op(errno)
	}
	defer d.close()
	if err := unix.Unlinkat(d.fd, e.stored, 0); err != nil {
		return n.fsys.op(fs2errno(err))
	}
	removeLongName(d.fd, e)
	n.forgetConflict(name)
	return n.fsys.op(0)
}

func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	e, errno := n.storedEntry(name)
	if errno != 0 {
		return n.fsys.op(errno)
	}
	d, errno := n.dirFd()
	if errno != 0 {
		return n.fsys.op(errno)
	}
	defer d.close()
	if errno := n.rmdirIfEmpty(d.fd, e.stored, name); errno != 0 {
		return n.fsys.op(errno)
	}
	removeLongName(d.fd, e)
	n.forgetConflict(name)
	return n.fsys.op(0)
}

// rmdirIfEmpty removes the cipher directory stored in dirfd if it holds nothing but its diriv
// (its .name file stays; layout.RemoveDir says what a crash leaves); plain is its plaintext
// name, to forget its cached descriptor.
func (n *node) rmdirIfEmpty(dirfd int, stored, plain string) syscall.Errno {
	cfd, err := layout.OpenDir(dirfd, stored)
	if err == unix.EACCES {
		// Not readable (mode 0, say): an empty one may still be removed, as on a local file
		// system. Make it readable to look inside; it goes away or gets its mode back.
		e := entry{fd: -1, dirfd: dirfd, name: stored}
		var st unix.Stat_t
		if unix.Fstatat(dirfd, stored, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && e.chmod(0o700) == 0 {
			defer e.chmod(st.Mode & 07777)
			cfd, err = layout.OpenDir(dirfd, stored)
		}
	}
	if err != nil {
		return fs2errno(err)
	}
	defer unix.Close(cfd)
	names, err := layout.ReadDirNames(cfd)
	if err != nil {
		return fs2errno(err)
	}
	if err := layout.RemoveDir(dirfd, cfd, stored, names, n.fsys.perDirIV); err != nil {
		return fs2errno(err)
	}
	if ch := n.GetChild(plain); ch != nil {
		n.fsys.dirs.drop(ch.Operations().(*node))
	}
	return 0
}

func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	np, ok := newParent.(*node)
	if !ok || np.fsys != n.fsys {
		return n.fsys.op(syscall.EXDEV)
	}
	return n.fsys.op(n.rename(name, np, newName, flags))
}

func (n *node) rename(name string, np *node, newName string, flags uint32) syscall.Errno {
	src, errno := n.storedEntry(name)
	if errno != 0 {
		return errno
	}
	dst, errno := np.storedEntry(newName)
	if errno != 0 {
		return errno
	}
	if n == np && src.stored == dst.stored {
		return 0
	}
	sd, errno := n.dirFd()
	if errno != 0 {
		return errno
	}
	defer sd.close()
	dd, errno := np.dirFd()
	if errno != 0 {
		return errno
	}
	defer dd.close()
	createdName, errno := writeLongName(dd.fd, dst)
	if errno != 0 {
		return errno
	}
	err := unix.Renameat2(sd.fd, src.stored, dd.fd, dst.stored, uint(flags))
	if (err == unix.ENOTEMPTY || err == unix.EEXIST) && flags == 0 {
		// The target directory may be empty but for its gocryptfs.diriv: remove it the way
		// rmdir does (ENOTEMPTY if it really is not empty), then try again.
		if errno := np.rmdirIfEmpty(dd.fd, dst.stored, newName); errno == 0 {
			err = unix.Renameat2(sd.fd, src.stored, dd.fd, dst.stored, 0)
		}
	}
	if err != nil {
		if createdName {
			removeLongName(dd.fd, dst)
		}
		return fs2errno(err)
	}
	// With RENAME_EXCHANGE both entries still exist under their names, .name files included.
	if flags&unix.RENAME_EXCHANGE == 0 {
		removeLongName(sd.fd, src)
		n.forgetConflict(name)
		np.forgetConflict(newName) // a copy replaced by the rename
	}
	return 0
}

func (n *node) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	stored := target
	if n.fsys.names != nil {
		stored = n.fsys.enc.EncryptSymlink(target)
	}
	d, cname, errno := n.makeEntry(name, func(dirfd int, cname string) error { return unix.Symlinkat(stored, dirfd, cname) })
	if errno != 0 {
		return nil, n.fsys.op(errno)
	}
	defer d.close()
	ch, errno := n.newEntry(ctx, name, d.fd, cname, out)
	return ch, n.fsys.op(errno)
}

func (n *node) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	d, stored, errno := n.parentFd()
	if errno != 0 {
		return nil, n.fsys.op(errno)
	}
	defer d.close()
	target, errno := n.fsys.readlink(d.fd, stored)
	return target, n.fsys.op(errno)
}

func (n *node) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	tn, ok := target.(*node)
	if !ok || tn.fsys != n.fsys {
		return nil, n.fsys.op(syscall.EXDEV)
	}
	od, ostored, errno := tn.parentFd()
	if errno != 0 {
		return nil, n.fsys.op(errno)
	}
	defer od.close()
	d, stored, errno := n.makeEntry(name, func(dirfd int, stored string) error {
		return unix.Linkat(od.fd, ostored, dirfd, stored, 0)
	})
	if errno != 0 {
		return nil, n.fsys.op(errno)
	}
	defer d.close()
	e, err := statAt(d.fd, stored)
	if err != nil {
		return nil, n.fsys.op(fs2errno(err))
	}
	// The same file: go-fuse hands back the target's node, lock and file ID cache included.
	return n.newChild(ctx, name, &e, d.fd, stored, out), n.fsys.op(0)
}

func (n *node) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	var st syscall.Statfs_t
	if err := syscall.Fstatfs(n.fsys.rootFd, &st); err != nil {
		return n.fsys.op(fs2errno(err))
	}
	out.FromStatfsT(&st)
	return n.fsys.op(0)
}

// Mknod creates FIFOs, sockets and (as root) device nodes; only their names are encrypted.
func (n *node) Mknod(ctx context.Context, name string, mode, rdev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	d, stored, errno := n.makeEntry(name, func(dirfd int, stored string) error {
		if err := unix.Mknodat(dirfd, stored, mode, int(rdev)); err != nil {
			return err
		}
		if mode&n.fsys.umask != 0 {
			if errno := (entry{fd: -1, dirfd: dirfd, name: stored}).chmod(mode & 07777); errno != 0 {
				unix.Unlinkat(dirfd, stored, 0)
				return errno
			}
		}
		return nil
	})
	if errno != 0 {
		return nil, n.fsys.op(errno)
	}
	defer d.close()
	ch, errno := n.newEntry(ctx, name, d.fd, stored, out)
	return ch, n.fsys.op(errno)
}

// fs2errno converts an error from the host file system to an errno for FUSE.
func fs2errno(err error) syscall.Errno {
	return layout.Errno(err)
}
