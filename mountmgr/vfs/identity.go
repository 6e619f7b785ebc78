package vfs

import (
	"bytes"
	"context"

	"github.com/hanwen/go-fuse/v2/fs"
	"golang.org/x/sys/unix"
)

// A node stands for one cipher file for its whole life, named by go-fuse's StableAttr: the
// inode number (ino) and a generation. The inode number alone is not enough: ext4 and xfs
// give a deleted file's number to the next new file at once, while the kernel may still hold
// the deleted file's node (its name cached, a late open on its way). go-fuse hands back the
// node it knows for a StableAttr, and the kernel keeps that node's pages across opens
// (FOPEN_KEEP_CACHE): with the number alone, a new file that a sync tool wrote with the old
// one's number read as the old file's cached contents.
//
// The generation is the cipher file's birth time (statx's STATX_BTIME, in nanoseconds),
// which never changes in a file's life; statx costs the one system call fstatat did. Two
// files share a number and a birth time only when one was created, deleted and its number
// given out again within one tick of the kernel's coarse clock (4 ms at HZ=250), and that
// matters only if the kernel still holds the short-lived file's node then. Where the cipher
// file system gives no birth time (ext4 made with 128-byte inodes, many FUSE and network
// file systems), the generation is 0: a node is known by its number alone, and opening it
// does not keep the kernel's cached pages (node.Open), so an old file's pages never show as
// a new one's contents.

// entryID is a cipher entry's stat and generation.
type entryID struct {
	st  unix.Stat_t
	gen uint64
}

// statxMask asks for what plainAttr needs and the birth time.
const statxMask = unix.STATX_BASIC_STATS | unix.STATX_BTIME

// statAt stats name in dirfd without following a symlink.
func statAt(dirfd int, name string) (entryID, error) {
	return statx(dirfd, name, unix.AT_SYMLINK_NOFOLLOW)
}

// statFd stats the open file fd.
func statFd(fd int) (entryID, error) { return statx(fd, "", unix.AT_EMPTY_PATH) }

func statx(dirfd int, name string, flags int) (entryID, error) {
	var x unix.Statx_t
	if err := unix.Statx(dirfd, name, flags, statxMask, &x); err != nil {
		return entryID{}, err
	}
	ts := func(t unix.StatxTimestamp) unix.Timespec { return unix.Timespec{Sec: t.Sec, Nsec: int64(t.Nsec)} }
	e := entryID{st: unix.Stat_t{
		Dev:    unix.Mkdev(x.Dev_major, x.Dev_minor),
		Ino:    x.Ino,
		Mode:   uint32(x.Mode),
		Uid:    x.Uid,
		Gid:    x.Gid,
		Rdev:   unix.Mkdev(x.Rdev_major, x.Rdev_minor),
		Size:   int64(x.Size),
		Blocks: int64(x.Blocks),
		Atim:   ts(x.Atime),
		Mtim:   ts(x.Mtime),
		Ctim:   ts(x.Ctime),
	}}
	// Their widths differ between architectures (32 bits on arm64).
	setInt(&e.st.Nlink, x.Nlink)
	setInt(&e.st.Blksize, x.Blksize)
	if x.Mask&unix.STATX_BTIME != 0 {
		e.gen = uint64(x.Btime.Sec)*1e9 + uint64(x.Btime.Nsec)
	}
	return e, nil
}

// setInt stores v in *dst, converting to whatever integer type the field has here.
func setInt[T ~int32 | ~int64 | ~uint32 | ~uint64, V ~uint32 | ~uint64](dst *T, v V) { *dst = T(v) }

// stableAttr is the identity go-fuse keeps the node of entry e under.
func (f *fsys) stableAttr(e *entryID) fs.StableAttr {
	return fs.StableAttr{Mode: e.st.Mode & unix.S_IFMT, Ino: f.ino(&e.st), Gen: e.gen}
}

// With shared storage (Options.SharedStorage) another machine changes the cipherdir behind
// the mount, so go-fuse's identity table cannot be trusted to name one file per node: a hard
// link made there, or a file recreated there under a number this mount still knows (network
// file systems rarely give a birth time), would join an existing node whose parent and name
// are stale, and its operations would fail with ENOENT. So every directory entry gets a node
// of its own (a generation from a counter, as gocryptfs's -sharedstorage does), and a lookup
// keeps the node it gave before only while the entry still holds the same file: same inode
// number, type and birth time. The birth time lives in the node's nodeExt, made for every
// node in this mode.

// sharedChild returns the inode for entry e (stored in dirfd, plain in n) under shared
// storage. Without birth times a directory made again under a number this mount knows has
// the same identity as the old one, but a new IV: its node is kept only while the IV it
// cached is still the directory's.
func (n *node) sharedChild(ctx context.Context, plain string, e *entryID, dirfd int, stored string) *fs.Inode {
	if ch := n.GetChild(plain); ch != nil {
		if cn := ch.Operations().(*node); cn.holds(e) && (e.gen != 0 || cn.keepsIV(dirfd, stored)) {
			return ch
		}
	}
	c := &node{fsys: n.fsys}
	c.ext().birth = e.gen
	sa := fs.StableAttr{Mode: e.st.Mode & unix.S_IFMT, Ino: n.fsys.ino(&e.st), Gen: n.fsys.gen.Add(1)}
	return n.NewInode(ctx, c, sa)
}

// keepsIV reports whether directory node n, stored in dirfd, has no cached key or the one
// its folder has now. Anything but a directory keeps nothing that a new file with its
// number would make wrong.
func (n *node) keepsIV(dirfd int, stored string) bool {
	cached := n.ext().dirKey.Load()
	if n.StableAttr().Mode != unix.S_IFDIR || cached == nil {
		return true
	}
	if dirfd < 0 {
		return false
	}
	fd, _, err := n.fsys.tree.openDir(dirfd, stored)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	key, err := n.fsys.tree.dirKey(n, fd)
	return err == nil && bytes.Equal(key, cached.bytes())
}

// holds reports whether entry e is n's own file (see node.openEntry).
func (n *node) holds(e *entryID) bool {
	if !n.fsys.opts.SharedStorage {
		return n.fsys.stableAttr(e) == n.StableAttr()
	}
	sa := n.StableAttr()
	return sa.Ino == n.fsys.ino(&e.st) && sa.Mode == e.st.Mode&unix.S_IFMT && n.ext().birth == e.gen
}
