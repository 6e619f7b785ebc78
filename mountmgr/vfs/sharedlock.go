package vfs

import (
	"io"
	"syscall"

	"golang.org/x/sys/unix"
)

// With shared storage (Options.SharedStorage), another vaultui or gocryptfs on another machine
// may change a cipher file while this mount does. The node lock serialises this mount's own
// operations only; what another machine does in between a read and a write of one block (a
// partial write decrypts the block, merges and encrypts it again) or of the header (an empty
// file gets one on its first write) would be lost, or would leave a block under another
// file ID that fails authentication. So content operations also hold an open file description
// lock (F_OFD_SETLKW) on the cipher file: shared for reads, exclusive for writes and size
// changes. Network file systems pass these locks on to the server (NFS, SMB), so they hold
// between machines; between mounts in one process too, as each handle is its own open file
// description. The lock covers the whole file, since a write's plan depends on the file's size
// and header, which any write may change. The node lock is always taken first, so no two
// operations of one mount wait on each other's cipher lock.

// withLocks runs op under f's node lock, then its cipher file lock (lockCipher): shared for a
// read, exclusive for a change.
func (f *file) withLocks(exclusive bool, op func() syscall.Errno) syscall.Errno {
	x := f.node.ext()
	if exclusive {
		x.mu.Lock()
		defer x.mu.Unlock()
	} else {
		x.mu.RLock()
		defer x.mu.RUnlock()
	}
	locked, errno := f.lockCipher(exclusive)
	if errno != 0 {
		return errno
	}
	if locked {
		defer f.unlockCipher()
	}
	return op()
}

// lockCipher takes the cipher file lock of f (exclusive for a change) when the mount is on
// shared storage; it reports whether unlockCipher must be called. A file system that has no
// such locks is logged once and used without them.
func (f *file) lockCipher(exclusive bool) (bool, syscall.Errno) {
	fsys := f.node.fsys
	if !fsys.opts.SharedStorage {
		return false, 0
	}
	lk := unix.Flock_t{Type: unix.F_RDLCK, Whence: io.SeekStart} // Start and Len 0: the whole file
	if exclusive {
		lk.Type = unix.F_WRLCK
	}
	for {
		err := unix.FcntlFlock(uintptr(f.fd), unix.F_OFD_SETLKW, &lk)
		switch err {
		case nil:
			return true, 0
		case unix.EINTR:
			continue
		case unix.ENOLCK, unix.EOPNOTSUPP, unix.EINVAL:
			fsys.noLocks.Do(func() {
				fsys.log.Printf("vfs: %s: the cipherdir's file system does not lock files (%v): two machines writing one block at once can corrupt it", fsys.dir, err)
			})
			return false, 0
		}
		return false, fs2errno(err)
	}
}

// unlockCipher releases what lockCipher took.
func (f *file) unlockCipher() {
	lk := unix.Flock_t{Type: unix.F_UNLCK, Whence: io.SeekStart}
	if err := unix.FcntlFlock(uintptr(f.fd), unix.F_OFD_SETLK, &lk); err != nil {
		f.node.fsys.log.Printf("vfs: %s: unlocking: %v", f.node.cipherPath(), err)
	}
}
