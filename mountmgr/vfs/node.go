package vfs

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
)

// node is a file, directory or symlink of the plaintext view. go-fuse keeps one node per
// inode number, so hard links share a node and with it the content lock.
type node struct {
	fs.Inode
	fsys *fsys

	// dirIV caches a directory's IV (directories only).
	dirIV atomic.Pointer[[crypto.DirIVLen]byte]
	// names caches the stored names of a directory's children. A stored name depends only on
	// the plain name and the directory's IV, which never changes, so entries never go stale.
	namesMu sync.Mutex
	names   map[string]storedEntry

	// mu serialises writers and truncation of a file against each other and against readers.
	mu sync.RWMutex
	// fileID caches the file ID from the file header; nil means "read it from the file".
	fileID atomic.Pointer[[crypto.FileIDLen]byte]
}

var (
	_ = (fs.NodeLookuper)((*node)(nil))
	_ = (fs.NodeGetattrer)((*node)(nil))
	_ = (fs.NodeSetattrer)((*node)(nil))
	_ = (fs.NodeReaddirer)((*node)(nil))
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

// plainAttr fills out from the cipher file's stat, translating the size: regular files by the
// block layout, symlinks by decrypting the target (path is the cipher path, for symlinks).
func (f *fsys) plainAttr(st *syscall.Stat_t, path string, out *fuse.Attr) {
	out.FromStat(st)
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		size, err := f.enc.PlainSize(uint64(st.Size))
		if err != nil {
			f.log.Printf("vfs: %s: impossible cipher size %d: %v", path, st.Size, err)
			size = 0
		}
		out.Size = size
		out.Blocks = uint64(st.Blocks)
	case syscall.S_IFLNK:
		if target, errno := f.readlink(path); errno == 0 {
			out.Size = uint64(len(target))
		}
	}
}

func (f *fsys) readlink(path string) ([]byte, syscall.Errno) {
	buf := make([]byte, 4096)
	for {
		n, err := syscall.Readlink(path, buf)
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
		f.log.Printf("vfs: %s: symlink target does not decrypt: %v", path, err)
		return nil, syscall.EIO
	}
	return []byte(target), 0
}

// newChild turns a looked-up or created cipher entry into an inode.
func (n *node) newChild(ctx context.Context, st *syscall.Stat_t, path string, out *fuse.EntryOut) *fs.Inode {
	n.fsys.plainAttr(st, path, &out.Attr)
	child := &node{fsys: n.fsys}
	ch := n.NewInode(ctx, child, fs.StableAttr{Mode: st.Mode & syscall.S_IFMT, Ino: st.Ino})
	// The inode number may have been reused for a different file: forget a cached file ID.
	ch.Operations().(*node).fileID.Store(nil)
	return ch
}

// preserveOwner gives a new entry to the caller when the daemon runs as root, as a local file
// system would.
func (n *node) preserveOwner(ctx context.Context, path string) {
	if !n.fsys.asRoot {
		return
	}
	if caller, ok := fuse.FromContext(ctx); ok && (int(caller.Uid) != os.Geteuid() || int(caller.Gid) != os.Getegid()) {
		unix.Lchown(path, int(caller.Uid), int(caller.Gid))
	}
}

func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	r, errno := n.child(name)
	if errno == syscall.EPERM {
		errno = syscall.ENOENT // gocryptfs.conf is not part of the view
	}
	if errno != 0 {
		return nil, n.fsys.op(errno)
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(r.path(), &st); err != nil {
		return nil, n.fsys.op(fs2errno(err))
	}
	return n.newChild(ctx, &st, r.path(), out), n.fsys.op(0)
}

func (n *node) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if f, ok := fh.(*file); ok && f != nil {
		return n.fsys.op(f.getattr(out))
	}
	p, errno := n.cipherPath()
	if errno != 0 {
		return n.fsys.op(errno)
	}
	var st syscall.Stat_t
	stat := syscall.Lstat
	if n.IsRoot() {
		stat = syscall.Stat // the cipherdir itself may be reached through a symlink
	}
	if err := stat(p, &st); err != nil {
		return n.fsys.op(fs2errno(err))
	}
	n.fsys.plainAttr(&st, p, &out.Attr)
	return n.fsys.op(0)
}

func (n *node) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return n.fsys.op(n.setattr(fh, in, out))
}

