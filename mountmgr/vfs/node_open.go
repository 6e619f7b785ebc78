package vfs

import (
	"context"
	"errors"
	"slices"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/vault/layout"
)

// Opening and creating files: a handle is made only on the node's own cipher file.

// newFile makes a handle of n from fd, a descriptor of n's cipher file (see openEntry).
//
// The handle's descriptor keeps the cipher inode alive, so while n has a handle its inode
// number names that one file and the file ID cached in n is that file's. Once the last
// handle is gone, the file may be deleted and the number given to a new file (tmpfs and
// ext4 hand it out again at once), which the kernel may reach through the same node: so the
// cache goes with the last handle, and the next handle reads the ID from its own descriptor.
//
// A file's nodeExt goes with its last handle too (close): a mount that created 100,000 files
// kept one for each. A handle is only added to the node's current nodeExt, so that every
// handle of a node shares one lock.
func (n *node) newFile(fd int, writable bool) *file {
	f := &file{node: n, fd: fd, writable: writable}
	for {
		x := n.ext()
		x.filesMu.Lock()
		if n.x.Load() != x { // released by the last close in between
			x.filesMu.Unlock()
			continue
		}
		x.files = append(x.files, f)
		x.filesMu.Unlock()
		n.fsys.handles.Store(f, struct{}{})
		return f
	}
}

// close ends handle f. The cached file ID is dropped before the descriptor is closed: once
// it is closed, the inode number may name another file.
func (f *file) close() syscall.Errno {
	if !f.closed.CompareAndSwap(false, true) {
		return 0
	}
	f.node.fsys.handles.Delete(f)
	x := f.node.ext()
	x.filesMu.Lock()
	if i := slices.Index(x.files, f); i >= 0 {
		x.files = slices.Delete(x.files, i, i+1)
	}
	if len(x.files) == 0 {
		x.key.Store(nil)
		x.files = nil
		// Without handles nothing holds the lock, and what a directory keeps (its IV,
		// conflict copies) is not there: the next handle gets a new nodeExt.
		if f.node.StableAttr().Mode&unix.S_IFMT != unix.S_IFDIR {
			f.node.x.CompareAndSwap(x, nil)
		}
	}
	x.filesMu.Unlock()
	return fs2errno(unix.Close(f.fd))
}

// reopen opens n's cipher file again through a handle open on it, for an open that cannot
// reach it by name any more (see openEntry). The kernel found n before the rename or unlink
// that took its name, so the file that was there then is the one to open, as on a local
// file system; without a handle on it, it is gone, and the open fails with ESTALE.
// It fills st (if not nil) with the file's stat.
func (n *node) reopen(flags int, st *unix.Stat_t) (int, syscall.Errno) {
	fd := -1
	errno := n.throughHandle(func(f *file) syscall.Errno {
		var err error
		fd, err = layout.Reopen(f.fd, flags, st)
		return fs2errno(err)
	})
	return fd, errno
}

// throughHandle runs use with one of n's open handles, whose descriptor stays open until use
// returns; without one, n's file can no longer be reached (its name holds another file, or
// none) and the answer is ESTALE.
func (n *node) throughHandle(use func(f *file) syscall.Errno) syscall.Errno {
	x := n.x.Load() // a node without a nodeExt has no handles: none is made for it here
	if x == nil {
		return syscall.ESTALE
	}
	x.filesMu.Lock()
	defer x.filesMu.Unlock()
	if len(x.files) == 0 {
		return syscall.ESTALE
	}
	return use(x.files[0])
}

