package vfs

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// File locks (POSIX and flock) are forwarded to the cipher file's descriptor as open file
// description locks, so two opens of one file conflict as they would on a local file system.
// Byte ranges are taken as they are: every locker goes through this mount, so only
// consistency between them matters.

var (
	_ = (fs.FileGetlker)((*file)(nil))
	_ = (fs.FileSetlker)((*file)(nil))
	_ = (fs.FileSetlkwer)((*file)(nil))
)

func (f *file) Getlk(ctx context.Context, owner uint64, lk *fuse.FileLock, flags uint32, out *fuse.FileLock) syscall.Errno {
	var flk syscall.Flock_t
	lk.ToFlockT(&flk)
	errno := fs2errno(syscall.FcntlFlock(uintptr(f.fd), unix.F_OFD_GETLK, &flk))
	out.FromFlockT(&flk)
	return errno
}

func (f *file) Setlk(ctx context.Context, owner uint64, lk *fuse.FileLock, flags uint32) syscall.Errno {
	return f.setLock(lk, flags, false)
}

func (f *file) Setlkw(ctx context.Context, owner uint64, lk *fuse.FileLock, flags uint32) syscall.Errno {
	return f.setLock(lk, flags, true)
}

func (f *file) setLock(lk *fuse.FileLock, flags uint32, wait bool) syscall.Errno {
	if flags&fuse.FUSE_LK_FLOCK != 0 {
		var op int
		switch lk.Typ {
		case syscall.F_RDLCK:
			op = syscall.LOCK_SH
		case syscall.F_WRLCK:
			op = syscall.LOCK_EX
		case syscall.F_UNLCK:
			op = syscall.LOCK_UN
		default:
			return syscall.EINVAL
		}
		if !wait {
			op |= syscall.LOCK_NB
		}
		return fs2errno(syscall.Flock(f.fd, op))
	}
	var flk syscall.Flock_t
	lk.ToFlockT(&flk)
	cmd := unix.F_OFD_SETLK
	if wait {
		cmd = unix.F_OFD_SETLKW
	}
	return fs2errno(syscall.FcntlFlock(uintptr(f.fd), cmd, &flk))
}
