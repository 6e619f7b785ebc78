package gocryptfs

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// LstatAt stats name in dirfd without following a symlink: an fs.FileInfo like os.Lstat's
// (Sys is a *syscall.Stat_t), for a cipher entry whose path may exceed PATH_MAX in a deep
// vault. An O_PATH descriptor of the entry itself (of a symlink, with O_NOFOLLOW) is stat'ed:
// opening it neither blocks on a FIFO nor needs permission on the entry.
func LstatAt(dirfd int, name string) (fs.FileInfo, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: err}
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	return f.Stat()
}
