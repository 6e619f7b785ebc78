package vfs

import (
	"context"
	"syscall"
	"unsafe"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/vault/layout"
)

// Attributes of a node: stat through the cipher entry, and changes to mode, owner, size and
// times, which drop setuid/setgid as a local file system would.

func (n *node) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if t := n.attrTimeout(); t != 0 {
		out.SetTimeout(t)
	}
	if n.StableAttr().Mode == syscall.S_IFREG {
		// Not while a write or truncation is under way: the cipher file grows a page at a
		// time as a write is copied in, and a size in the middle of a block is no file's.
		// Only a file with handles is written (a nodeExt without them has no writer).
		if x := n.x.Load(); x != nil {
			x.mu.RLock()
			defer x.mu.RUnlock()
		}
	}
	if f, ok := fh.(*file); ok && f != nil {
		return n.fsys.op(f.getattr(out))
	}
	return n.fsys.op(n.getattr(out))
}

// getattr stats n's object through its place (the root through its own descriptor).
func (n *node) getattr(out *fuse.AttrOut) syscall.Errno {
	if n.IsRoot() {
		return n.fsys.fdAttr(n.fsys.rootFd, out)
	}
	d, stored, errno := n.place()
	if errno == 0 {
		defer d.close()
	}
	if n.StableAttr().Mode == syscall.S_IFREG {
		return n.fileAttr(d.fd, stored, errno, out)
	}
	var st unix.Stat_t
	if errno == 0 {
		errno = fs2errno(unix.Fstatat(d.fd, stored, &st, unix.AT_SYMLINK_NOFOLLOW))
	}
	if errno == syscall.ENOENT && n.StableAttr().Mode == syscall.S_IFDIR {
		return n.removedDirAttr(out)
	}
	if errno != 0 {
		return errno
	}
	if n.StableAttr().Mode == syscall.S_IFLNK {
		st.Mode = syscall.S_IFLNK | 0o777 // a format may keep a symlink in a file (Cryptomator)
	}
	n.fsys.plainAttr(&st, d.fd, stored, &out.Attr)
	return 0
}

// fileAttr answers getattr for a regular file n stored in dirfd (placeErr: why n has no
// place). Its name may hold another file by now: a save by rename put a new one there after
// the kernel looked n up, and the kernel asks for n's attributes without a handle (the
// permission check of a path walk does). Answering with the newcomer's size would make the
// kernel take it for n's, and fill reads of n's pages up to it with zeros. So, as for an
// open (openEntry), n's own file answers, through a handle still open on it, and without one
// the answer is ESTALE, on which the kernel looks the name up again.
func (n *node) fileAttr(dirfd int, stored string, placeErr syscall.Errno, out *fuse.AttrOut) syscall.Errno {
	if placeErr == 0 {
		e, err := statAt(dirfd, stored)
		if err == nil && n.holds(&e) {
			n.fsys.plainAttr(&e.st, dirfd, stored, &out.Attr)
			return 0
		}
		if err != nil && err != unix.ENOENT {
			return fs2errno(err)
		}
	} else if placeErr != syscall.ENOENT {
		return placeErr
	}
	return n.throughHandle(func(f *file) syscall.Errno { return f.getattr(out) })
}

func (n *node) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	errno := n.setattr(ctx, fh, in, out)
	if t := n.attrTimeout(); t != 0 {
		out.SetTimeout(t)
	}
	return n.fsys.op(errno)
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
		d, stored, errno := n.place()
		if errno != 0 {
			return errno
		}
		defer d.close()
		e = entry{fd: -1, dirfd: d.fd, name: stored}
	}
	if errno := n.changeAttrs(ctx, f, e, in); errno != 0 {
		return errno
	}
	if f != nil {
		return f.getattr(out)
	}
	return n.getattr(out)
}

// changeAttrs makes the changes of in to the entry e of n (f: the open file, if any).
func (n *node) changeAttrs(ctx context.Context, f *file, e entry, in *fuse.SetAttrIn) syscall.Errno {
	if m, ok := in.GetMode(); ok {
		if n.StableAttr().Mode == syscall.S_IFLNK {
			return syscall.EOPNOTSUPP // a symlink's mode cannot change on Linux
		}
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
		return e.utimens(&ts)
	}
	return 0
}

// entry is a cipher entry to change attributes of: an open descriptor (fd >= 0), or name in
// dirfd.
type entry struct {
	fd    int
	dirfd int
	name  string
}

// stat stats the entry itself (not what a symlink points to).
func (e entry) stat() (st unix.Stat_t, err error) {
	if e.fd >= 0 {
		err = unix.Fstat(e.fd, &st)
	} else {
		err = unix.Fstatat(e.dirfd, e.name, &st, unix.AT_SYMLINK_NOFOLLOW)
	}
	return st, err
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
		fd, err = layout.Reopen(e.fd, unix.O_RDWR, nil)
		if layout.IsNotRegular(err) {
			return n.fsys.notRegular(n.cipherPath(), err)
		}
		errno = fs2errno(err)
	} else {
		fd, errno = n.openEntry(e.dirfd, e.name, unix.O_RDWR, nil)
	}
	if errno != 0 {
		return errno
	}
	tmp := n.newFile(fd, true)
	defer tmp.close()
	return tmp.truncate(size)
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
	st, err := e.stat()
	if err != nil {
		return fs2errno(err)
	}
	if kill := suidBits(st.Mode); kill != 0 {
		return e.chmod(st.Mode & 07777 &^ kill)
	}
	return 0
}
