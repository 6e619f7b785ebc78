package vfs

import (
	"context"
	"slices"
	"sync/atomic"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/vault/layout"
)

var (
	_ = (fs.DirStream)((*dirStream)(nil))
	_ = (fs.FileSeekdirer)((*dirStream)(nil))

	_ = (fs.NodeOpendirHandler)((*node)(nil))
	_ = (fs.FileReaddirenter)((*dirHandle)(nil))
	_ = (fs.FileSeekdirer)((*dirHandle)(nil))
	_ = (fs.FileReleasedirer)((*dirHandle)(nil))
	_ = (fs.FileFsyncdirer)((*dirHandle)(nil))
)

// dirHandle is an open directory. Its listing is a stream made on the first read (an opendir
// that only syncs, as "sync DIR" does, lists nothing) that decrypts each name when the kernel
// asks for it, as gocryptfs does: a listing of 100,000 files holds a few entries in memory,
// not 100,000 (the daemon's memory grows with every byte it holds, twice over with the
// garbage collector's headroom). It answers FSYNCDIR, which go-fuse's own handle for a
// NodeReaddirer refuses with EOPNOTSUPP.
//
// It keeps a descriptor (O_PATH) of the directory's folder: a directory removed or renamed
// over while open still answers stat through it, with its link count 0, as on a local file
// system (the kernel asks for a directory's attributes by node, never by handle).
type dirHandle struct {
	n      *node
	ds     *dirStream
	fd     int // the folder; -1 for the root, which is never removed, or one already gone
	closed atomic.Bool
}

// OpendirHandle opens a directory for listing and syncing. The kernel may keep a watched
// directory's listing across opens (FOPEN_CACHE_DIR): it drops it itself when the directory
// changes through the mount, and is told when it changes behind it (watch.go).
func (n *node) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	var fl uint32
	if n.keepsListing() {
		fl = fuse.FOPEN_CACHE_DIR | fuse.FOPEN_KEEP_CACHE
	}
	h := &dirHandle{n: n, fd: -1}
	if !n.IsRoot() {
		// Without its folder (gone), the handle opens all the same; listing it fails.
		if d, errno := n.dirFd(); errno == 0 {
			h.fd, _ = unix.FcntlInt(uintptr(d.fd), unix.F_DUPFD_CLOEXEC, 0)
			d.close()
		}
	}
	if h.fd >= 0 {
		x := n.ext() // a directory's nodeExt stays with it
		x.filesMu.Lock()
		x.dirHandles = append(x.dirHandles, h)
		x.filesMu.Unlock()
		n.fsys.handles.Store(h, struct{}{})
	}
	return h, fl, n.fsys.op(0)
}

// close ends the handle: by Releasedir, or by the mount's end (fsys.close).
func (h *dirHandle) close() syscall.Errno {
	if !h.closed.CompareAndSwap(false, true) {
		return 0
	}
	if h.ds != nil {
		h.ds.Close()
	}
	if h.fd < 0 {
		return 0
	}
	h.n.fsys.handles.Delete(h)
	x := h.n.ext()
	x.filesMu.Lock()
	if i := slices.Index(x.dirHandles, h); i >= 0 {
		x.dirHandles = slices.Delete(x.dirHandles, i, i+1)
	}
	x.filesMu.Unlock()
	return fs2errno(unix.Close(h.fd))
}

// removedDirAttr answers getattr for directory n when its place is gone (removed, or renamed
// over): through one of its open handles, else ENOENT.
func (n *node) removedDirAttr(out *fuse.AttrOut) syscall.Errno {
	x := n.x.Load()
	if x == nil {
		return syscall.ENOENT
	}
	x.filesMu.Lock()
	defer x.filesMu.Unlock()
	if len(x.dirHandles) == 0 {
		return syscall.ENOENT
	}
	return n.fsys.fdAttr(x.dirHandles[0].fd, out)
}

// keepsListing reports whether the kernel may keep directory n's listing across opens.
func (n *node) keepsListing() bool {
	return n.fsys.longCache && n.watched()
}

func (h *dirHandle) stream() syscall.Errno {
	if h.ds != nil {
		return 0
	}
	ds, errno := h.n.openDirStream()
	if errno != 0 {
		return h.n.fsys.op(errno)
	}
	h.ds = ds
	if x := h.n.x.Load(); x != nil {
		x.childRead.Store(false) // the kernel lists anew (noteRead)
	}
	return 0
}

