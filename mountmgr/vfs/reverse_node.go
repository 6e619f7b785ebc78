package vfs

import (
	"context"
	"strings"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/gocryptfs"
	"github.com/vaultui/vaultui/vault/layout"
)

// rkind is what a node of the reverse view stands for.
type rkind int

const (
	kindDir     rkind = iota // a plaintext directory
	kindEntry                // a plaintext file, symlink or special file
	kindVirtual              // a gocryptfs.diriv or .name file: content in memory
	kindConf                 // gocryptfs.conf: the folder's .gocryptfs.reverse.conf
)

// rnode is a node of the reverse view. A node stands for one path: plain is the entry's path
// in the plaintext folder, cipher its path in the view (both "" for the root). If the
// plaintext entry moves, the node answers ENOENT; its new path is a new node.
type rnode struct {
	fs.Inode
	fs            *rfs
	kind          rkind
	plain, cipher string
	content       []byte    // kindVirtual
	attr          fuse.Attr // kindVirtual
}

var (
	_ = (fs.NodeLookuper)((*rnode)(nil))
	_ = (fs.NodeReaddirer)((*rnode)(nil))
	_ = (fs.NodeGetattrer)((*rnode)(nil))
	_ = (fs.NodeOpener)((*rnode)(nil))
	_ = (fs.NodeReader)((*rnode)(nil))
	_ = (fs.NodeReadlinker)((*rnode)(nil))
	_ = (fs.NodeStatfser)((*rnode)(nil))
)

func (n *rnode) op(errno syscall.Errno) syscall.Errno { return n.fs.op(errno) }

// child makes the node for a child at plain/cipher with the given attributes.
func (n *rnode) child(ctx context.Context, c *rnode, out *fuse.EntryOut, a fuse.Attr) *fs.Inode {
	out.Attr = a
	out.SetEntryTimeout(cacheTimeout)
	out.SetAttrTimeout(cacheTimeout)
	return n.NewInode(ctx, c, fs.StableAttr{Mode: a.Mode & syscall.S_IFMT, Ino: a.Ino})
}

// virtual makes the node of a virtual file at cipher holding content, which describes the
// entry of st at plain (the directory of a gocryptfs.diriv, the entry of a .name file).
func (n *rnode) virtual(ctx context.Context, out *fuse.EntryOut, st *unix.Stat_t, plain, cipher string, content []byte) *fs.Inode {
	c := &rnode{fs: n.fs, kind: kindVirtual, plain: plain, cipher: cipher, content: content}
	a := &c.attr
	statAttr(st, a)
	a.Ino = reverseIno(cipher)
	a.Mode = syscall.S_IFREG | 0o444
	a.Nlink = 1
	a.Size = uint64(len(content))
	a.Blocks = (a.Size + 511) / 512
	a.Mtime += virtualTimeShift
	a.Ctime += virtualTimeShift
	return n.child(ctx, c, out, *a)
}