func (n *node) setattr(fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	f, _ := fh.(*file)
	p, errno := n.cipherPath()
	if errno != 0 && f == nil {
		return errno
	}
	// A deleted but open file is reached through its descriptor.
	if errno != 0 {
		p = procFdPath(f.fd)
	}
	if m, ok := in.GetMode(); ok {
		if err := syscall.Chmod(p, m); err != nil {
			return fs2errno(err)
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
		if err := unix.Fchownat(unix.AT_FDCWD, p, su, sg, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return fs2errno(err)
		}
	}
	if size, ok := in.GetSize(); ok {
		if errno := n.truncatePath(f, p, size); errno != 0 {
			return errno
		}
	}
	mtime, mok := in.GetMTime()
	atime, aok := in.GetATime()
	if mok || aok {
		ts := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, {Nsec: unix.UTIME_OMIT}}
		var err error
		if aok {
			if ts[0], err = unix.TimeToTimespec(atime); err != nil {
				return fs2errno(err)
			}
		}
		if mok {
			if ts[1], err = unix.TimeToTimespec(mtime); err != nil {
				return fs2errno(err)
			}
		}
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, p, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return fs2errno(err)
		}
	}
	if f != nil {
		return f.getattr(out)
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		return fs2errno(err)
	}
	n.fsys.plainAttr(&st, p, &out.Attr)
	return 0
}

// truncatePath truncates through the open handle if there is one, else through a temporary one.
func (n *node) truncatePath(f *file, p string, size uint64) syscall.Errno {
	if f != nil && f.writable {
		return f.truncate(size)
	}
	fd, err := syscall.Open(p, syscall.O_RDWR|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return fs2errno(err)
	}
	defer syscall.Close(fd)
	tmp := &file{node: n, fd: fd, writable: true, path: p}
	return tmp.truncate(size)
}

func (n *node) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	dir, errno := n.cipherPath()
	if errno != 0 {
		return nil, n.fsys.op(errno)
	}
	stream, errno := fs.NewLoopbackDirStream(dir)
	if errno != 0 {
		return nil, n.fsys.op(errno)
	}
	defer stream.Close()
	var iv []byte
	if n.fsys.names != nil {
		if iv, errno = n.iv(); errno != 0 {
			return nil, n.fsys.op(errno)
		}
	}
	var entries []fuse.DirEntry
	for stream.HasNext() {
		e, errno := stream.Next()
		if errno != 0 {
			return nil, n.fsys.op(errno)
		}
		if e.Name == "." || e.Name == ".." {
			entries = append(entries, e)
			continue
		}
		if n.IsRoot() && e.Name == crypto.ConfName {
			continue
		}
		if n.fsys.names == nil {
			entries = append(entries, e)
			continue
		}
		if e.Name == crypto.DirIVName || crypto.IsLongNameFile(e.Name) {
			continue
		}
		encoded := e.Name
		if crypto.IsLongName(e.Name) {
			if encoded, errno = n.longName(dir, e.Name); errno != 0 {
				continue
			}
		}
		plain, err := n.fsys.names.DecryptName(encoded, iv)
		if err != nil {
			n.fsys.log.Printf("vfs: %s/%s: name does not decrypt, hidden: %v", dir, e.Name, err)
			continue
		}
		// "ls -l" looks every entry up next: remember the stored names.
		n.cacheName(plain, storedEntry{stored: e.Name, encoded: encoded, long: e.Name != encoded})
		e.Name = plain
		entries = append(entries, e)
	}
	return fs.NewListDirStream(entries), n.fsys.op(0)
}

func (n *node) longName(dir, stored string) (string, syscall.Errno) {
	encoded, err := readLongName(dir, stored)
	if err != nil {
		n.fsys.log.Printf("vfs: %s/%s: reading its long name: %v", dir, stored, err)
		return "", syscall.EIO
	}
	return encoded, 0
}

// makeEntry creates the cipher entry for the plaintext name with mk(cipherPath). A long
// name's .name file is written first and removed again when mk fails, so a .name file is
// never left without its entry; mk cleans up after itself.
func (n *node) makeEntry(name string, mk func(p string) error) (string, syscall.Errno) {
	r, errno := n.child(name)
	if errno != 0 {
		return "", errno
	}
	createdName, errno := writeLongName(r)
	if errno != 0 {
		return "", errno
	}
	p := r.path()
	if err := mk(p); err != nil {
		if createdName {
			removeLongName(r)
		}
		return "", fs2errno(err)
	}
	return p, 0
}