// Readdirent hands out the next entry; nil at the end. go-fuse serialises the calls on one
// handle.
func (h *dirHandle) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	if errno := h.stream(); errno != 0 {
		return nil, errno
	}
	if !h.ds.HasNext() {
		return nil, 0
	}
	e, errno := h.ds.Next()
	return &e, errno
}

func (h *dirHandle) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	if errno := h.stream(); errno != 0 {
		return errno
	}
	return h.ds.Seekdir(ctx, off)
}

func (h *dirHandle) Releasedir(ctx context.Context, flags uint32) { h.close() }

// Fsyncdir makes the cipher directory's entries durable: what fsync of a directory promises
// (POSIX; ext4 and gocryptfs do the same). Creates, renames and removals are not synced one
// by one, as on a local file system: a program that needs them on disk syncs the directory.
func (h *dirHandle) Fsyncdir(ctx context.Context, flags uint32) syscall.Errno {
	return h.n.fsys.op(h.n.syncDir())
}

// syncDir fsyncs directory node n's cipher directory (through a descriptor that can be
// synced: the cached ones are O_PATH).
func (n *node) syncDir() syscall.Errno {
	d, errno := n.dirFd()
	if errno != 0 {
		return errno
	}
	defer d.close()
	fd, err := layout.OpenDir(d.fd, ".")
	if err != nil {
		return fs2errno(err)
	}
	defer unix.Close(fd)
	return fs2errno(unix.Fsync(fd))
}

// dirStream is a listing in progress. Entries are numbered in the order they are handed out
// (DirEntry.Off); the cipher entries come first, then the sync tools' conflict copies among
// those whose names did not decrypt (see finish), which can only be told once every entry
// has been seen.
type dirStream struct {
	n   *node
	dir dirRef       // the cipher directory (borrowed while listing), for long names and conflict copies
	raw fs.DirStream // its entries
	iv  []byte       // the directory's key (node.key); nil with PlaintextNames

	handed uint64         // entries handed out so far
	peeked *fuse.DirEntry // the entry HasNext found, not handed out yet
	err    syscall.Errno  // a failure to hand out instead of the next entry

	failed   []failedEntry   // cipher entries that did not decrypt
	tail     []fuse.DirEntry // conflict copies, handed out after the cipher entries
	finished bool            // tail is computed

	// otherIVs are the IVs of the copies of a gocryptfs directory's gocryptfs.diriv, read
	// (otherIVsRead) at the first name that decrypts to one no one gives (gocryptfsTree.listed).
	otherIVs     []layout.OtherIV
	otherIVsRead bool
}

type failedEntry struct {
	fuse.DirEntry
	err error
}

func (n *node) openDirStream() (*dirStream, syscall.Errno) {
	d, errno := n.dirFd()
	if errno != 0 {
		return nil, errno
	}
	s := &dirStream{n: n, dir: d}
	if !n.fsys.plainNames {
		if s.iv, errno = n.key(); errno != 0 {
			d.close()
			return nil, errno
		}
	}
	// The raw stream reads a descriptor of its own, with its own offset.
	rfd, err := layout.OpenDir(d.fd, ".")
	if err != nil {
		d.close()
		return nil, fs2errno(err)
	}
	if s.raw, errno = fs.NewLoopbackDirStreamFd(rfd); errno != 0 {
		unix.Close(rfd)
		d.close()
		return nil, errno
	}
	return s, 0
}

// learnConflicts lists the directory to the end, which records its conflict copies' names.
func (n *node) learnConflicts() syscall.Errno {
	s, errno := n.openDirStream()
	if errno != 0 {
		return errno
	}
	defer s.Close()
	for s.HasNext() {
		if _, errno := s.Next(); errno != 0 {
			return errno
		}
	}
	return 0
}

func (s *dirStream) HasNext() bool {
	if s.peeked != nil || s.err != 0 {
		return true
	}
	for s.raw.HasNext() {
		e, errno := s.raw.Next()
		if errno != 0 {
			s.err = errno
			return true
		}
		if s.admit(&e) {
			s.peeked = &e
			return true
		}
	}
	if !s.finished {
		s.finish()
	}
	if len(s.tail) > 0 {
		s.peeked = &s.tail[0]
		s.tail = s.tail[1:]
		return true
	}
	return false
}

