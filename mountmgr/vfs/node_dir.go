package vfs

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// Directory operations on a node: making, removing, renaming and linking entries.

// preserveOwner gives a new entry (stored in dirfd) to the caller when the daemon runs as
// root, as a local file system would: in a setgid directory the entry keeps the group it
// took from it.
func (n *node) preserveOwner(ctx context.Context, dirfd int, name string) syscall.Errno {
	if !n.fsys.asRoot {
		return 0
	}
	caller, ok := fuse.FromContext(ctx)
	if !ok || caller.Uid == 0 && caller.Gid == 0 {
		return 0
	}
	gid := int(caller.Gid)
	var st unix.Stat_t
	if err := unix.Fstat(dirfd, &st); err != nil {
		return fs2errno(err)
	}
	if st.Mode&unix.S_ISGID != 0 {
		gid = -1
	}
	return fs2errno(n.fsys.tree.chown(dirfd, name, int(caller.Uid), gid))
}

// forgetConflict drops a conflict copy that was renamed or removed.
func (n *node) forgetConflict(plain string) {
	x := n.ext()
	x.namesMu.Lock()
	delete(x.conflicts, plain)
	x.namesMu.Unlock()
}

// makeEntry creates the entry for the plaintext name with mk(dirfd, e) (a tree method). The
// caller closes the returned directory reference.
func (n *node) makeEntry(name string, mk func(dirfd int, e storedEntry) error) (dirRef, string, syscall.Errno) {
	e, errno := n.storedEntry(name)
	if errno != 0 {
		return dirRef{}, "", errno
	}
	d, errno := n.dirFd()
	if errno != 0 {
		return dirRef{}, "", errno
	}
	if err := mk(d.fd, e); err != nil {
		d.close()
		return dirRef{}, "", fs2errno(err)
	}
	if iv, errno := n.key(); errno == 0 && !n.fsys.plainNames {
		// The requests that follow ask for the new name (a file's attributes, set by name),
		// so it is cached even when the cache is full, where a lookup's miss is not.
		n.cacheName(iv, name, e)
	}
	return d, e.stored, 0
}

// newEntry makes the entry name with mk (makeEntry), gives it to the caller and returns its
// inode.
func (n *node) newEntry(ctx context.Context, name string, out *fuse.EntryOut, mk func(dirfd int, e storedEntry) error) (*fs.Inode, syscall.Errno) {
	d, stored, errno := n.makeEntry(name, mk)
	if errno != 0 {
		return nil, errno
	}
	defer d.close()
	if errno := n.preserveOwner(ctx, d.fd, stored); errno != 0 {
		return nil, errno
	}
	e, key, err := n.fsys.tree.stat(d.fd, stored)
	if err != nil {
		return nil, fs2errno(err)
	}
	ch := n.newChild(ctx, name, &e, d.fd, stored, out)
	if key != nil {
		ch.Operations().(*node).setKey(key)
	}
	return ch, 0
}

func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	ch, errno := n.mkdir(ctx, name, mode, out)
	return ch, n.fsys.op(errno)
}

func (n *node) mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	var key []byte
	ch, errno := n.newEntry(ctx, name, out, func(dirfd int, e storedEntry) (err error) {
		key, err = n.fsys.tree.mkdir(dirfd, e, mode&07777)
		if err != nil {
			n.fsys.log.Printf("vfs: mkdir in directory inode %d: %v", n.StableAttr().Ino, err)
		}
		return err
	})
	if errno != 0 {
		return nil, errno
	}
	// Where the node is known by its inode number alone (identity.go), it may be that of a
	// directory that is gone but not yet forgotten by the kernel: this one has a new key, so
	// nothing cached for the old one may survive.
	cn := ch.Operations().(*node)
	cn.forgetNames()
	cn.setKey(key)
	n.fsys.dirs.drop(cn)
	return ch, 0
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	return n.fsys.op(n.remove(name, n.fsys.tree.unlink))
}