// newEntry gives a freshly made entry to the caller and returns its inode.
func (n *node) newEntry(ctx context.Context, p string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	n.preserveOwner(ctx, p)
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		return nil, fs2errno(err)
	}
	return n.newChild(ctx, &st, p, out), 0
}

func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	ch, errno := n.mkdir(ctx, name, mode, out)
	return ch, n.fsys.op(errno)
}

func (n *node) mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	var iv []byte
	p, errno := n.makeEntry(name, func(p string) error {
		// Create it owner-writable so the diriv can go in, then give it its real mode. The
		// kernel holds the parent locked, so nobody looks inside before the diriv is there.
		if err := syscall.Mkdir(p, 0o700); err != nil {
			return err
		}
		var err error
		if n.fsys.dirIVs {
			if iv, err = writeDirIV(p); err != nil {
				n.fsys.log.Printf("vfs: mkdir %s: %v", p, err)
			}
		}
		if err == nil {
			err = syscall.Chmod(p, mode&07777)
		}
		if err != nil {
			os.RemoveAll(p)
		}
		return err
	})
	if errno != 0 {
		return nil, errno
	}
	ch, errno := n.newEntry(ctx, p, out)
	if errno != 0 {
		return nil, errno
	}
	// The inode number may belong to a directory that is gone but not yet forgotten by the
	// kernel: this one has a new IV, so nothing cached for the old one may survive.
	cn := ch.Operations().(*node)
	cn.namesMu.Lock()
	cn.names = nil
	cn.namesMu.Unlock()
	if iv != nil {
		var a [crypto.DirIVLen]byte
		copy(a[:], iv)
		cn.dirIV.Store(&a)
	} else {
		cn.dirIV.Store(nil)
	}
	return ch, 0
}

func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	fd := -1
	p, errno := n.makeEntry(name, func(p string) (err error) {
		fd, err = syscall.Open(p, openFlags(flags, true)|syscall.O_CREAT, mode&07777)
		return err
	})
	if errno != 0 {
		return nil, nil, 0, n.fsys.op(errno)
	}
	n.preserveOwner(ctx, p)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return nil, nil, 0, n.fsys.op(fs2errno(err))
	}
	ch := n.newChild(ctx, &st, p, out)
	cn := ch.Operations().(*node)
	return ch, &file{node: cn, fd: fd, writable: true, path: p}, 0, n.fsys.op(0)
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
	p, errno := n.cipherPath()
	if errno != 0 {
		return nil, 0, n.fsys.op(errno)
	}
	write := flags&syscall.O_ACCMODE != syscall.O_RDONLY
	if flags&syscall.O_TRUNC != 0 {
		n.mu.Lock()
		defer n.mu.Unlock()
	}
	fd, err := syscall.Open(p, openFlags(flags, write), 0)
	if err != nil {
		return nil, 0, n.fsys.op(fs2errno(err))
	}
	if flags&syscall.O_TRUNC != 0 {
		n.fileID.Store(nil) // the cipher file is empty now; the next write makes a header
	}
	// Every change comes through this mount, so the kernel may keep the file's pages across
	// opens (it still drops them when size or mtime change, AUTO_INVAL_DATA).
	return &file{node: n, fd: fd, writable: write, path: p}, fuse.FOPEN_KEEP_CACHE, n.fsys.op(0)
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	r, errno := n.child(name)
	if errno != 0 {
		return n.fsys.op(errno)
	}
	if err := syscall.Unlink(r.path()); err != nil {
		return n.fsys.op(fs2errno(err))
	}
	removeLongName(r)
	return n.fsys.op(0)
}

func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	r, errno := n.child(name)
	if errno != 0 {
		return n.fsys.op(errno)
	}
	return n.fsys.op(n.rmdir(r))
}

func (n *node) rmdir(r childRef) syscall.Errno {
	if errno := n.rmdirIfEmpty(r); errno != 0 {
		return errno
	}
	removeLongName(r)
	return 0
}