// Lookup finds name in the view of this directory: a virtual file, gocryptfs.conf, or the
// plaintext entry whose encrypted name it is. Excluded entries are not found.
func (n *rnode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	f := n.fs
	cipher := joinPath(n.cipher, name)
	isRoot := n.cipher == "" && n.kind == kindDir
	switch {
	case f.PerDirIV && name == crypto.DirIVName:
		st, err := f.lstat(n.plain)
		if err != nil {
			return nil, n.op(fs.ToErrno(err))
		}
		return n.virtual(ctx, out, &st, n.plain, cipher, f.dirIV(n.cipher)), n.op(0)
	case f.Names != nil && crypto.IsLongNameFile(name):
		plainName, encoded, errno := n.findLong(strings.TrimSuffix(name, crypto.LongNameSuffix))
		if errno != 0 {
			return nil, n.op(errno)
		}
		plain := joinPath(n.plain, plainName)
		st, err := f.lstat(plain)
		if err != nil {
			return nil, n.op(fs.ToErrno(err))
		}
		if !f.visible(plain, st.Mode) {
			return nil, n.op(syscall.ENOENT)
		}
		return n.virtual(ctx, out, &st, plain, cipher, []byte(encoded)), n.op(0)
	case isRoot && name == crypto.ConfName:
		st, err := f.lstat(gocryptfs.ReverseConfName)
		if err != nil {
			return nil, n.op(fs.ToErrno(err))
		}
		if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
			return nil, n.op(syscall.ENOENT)
		}
		var a fuse.Attr
		statAttr(&st, &a)
		a.Ino = reverseIno(cipher)
		c := &rnode{fs: f, kind: kindConf, plain: gocryptfs.ReverseConfName, cipher: cipher}
		return n.child(ctx, c, out, a), n.op(0)
	}
	plainName, errno := n.plainName(name)
	if errno != 0 {
		return nil, n.op(errno)
	}
	if isRoot && plainName == gocryptfs.ReverseConfName {
		return nil, n.op(syscall.ENOENT) // shown as gocryptfs.conf
	}
	plain := joinPath(n.plain, plainName)
	st, err := f.lstat(plain)
	if err != nil {
		return nil, n.op(fs.ToErrno(err))
	}
	if !f.visible(plain, st.Mode) {
		return nil, n.op(syscall.ENOENT)
	}
	var a fuse.Attr
	if err := f.attr(&st, plain, cipher, &a); err != nil {
		return nil, n.op(fs.ToErrno(err))
	}
	kind := kindEntry
	if st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
		kind = kindDir
	}
	return n.child(ctx, &rnode{fs: f, kind: kind, plain: plain, cipher: cipher}, out, a), n.op(0)
}

// plainName is the plaintext name behind the name cName in this directory of the view.
func (n *rnode) plainName(cName string) (string, syscall.Errno) {
	f := n.fs
	if f.Names == nil {
		return cName, 0
	}
	if crypto.IsLongName(cName) {
		plain, _, errno := n.findLong(cName)
		return plain, errno
	}
	iv := f.dirIV(n.cipher)
	plain, err := f.Names.DecryptName(cName, iv)
	if err != nil {
		return "", syscall.ENOENT // not a name of this view (".Trash", a stale name, ...)
	}
	// Only the canonical encoding of a name leads to its entry.
	if stored, _, _, err := f.Names.StoredName(plain, iv); err != nil || stored != cName {
		return "", syscall.ENOENT
	}
	return plain, 0
}

// findLong finds the plaintext entry of this directory whose encrypted name is stored as the
// long name hashed (gocryptfs.longname.<hash>), and returns its name with its encoded name.
func (n *rnode) findLong(hashed string) (plainName, encoded string, errno syscall.Errno) {
	f := n.fs
	names, err := n.plainNames()
	if err != nil {
		return "", "", fs.ToErrno(err)
	}
	iv := f.dirIV(n.cipher)
	for _, p := range names {
		stored, enc, long, err := f.Names.StoredName(p, iv)
		if err == nil && long && stored == hashed {
			return p, enc, 0
		}
	}
	return "", "", syscall.ENOENT
}

// plainNames lists this directory in the plaintext folder.
func (n *rnode) plainNames() ([]string, error) {
	fd, err := n.fs.openDir(n.plain)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	return layout.ReadDirNames(fd)
}

