package vfs

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/vault/layout"
)

// Directory operations on a node: making, removing, renaming and linking entries.

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
			n.removeLongName(d.fd, e)
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
	ch := n.newChild(ctx, name, &e, dirfd, stored, out)
	if w := n.fsys.watch; w != nil {
		w.changed(n.fsys.stableAttr(&e), e.st.Ctim) // its owner, set by preserveOwner
	}
	return ch, 0
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
	n.removeLongName(d.fd, e)
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
	n.removeLongName(d.fd, e)
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
			np.removeLongName(dd.fd, dst)
		}
		return fs2errno(err)
	}
	if w := n.fsys.watch; w != nil {
		// A rename sets the moved file's change time.
		w.changedAt(dd.fd, dst.stored)
		if flags&unix.RENAME_EXCHANGE != 0 {
			w.changedAt(sd.fd, src.stored)
		}
	}
	// With RENAME_EXCHANGE both entries still exist under their names, .name files included.
	if flags&unix.RENAME_EXCHANGE == 0 {
		n.removeLongName(sd.fd, src)
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
	// The same file: go-fuse hands back the target's node, lock and file ID cache included
	// (with shared storage, a node of its own: identity.go).
	return n.newChild(ctx, name, &e, d.fd, stored, out), n.fsys.op(0)
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