// openEntry opens n's cipher file, stored in dirfd, with flags; it must be n's own file. The
// kernel looks a name up and then opens the node it found; in between, a rename can put
// another file under that name or take n's away (an editor saving by renaming a new file
// over the old one). A handle on another file than its node's would use the node's lock and
// cached file ID for a file they do not belong to: so n's file is reopened through one of
// its handles instead, and without one the open fails with ESTALE; the kernel then looks
// the path up again and retries the open once, and gets the file now under the name.
//
// The cipherdir is anyone's who can write the synced folder, so what is under the name may
// not be a regular file at all: a FIFO would block the open until someone opened it for
// writing. It is opened without blocking (layout.OpenFile), and what is not a regular file
// is not n's. A directory is another entry renamed over the name, as above (Cryptomator
// keeps directories and symlinks in folders). A FIFO, socket or device is what an attacker
// leaves: unless n's own file is still open to be reopened, the open fails with EIO, logged
// with the cipher path, rather than with ESTALE, which would send the kernel to look the
// name up again and open the FIFO itself. (A FIFO renamed over the name through the mount
// in the instant between a lookup and its open gets EIO too.) It fills st (if not nil) with
// the opened file's stat.
func (n *node) openEntry(dirfd int, stored string, flags int, st *unix.Stat_t) (int, syscall.Errno) {
	fd, err := layout.OpenFile(dirfd, stored, flags, 0, st)
	if err == unix.ENOENT {
		return n.reopen(flags, st)
	}
	var nr *layout.NotRegularError
	if errors.As(err, &nr) {
		fd, errno := n.reopen(flags, st)
		if errno == syscall.ESTALE && nr.Mode&unix.S_IFMT != unix.S_IFDIR {
			return -1, n.fsys.notRegular(n.cipherPath(), err)
		}
		return fd, errno
	}
	if err != nil {
		return -1, fs2errno(err)
	}
	e, err := statFd(fd)
	if err != nil {
		unix.Close(fd)
		return -1, fs2errno(err)
	}
	if !n.holds(&e) {
		unix.Close(fd)
		return n.reopen(flags, st)
	}
	return fd, 0
}

// notRegular logs that the cipher file at cipherPath (a path of cipher names) is not a
// regular file (err, a *layout.NotRegularError) where one was expected, and returns the EIO
// the operation fails with, as for any other damage of the cipherdir.
func (f *fsys) notRegular(cipherPath string, err error) syscall.Errno {
	kind := "not a regular file"
	var nr *layout.NotRegularError
	if errors.As(err, &nr) {
		kind = nr.Kind()
	}
	f.log.Printf("vfs: %s: the cipher file is %s, not a regular file: refused", cipherPath, kind)
	return syscall.EIO
}

// shortHeader logs and refuses (EIO) a cipher file of size bytes that is not empty but
// shorter than the format's header: no file of the format is, and nothing of its content
// can be read (gocryptfs logs it too, and reads it as empty). A truncating open does not ask:
// it replaces what is there.
func (n *node) shortHeader(size int64) syscall.Errno {
	hl := int64(n.fsys.geo.HeaderLen)
	if size <= 0 || size >= hl {
		return 0
	}
	n.fsys.log.Printf("vfs: %s: the cipher file is %d bytes, shorter than its %d-byte header: damaged, open refused",
		n.cipherPath(), size, hl)
	return syscall.EIO
}

func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	fd := -1
	// With shared storage another machine may have made the name since the kernel looked it
	// up. Its file is opened as open(2) would open it: not changed to our mode or owner, not
	// removed if that fails, and truncated (O_TRUNC) only under the cipher lock.
	existed, trunc := false, false
	d, stored, errno := n.makeEntry(name, func(dirfd int, e storedEntry) (err error) {
		defer func() {
			// Without O_EXCL, the name may hold something else than a regular file by now.
			if layout.IsNotRegular(err) {
				n.fsys.notRegular(n.cipherPathTo(e.stored), err)
			}
		}()
		fl := openFlags(flags, true) | unix.O_CREAT
		if n.fsys.opts.SharedStorage && flags&syscall.O_EXCL == 0 {
			fd, err = n.fsys.tree.create(dirfd, e, (fl|unix.O_EXCL)&^unix.O_TRUNC, mode)
			if err == unix.EEXIST {
				existed, trunc = true, flags&syscall.O_TRUNC != 0
				pfd, name, perr := n.fsys.tree.filePlace(dirfd, e.stored)
				if perr != nil {
					return perr
				}
				fd, err = layout.OpenFile(pfd, name, openFlags(flags&^syscall.O_TRUNC, true), 0, nil)
				closeIfOther(pfd, dirfd)
			}
			return err
		}
		fd, err = n.fsys.tree.create(dirfd, e, fl, mode)
		return err
	})
	if errno != 0 {
		return nil, nil, 0, n.fsys.op(errno)
	}
	defer d.close()
	var key fileKey
	if !existed {
		if errno := n.preserveOwner(ctx, d.fd, stored); errno != 0 {
			unix.Close(fd)
			return nil, nil, 0, n.fsys.op(errno)
		}
		// A format whose empty files have a header (Cryptomator) gets it now, before the
		// file's attributes go to the kernel.
		if key, errno = n.fsys.emptyHeader(fd); errno != 0 {
			unix.Close(fd)
			return nil, nil, 0, n.fsys.op(errno)
		}
	}
	e, err := statFd(fd)
	if err != nil {
		unix.Close(fd)
		return nil, nil, 0, n.fsys.op(fs2errno(err))
	}
	ch := n.newChild(ctx, name, &e, d.fd, stored, out)
	cn := ch.Operations().(*node)
	f := cn.newFile(fd, true)
	if key != nil {
		f.cacheKey(key)
	}
	if trunc {
		if errno := f.truncateForOpen(ctx, fd); errno != 0 {
			return nil, nil, 0, n.fsys.op(errno)
		}
	}
	var fl uint32
	if n.fsys.opts.SharedStorage {
		fl = cn.openFlags()
	}
	return ch, f, fl, n.fsys.op(0)
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
	var st unix.Stat_t
	d, stored, errno := n.place()
	switch errno {
	case 0:
		fd, errno = n.openEntry(d.fd, stored, oflags, &st)
		d.close()
	case syscall.ENOENT: // n was renamed over or deleted since the kernel looked it up
		fd, errno = n.reopen(oflags, &st)
	}
	if errno != 0 {
		return nil, 0, n.fsys.op(errno)
	}
	if !trunc {
		if errno := n.shortHeader(st.Size); errno != 0 {
			unix.Close(fd)
			return nil, 0, n.fsys.op(errno)
		}
	}
	f := n.newFile(fd, write)
	if trunc {
		if errno := f.truncateForOpen(ctx, fd); errno != 0 {
			return nil, 0, n.fsys.op(errno)
		}
	}
	return f, n.openFlags(), n.fsys.op(0)
}