// rmdirIfEmpty removes the cipher directory of r if it holds nothing but its diriv; its
// .name file stays.
func (n *node) rmdirIfEmpty(r childRef) syscall.Errno {
	p := r.path()
	d, err := os.Open(p)
	if err != nil {
		return fs2errno(err)
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return fs2errno(err)
	}
	for _, nm := range names {
		if nm != crypto.DirIVName {
			return syscall.ENOTEMPTY
		}
	}
	ivPath := p + "/" + crypto.DirIVName
	iv, ivErr := os.ReadFile(ivPath)
	if ivErr == nil {
		if err := syscall.Unlink(ivPath); err != nil {
			return fs2errno(err)
		}
	}
	if err := syscall.Rmdir(p); err != nil {
		if ivErr == nil { // put the IV back so the directory stays readable
			os.WriteFile(ivPath, iv, 0o440)
		}
		return fs2errno(err)
	}
	return 0
}

func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	np, ok := newParent.(*node)
	if !ok || np.fsys != n.fsys {
		return n.fsys.op(syscall.EXDEV)
	}
	src, errno := n.child(name)
	if errno != 0 {
		return n.fsys.op(errno)
	}
	dst, errno := np.child(newName)
	if errno != 0 {
		return n.fsys.op(errno)
	}
	if src.path() == dst.path() {
		return n.fsys.op(0)
	}
	createdName, errno := writeLongName(dst)
	if errno != 0 {
		return n.fsys.op(errno)
	}
	err := unix.Renameat2(unix.AT_FDCWD, src.path(), unix.AT_FDCWD, dst.path(), uint(flags))
	if (err == syscall.ENOTEMPTY || err == syscall.EEXIST) && flags == 0 {
		// The target directory may be empty but for its gocryptfs.diriv: remove it the way
		// rmdir does (ENOTEMPTY if it really is not empty), then try again.
		if errno := n.rmdirIfEmpty(dst); errno == 0 {
			err = unix.Renameat2(unix.AT_FDCWD, src.path(), unix.AT_FDCWD, dst.path(), 0)
		}
	}
	if err != nil {
		if createdName {
			removeLongName(dst)
		}
		return n.fsys.op(fs2errno(err))
	}
	// With RENAME_EXCHANGE both entries still exist under their names, .name files included.
	if flags&unix.RENAME_EXCHANGE == 0 {
		removeLongName(src)
	}
	return n.fsys.op(0)
}

func (n *node) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	stored := target
	if n.fsys.names != nil {
		stored = n.fsys.enc.EncryptSymlink(target)
	}
	p, errno := n.makeEntry(name, func(p string) error { return syscall.Symlink(stored, p) })
	if errno != 0 {
		return nil, n.fsys.op(errno)
	}
	ch, errno := n.newEntry(ctx, p, out)
	return ch, n.fsys.op(errno)
}

func (n *node) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	p, errno := n.cipherPath()
	if errno != 0 {
		return nil, n.fsys.op(errno)
	}
	target, errno := n.fsys.readlink(p)
	return target, n.fsys.op(errno)
}

func (n *node) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	tn, ok := target.(*node)
	if !ok || tn.fsys != n.fsys {
		return nil, n.fsys.op(syscall.EXDEV)
	}
	old, errno := tn.cipherPath()
	if errno != 0 {
		return nil, n.fsys.op(errno)
	}
	p, errno := n.makeEntry(name, func(p string) error { return syscall.Link(old, p) })
	if errno != 0 {
		return nil, n.fsys.op(errno)
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		return nil, n.fsys.op(fs2errno(err))
	}
	n.fsys.plainAttr(&st, p, &out.Attr)
	// Same inode number: go-fuse hands back the existing inode, file ID cache included.
	return n.NewInode(ctx, &node{fsys: n.fsys}, fs.StableAttr{Mode: st.Mode & syscall.S_IFMT, Ino: st.Ino}), n.fsys.op(0)
}

func (n *node) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	var st syscall.Statfs_t
	if err := syscall.Statfs(n.fsys.dir, &st); err != nil {
		return n.fsys.op(fs2errno(err))
	}
	out.FromStatfsT(&st)
	return n.fsys.op(0)
}

// Mknod creates FIFOs, sockets and (as root) device nodes; only their names are encrypted.
func (n *node) Mknod(ctx context.Context, name string, mode, rdev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	p, errno := n.makeEntry(name, func(p string) error { return syscall.Mknod(p, mode, int(rdev)) })
	if errno != 0 {
		return nil, n.fsys.op(errno)
	}
	ch, errno := n.newEntry(ctx, p, out)
	return ch, n.fsys.op(errno)
}
