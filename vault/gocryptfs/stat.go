package gocryptfs

import (
	"io/fs"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// statInfo is the fs.FileInfo of a cipher entry stat'ed relative to its directory (os.Lstat
// needs a path, which may exceed PATH_MAX in a deep vault). Sys returns a *syscall.Stat_t, as
// os.Lstat's does.
type statInfo struct {
	name string
	st   syscall.Stat_t
}

// LstatAt stats name in dirfd without following a symlink (an fs.FileInfo like os.Lstat's).
func LstatAt(dirfd int, name string) (fs.FileInfo, error) {
	var u unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &u, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: err}
	}
	return &statInfo{name: name, st: syscall.Stat_t{
		Dev: u.Dev, Ino: u.Ino, Nlink: u.Nlink, Mode: u.Mode, Uid: u.Uid, Gid: u.Gid,
		Rdev: u.Rdev, Size: u.Size, Blksize: u.Blksize, Blocks: u.Blocks,
		Atim: syscall.Timespec{Sec: u.Atim.Sec, Nsec: u.Atim.Nsec},
		Mtim: syscall.Timespec{Sec: u.Mtim.Sec, Nsec: u.Mtim.Nsec},
		Ctim: syscall.Timespec{Sec: u.Ctim.Sec, Nsec: u.Ctim.Nsec},
	}}, nil
}

func (i *statInfo) Name() string       { return i.name }
func (i *statInfo) Size() int64        { return i.st.Size }
func (i *statInfo) ModTime() time.Time { return time.Unix(i.st.Mtim.Unix()) }
func (i *statInfo) IsDir() bool        { return i.Mode().IsDir() }
func (i *statInfo) Sys() any           { return &i.st }

// fileTypes are the fs.FileMode bits of the Unix file types, by S_IFMT>>12.
var fileTypes = [16]fs.FileMode{
	syscall.S_IFDIR >> 12: fs.ModeDir, syscall.S_IFLNK >> 12: fs.ModeSymlink, syscall.S_IFIFO >> 12: fs.ModeNamedPipe,
	syscall.S_IFSOCK >> 12: fs.ModeSocket, syscall.S_IFBLK >> 12: fs.ModeDevice, syscall.S_IFCHR >> 12: fs.ModeDevice | fs.ModeCharDevice,
}

// Mode translates the Unix mode as os.Lstat does.
func (i *statInfo) Mode() fs.FileMode {
	m := fs.FileMode(i.st.Mode&0o777) | fileTypes[(i.st.Mode&syscall.S_IFMT)>>12]
	if i.st.Mode&syscall.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if i.st.Mode&syscall.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if i.st.Mode&syscall.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}