func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	return n.fsys.op(n.remove(name, n.fsys.tree.rmdir))
}

// remove removes the entry name with rm (a tree method).
func (n *node) remove(name string, rm func(dirfd int, e storedEntry) error) syscall.Errno {
	e, errno := n.storedEntry(name)
	if errno != 0 {
		return errno
	}
	d, errno := n.dirFd()
	if errno != 0 {
		return errno
	}
	defer d.close()
	if err := rm(d.fd, e); err != nil {
		return fs2errno(err)
	}
	n.forgetChildDir(name)
	n.forgetConflict(name)
	return 0
}

// forgetChildDir forgets the cached descriptor of child name, a directory just removed or
// replaced.
func (n *node) forgetChildDir(name string) {
	if ch := n.GetChild(name); ch != nil && ch.StableAttr().Mode == syscall.S_IFDIR {
		n.fsys.dirs.drop(ch.Operations().(*node))
	}
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
	if flags&unix.RENAME_EXCHANGE == 0 {
		np.forgetChildDir(newName) // a directory the rename may replace
	}
	moving, replaced := n.GetChild(name), np.GetChild(newName)
	if err := n.fsys.tree.rename(sd.fd, src, dd.fd, dst, flags); err != nil {
		return fs2errno(err)
	}
	if w := n.fsys.watch; w != nil {
		w.moved(moving, np, dd.fd, dst.stored)
		if flags&unix.RENAME_EXCHANGE != 0 {
			w.moved(replaced, n, sd.fd, src.stored)
		}
	}
	if flags&unix.RENAME_EXCHANGE == 0 {
		n.forgetConflict(name)
		np.forgetConflict(newName) // a copy replaced by the rename
	}
	return 0
}

func (n *node) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	ch, errno := n.newEntry(ctx, name, out, func(dirfd int, e storedEntry) error { return n.fsys.tree.symlink(dirfd, e, target) })
	return ch, n.fsys.op(errno)
}

func (n *node) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	d, stored, errno := n.place()
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
	t := n.fsys.tree
	if !t.hardLinks() {
		return nil, n.fsys.op(syscall.EPERM) // the format has no hard links, as FAT has none
	}
	od, ostored, errno := tn.parentFd()
	if errno != 0 {
		return nil, n.fsys.op(errno)
	}
	defer od.close()
	d, stored, errno := n.makeEntry(name, func(dirfd int, e storedEntry) error {
		return t.makeEntry(dirfd, e, func() error { return unix.Linkat(od.fd, ostored, dirfd, e.stored, 0) })
	})
	if errno != 0 {
		return nil, n.fsys.op(errno)
	}
	defer d.close()
	e, err := statAt(d.fd, stored)
	if err != nil {
		return nil, n.fsys.op(fs2errno(err))
	}
	// The same file: go-fuse hands back the target's node, lock and file ID cache included
	// (with shared storage, a node of its own: identity.go).
	return n.newChild(ctx, name, &e, d.fd, stored, out), n.fsys.op(0)
}

// Mknod creates FIFOs, sockets and (as root) device nodes; only their names are encrypted.
func (n *node) Mknod(ctx context.Context, name string, mode, rdev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	t := n.fsys.tree
	if !t.specialFiles() {
		return nil, n.fsys.op(syscall.EPERM) // the format stores files, directories and symlinks only
	}
	ch, errno := n.newEntry(ctx, name, out, func(dirfd int, e storedEntry) error {
		return t.makeEntry(dirfd, e, func() error {
			if err := unix.Mknodat(dirfd, e.stored, mode, int(rdev)); err != nil {
				return err
			}
			if mode&n.fsys.umask != 0 {
				if errno := (entry{fd: -1, dirfd: dirfd, name: e.stored}).chmod(mode & 07777); errno != 0 {
					unix.Unlinkat(dirfd, e.stored, 0)
					return errno
				}
			}
			return nil
		})
	})
	return ch, n.fsys.op(errno)
}