// openFlags are the FOPEN flags of n's handles. Changes come through this mount, or are told
// to the kernel as the cipherdir's watch sees them (watch.go), so the kernel may keep the
// file's pages across opens, as long as the node cannot have stood for another file before:
// not where it is known by its inode number alone (see identity.go). On a watched local
// cipherdir the kernel drops pages only when told (pagesTold, see Mount), so a file in a
// directory the watch could not take (the mark limit) has its pages dropped at every
// open instead; elsewhere the kernel drops them when size or mtime change (AUTO_INVAL_DATA).
// With shared storage,
// changes also come from other machines, which the kernel learns nothing of: it caches no
// pages (an mtime of coarse resolution need not change between two writes, so the pages
// could stay stale), and every read and write comes here.
func (n *node) openFlags() uint32 {
	switch {
	case n.fsys.opts.SharedStorage:
		return fuse.FOPEN_DIRECT_IO
	case n.StableAttr().Gen == 0:
		return 0
	case n.fsys.pagesTold && (n.parentUnwatched() || n.entryUnwatched()):
		return 0
	}
	return fuse.FOPEN_KEEP_CACHE
}

// parentUnwatched reports whether n is in a directory whose changes the watch does not see.
// A file without a name (renamed over, deleted) cannot be changed behind the mount by name.
func (n *node) parentUnwatched() bool {
	_, p := n.Parent()
	return p != nil && !p.Operations().(*node).watched()
}

// truncateForOpen does what O_TRUNC asks of an open or create of f (its cipher file fd): the
// kernel sends O_TRUNC with OPEN instead of a SETATTR (CAP_ATOMIC_O_TRUNC), and with it the
// duty to drop setuid/setgid as truncate(2) would. On failure f is closed.
func (f *file) truncateForOpen(ctx context.Context, fd int) syscall.Errno {
	errno := f.truncateToZero()
	if errno == 0 {
		errno = (entry{fd: fd}).killSuid(ctx)
	}
	if errno != 0 {
		f.close()
	}
	return errno
}

// truncateToZero empties the cipher file for a truncating open; the next write makes a new
// header. Unlike truncate, it changes the times even when the file is empty already, as
// O_TRUNC does.
func (f *file) truncateToZero() syscall.Errno {
	return f.withLocks(true, func() syscall.Errno {
		var st unix.Stat_t
		if err := unix.Fstat(f.fd, &st); err != nil {
			return fs2errno(err)
		}
		return f.empty(uint64(st.Size))
	})
}

// emptyHeader writes a header into the new, empty cipher file fd if the format's empty files
// have one (Geometry.EmptyHasHeader), and returns the key it holds (nil otherwise). A failure
// leaves the file empty, which reads as an empty file all the same.
func (f *fsys) emptyHeader(fd int) (fileKey, syscall.Errno) {
	if !f.geo.EmptyHasHeader {
		return nil, 0
	}
	k, h, err := f.content.newHeader()
	if err != nil {
		return nil, syscall.EIO
	}
	if err := pwrite(fd, h, 0); err != nil {
		unix.Ftruncate(fd, 0)
		return nil, fs2errno(err)
	}
	return k, 0
}