// Readdir lists this directory of the view: the visible plaintext entries under their
// encrypted names, gocryptfs.conf at the root, and the virtual files.
func (n *rnode) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	f := n.fs
	names, err := n.plainNames()
	if err != nil {
		return nil, n.op(fs.ToErrno(err))
	}
	isRoot := n.cipher == ""
	var entries, virtual []fuse.DirEntry
	if f.PerDirIV {
		c := joinPath(n.cipher, crypto.DirIVName)
		virtual = append(virtual, fuse.DirEntry{Name: crypto.DirIVName, Mode: syscall.S_IFREG, Ino: reverseIno(c)})
	}
	iv := f.dirIV(n.cipher)
	for _, p := range names {
		plain := joinPath(n.plain, p)
		st, err := f.lstat(plain)
		if err != nil {
			continue // gone meanwhile
		}
		mode := st.Mode & syscall.S_IFMT
		if isRoot && p == gocryptfs.ReverseConfName {
			entries = append(entries, fuse.DirEntry{Name: crypto.ConfName, Mode: mode, Ino: reverseIno(crypto.ConfName)})
			continue
		}
		if isRoot && f.Names == nil && p == crypto.ConfName {
			// With plaintext names a real gocryptfs.conf is shadowed by the config.
			f.log.Printf("vfs: reverse view of %s: its own gocryptfs.conf is hidden behind %s", f.Dir, gocryptfs.ReverseConfName)
			continue
		}
		if !f.visible(plain, st.Mode) {
			continue
		}
		name := p
		if f.Names != nil {
			stored, _, long, err := f.Names.StoredName(p, iv)
			if err != nil {
				f.log.Printf("vfs: reverse view of %s: inode %d: name cannot be encrypted: %v", f.Dir, st.Ino, err)
				continue
			}
			name = stored
			if long {
				c := joinPath(n.cipher, stored+crypto.LongNameSuffix)
				virtual = append(virtual, fuse.DirEntry{Name: stored + crypto.LongNameSuffix, Mode: syscall.S_IFREG, Ino: reverseIno(c)})
			}
		}
		entries = append(entries, fuse.DirEntry{Name: name, Mode: mode, Ino: reverseIno(joinPath(n.cipher, name))})
	}
	return fs.NewListDirStream(append(entries, virtual...)), n.op(0)
}

// Getattr stats the plaintext entry again (or returns a virtual file's attributes).
func (n *rnode) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if n.kind == kindVirtual {
		out.Attr = n.attr
		return n.op(0)
	}
	st, err := n.fs.lstat(n.plain)
	if err != nil {
		return n.op(fs.ToErrno(err))
	}
	if n.kind == kindConf {
		statAttr(&st, &out.Attr)
		out.Ino = reverseIno(n.cipher)
		return n.op(0)
	}
	if err := n.fs.attr(&st, n.plain, n.cipher, &out.Attr); err != nil {
		return n.op(fs.ToErrno(err))
	}
	out.SetTimeout(cacheTimeout)
	return n.op(0)
}

// Readlink returns the encrypted target of a symlink.
func (n *rnode) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	t, err := n.fs.readlink(n.plain, n.cipher)
	return t, n.op(fs.ToErrno(err))
}

// Open opens a file of the view for reading; writes are refused (the mount is read-only).
func (n *rnode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if flags&(syscall.O_WRONLY|syscall.O_RDWR|syscall.O_TRUNC|syscall.O_APPEND) != 0 {
		return nil, 0, n.op(syscall.EROFS)
	}
	switch n.kind {
	case kindVirtual:
		return nil, fuse.FOPEN_KEEP_CACHE, n.op(0)
	case kindDir:
		return nil, 0, n.op(syscall.EISDIR)
	}
	fd, name, err := n.fs.openParent(n.plain)
	if err != nil {
		return nil, 0, n.op(fs.ToErrno(err))
	}
	defer unix.Close(fd)
	// The plaintext directory's file: no FIFO or device behind a name the kernel took for a
	// regular file is opened (it could hang the daemon) or read.
	ffd, err := layout.OpenFile(fd, name, unix.O_RDONLY, 0, nil)
	if layout.IsNotRegular(err) {
		return nil, 0, n.op(syscall.EACCES)
	}
	if err != nil {
		return nil, 0, n.op(fs.ToErrno(err))
	}
	if n.kind == kindConf {
		return rconf{&rfile{fs: n.fs, fd: ffd}}, 0, n.op(0)
	}
	return newRFile(n.fs, ffd, n.cipher), 0, n.op(0)
}

// Read serves a virtual file from memory.
func (n *rnode) Read(ctx context.Context, fh fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if r, ok := fh.(fs.FileReader); ok {
		return r.Read(ctx, dest, off)
	}
	if n.kind != kindVirtual {
		return nil, n.op(syscall.EBADF)
	}
	if off >= int64(len(n.content)) {
		return fuse.ReadResultData(nil), n.op(0)
	}
	end := min(int(off)+len(dest), len(n.content))
	n.fs.stats.BytesRead.Add(uint64(end - int(off)))
	return fuse.ReadResultData(n.content[off:end]), n.op(0)
}

// Statfs reports the plaintext folder's file system.
func (n *rnode) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	return n.op(statfs(n.fs.rootFd, out))
}