func (s *dirStream) Next() (fuse.DirEntry, syscall.Errno) {
	if !s.HasNext() {
		return fuse.DirEntry{}, syscall.EBADF // go-fuse asks only after HasNext said yes
	}
	if errno := s.err; errno != 0 {
		s.err = 0
		return fuse.DirEntry{}, errno
	}
	e := *s.peeked
	s.peeked = nil
	s.handed++
	e.Off = s.handed
	return e, 0
}

// Seekdir goes to the entry after the first off handed out: back means listing again from
// the start (names decrypt to the same entries in the same order while the directory does
// not change, which is all a directory offset promises anywhere).
func (s *dirStream) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	if off < s.handed || off == 0 {
		sd, ok := s.raw.(fs.FileSeekdirer)
		if !ok {
			return syscall.ENOTSUP
		}
		if errno := sd.Seekdir(ctx, 0); errno != 0 {
			return errno
		}
		*s = dirStream{n: s.n, dir: s.dir, raw: s.raw, iv: s.iv}
	}
	for s.handed < off && s.HasNext() {
		if _, errno := s.Next(); errno != 0 {
			return errno
		}
	}
	return 0
}

func (s *dirStream) Close() {
	s.raw.Close()
	s.dir.close()
	s.dir = dirRef{}
}

// admit turns cipher entry e into the entry the mount shows, in place; false hides it (the
// format's own files, and names that do not decrypt or decrypt only by chance, which finish
// looks at once more).
func (s *dirStream) admit(e *fuse.DirEntry) bool {
	n := s.n
	if e.Name == "." || e.Name == ".." {
		return true
	}
	if n.IsRoot() && n.fsys.tree.configFile(e.Name) {
		return false
	}
	plain, se, typ, hide, err := n.fsys.tree.listed(s, e.Name, e.Mode&syscall.S_IFMT)
	if err != nil {
		s.failed = append(s.failed, failedEntry{*e, err})
		return false
	}
	if hide {
		return false
	}
	if !n.fsys.plainNames {
		// "ls -l" looks every entry up next: remember the stored names.
		n.cacheName(s.iv, plain, se)
	}
	if typ != e.Mode&syscall.S_IFMT {
		e.Mode, e.Ino = typ, 0 // the entry stands for another object (a Cryptomator folder entry)
	}
	e.Name = plain
	return true
}

// finish decides, once every cipher entry has been seen, which of those that did not decrypt
// are sync tools' conflict copies (shown under a readable name, layout.ConflictName) or
// entries made under the IV of a conflict copy of the directory's gocryptfs.diriv, or bad names
// the mount shows (Options.BadNames, layout.BadName); the others stay hidden and logged. It records the copies' names for lookups.
func (s *dirStream) finish() {
	s.finished = true
	n := s.n
	if n.fsys.plainNames {
		return
	}
	conflicts := map[string]storedEntry{}
	if len(s.failed) > 0 {
		s.tail = n.fsys.tree.conflicts(s, conflicts)
		s.failed = nil
	}
	if len(conflicts) == 0 {
		conflicts = nil
	}
	x := n.ext()
	x.namesMu.Lock()
	x.conflicts = conflicts
	x.namesMu.Unlock()
}

// taken reports whether a conflict copy in listing s may not show as name: a shown name must
// hide neither another copy (in found) nor a real entry, which exists exactly when the name's
// stored form does (names encrypt deterministically).
func (s *dirStream) taken(found map[string]storedEntry) func(string) bool {
	return func(name string) bool {
		if _, ok := found[name]; ok {
			return true
		}
		e, errno := s.n.fsys.tree.storedEntry(name, s.iv, false)
		var st unix.Stat_t
		return errno != 0 || unix.Fstatat(s.dir.fd, e.stored, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
	}
}

// hidden logs entry e of listing s, whose name does not decrypt, as hidden.
func (s *dirStream) hidden(e failedEntry) {
	s.n.fsys.log.Printf("vfs: directory inode %d: entry %q does not decrypt, hidden: %v", s.n.StableAttr().Ino, e.Name, e.err)
}
