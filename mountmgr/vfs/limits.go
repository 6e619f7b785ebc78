package vfs

import (
	"io"
	"math"
	"syscall"

	"golang.org/x/sys/unix"
)

// A size a file cannot have fails with EFBIG, as on a local file system (POSIX; pjdfstest's
// truncate/12), for both formats: past what the format can hold at all (the geometry's
// MaxPlainSize, whose cipher file would be larger than any file), or past what the
// cipherdir's file system holds (ext4: 16 TiB), which it says itself when the cipher file is
// grown, or which noRoomFor finds where the disk's free space was checked first.

// tooBig reports whether the plaintext size end is more than the format holds.
func (f *fsys) tooBig(end uint64) bool { return end > uint64(f.geo.MaxPlainSize()) }

// noRoomFor is the error for growing the cipher file open at fd to cipherEnd bytes where the
// disk has less room free: EFBIG if its file system cannot have a file that big at all (it
// refuses to seek past its largest file size), else ENOSPC. Every handle's descriptor is its
// own and read and written at offsets, so its file offset is free to move.
func noRoomFor(fd int, cipherEnd uint64) syscall.Errno {
	if cipherEnd > math.MaxInt64 {
		return syscall.EFBIG
	}
	if _, err := unix.Seek(fd, int64(cipherEnd), io.SeekStart); err == unix.EINVAL {
		return syscall.EFBIG
	}
	return syscall.ENOSPC
}
