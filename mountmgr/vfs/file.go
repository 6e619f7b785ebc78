package vfs

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
)

// file is an open file: a descriptor on the cipher file. Content operations take the node's
// lock, shared by every handle and hard link of the inode.
type file struct {
	node     *node
	fd       int
	writable bool
	closed   atomic.Bool // by Release, or by the mount's end (fsys.close), whichever is first
	readOnce atomic.Bool // a READ was served on this handle (noteRead)
}

var (
	_ = (fs.FileReader)((*file)(nil))
	_ = (fs.FileWriter)((*file)(nil))
	_ = (fs.FileFlusher)((*file)(nil))
	_ = (fs.FileFsyncer)((*file)(nil))
	_ = (fs.FileReleaser)((*file)(nil))
	_ = (fs.FileAllocater)((*file)(nil))
)

func procFdPath(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }

func (f *file) getattr(out *fuse.AttrOut) syscall.Errno { return f.node.fsys.fdAttr(f.fd, out) }

// pread reads until buf is full or the file ends.
func pread(fd int, buf []byte, off int64) (int, error) {
	done := 0
	for done < len(buf) {
		n, err := syscall.Pread(fd, buf[done:], off+int64(done))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return done, err
		}
		if n == 0 {
			break
		}
		done += n
	}
	return done, nil
}

func pwrite(fd int, buf []byte, off int64) error {
	for len(buf) > 0 {
		n, err := syscall.Pwrite(fd, buf, off)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		buf = buf[n:]
		off += int64(n)
	}
	return nil
}

// key returns the file's key from its header, read once and cached in the node while the
// file is open (see newFile). empty reports an empty cipher file (no header yet). The caller
// holds the node lock (shared is enough). With shared storage, another machine may empty the
// file and give it a new header at any time: the key is read every time, under the cipher
// lock.
func (f *file) key() (k fileKey, empty bool, errno syscall.Errno) {
	if p := f.node.ext().key.Load(); p != nil {
		return p.fileKey, false, 0
	}
	fsys := f.node.fsys
	buf := make([]byte, fsys.geo.HeaderLen)
	n, err := pread(f.fd, buf, 0)
	if err != nil {
		return nil, false, fs2errno(err)
	}
	if n == 0 {
		return nil, true, 0
	}
	k, err = fsys.content.openHeader(buf[:n])
	if err != nil {
		fsys.log.Printf("vfs: %s: bad file header: %v", f.node.cipherPath(), err)
		return nil, false, syscall.EIO
	}
	f.cacheKey(k)
	return k, false, 0
}

// sizes returns the cipher file's stat and the plaintext size. The caller holds the node lock.
func (f *file) sizes() (st unix.Stat_t, plainSize uint64, errno syscall.Errno) {
	if err := unix.Fstat(f.fd, &st); err != nil {
		return st, 0, fs2errno(err)
	}
	ps, ok := f.node.fsys.geo.PlainSize(st.Size)
	if !ok {
		f.node.fsys.log.Printf("vfs: %s: impossible cipher size %d", f.node.cipherPath(), st.Size)
		return st, 0, syscall.EIO
	}
	return st, uint64(ps), 0
}

// keyOrNew returns the key of a file of the given cipher size; for an empty one, a fresh key
// and the header that holds it, for the caller to write (writeHeader, or in one system call
// with the first block: writeRange).
func (f *file) keyOrNew(cipherSize uint64) (fileKey, []byte, syscall.Errno) {
	if cipherSize > 0 {
		k, _, errno := f.key()
		return k, nil, errno
	}
	k, h, err := f.node.fsys.content.newHeader()
	if err != nil {
		return nil, nil, syscall.EIO
	}
	f.cacheKey(k)
	return k, h, 0
}

// writeHeader writes header h into the empty cipher file.
func (f *file) writeHeader(h []byte) syscall.Errno {
	if err := pwrite(f.fd, h, 0); err != nil {
		unix.Ftruncate(f.fd, 0) // a torn header would make the file unreadable
		f.node.ext().key.Store(nil)
		return fs2errno(err)
	}
	return 0
}

// cachedKey boxes a file key for nodeExt's atomic pointer.
type cachedKey struct{ fileKey }

// cacheKey keeps the file's key in the node while it has handles, except with shared storage.
func (f *file) cacheKey(k fileKey) {
	if !f.node.fsys.opts.SharedStorage {
		f.node.ext().key.Store(&cachedKey{k})
	}
}

func (f *file) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	fsys := f.node.fsys
	var n int
	errno := f.withLocks(false, func() (errno syscall.Errno) {
		n, errno = f.read(dest, off)
		return errno
	})
	if errno != 0 {
		return nil, fsys.op(errno)
	}
	fsys.stats.BytesRead.Add(uint64(n))
	if !f.readOnce.Load() && !f.readOnce.Swap(true) {
		f.node.noteRead()
	}
	return fuse.ReadResultData(dest[:n]), fsys.op(0)
}

// noteRead is called on the first READ of each handle. A READ makes the kernel mark the
// file's access time stale (fuse_invalidate_atime), so its next stat costs a GETATTR even
// while its attributes are cached, as in "grep -r" a second time: a GETATTR per file. A
// listing with attributes (READDIRPLUS) refreshes them for a whole directory at once, so
// the kernel is told to drop the directory's cached listing (FOPEN_CACHE_DIR), once until it
// lists the directory again. In the background: the kernel may hold locks this READ waits on.
func (n *node) noteRead() {
	_, p := n.Parent()
	if p == nil {
		return
	}
	d, ok := p.Operations().(*node)
	if !ok || !d.keepsListing() || d.ext().childRead.Swap(true) {
		return
	}
	go p.NotifyContent(0, 0)
}

// read decrypts the blocks covering [off, off+len(dest)) in one batch into dest.
func (f *file) read(dest []byte, off int64) (int, syscall.Errno) {
	fsys := f.node.fsys
	if len(dest) == 0 || off < 0 {
		return 0, 0
	}
	k, empty, errno := f.key()
	if errno != 0 || empty {
		return 0, errno
	}
	bs := fsys.bs
	first := uint64(off) / bs
	last := (uint64(off) + uint64(len(dest)) - 1) / bs
	nb := int(last - first + 1)

	cb := fsys.getCipherBuf()
	defer fsys.putCipherBuf(cb)
	if cap(*cb) < nb*fsys.cbs {
		*cb = make([]byte, 0, nb*fsys.cbs)
	}
	cbuf := (*cb)[:nb*fsys.cbs]
	cn, err := pread(f.fd, cbuf, fsys.blockOff(first))
	if err != nil {
		return 0, fs2errno(err)
	}
	if cn == 0 {
		return 0, 0
	}
	skip := int(uint64(off) - first*bs)
	// Aligned reads (the kernel's usual) decrypt straight into dest.
	var plain []byte
	var pb *[]byte
	if skip == 0 && cap(dest) >= nb*int(bs) {
		plain = dest[:0]
	} else {
		pb = fsys.getPlainBuf()
		defer fsys.putPlainBuf(pb)
		plain = (*pb)[:0]
	}
	plain, err = k.open(plain, cbuf[:cn], first)
	if err != nil && fsys.opts.ForceDecode {
		plain, err = f.decryptZeroing(plain[:0], cbuf[:cn], first, k), nil
	}
	if err != nil {
		var be *crypto.BlockError
		if errors.As(err, &be) {
			cp := f.node.cipherPath()
			fsys.log.Printf("vfs: %s: block %d (plaintext bytes %d-%d) fails authentication; read of %d bytes at %d refused: %v",
				cp, be.Block, be.Block*bs, (be.Block+1)*bs-1, len(dest), off, be.Err)
			fsys.reportAuthFailure(cp, be.Block)
		} else {
			fsys.log.Printf("vfs: %s: reading %d bytes at %d: %v", f.node.cipherPath(), len(dest), off, err)
		}
		return 0, syscall.EIO
	}
	if skip >= len(plain) {
		return 0, 0
	}
	end := min(len(plain), skip+len(dest))
	if pb != nil {
		return copy(dest, plain[skip:end]), 0
	}
	return end, 0
}

// decryptZeroing decrypts ciphertext like DecryptBlocks, with zeros for the blocks that fail
// authentication (recovery mode, Options.ForceDecode), each logged with the cipher file's path
// and the block's offsets in it and in the plaintext, and reported.
func (f *file) decryptZeroing(dst, ciphertext []byte, first uint64, k fileKey) []byte {
	fsys := f.node.fsys
	bs := fsys.bs
	return k.openZeroing(dst, ciphertext, first, func(be *crypto.BlockError) {
		cp := f.node.cipherPath()
		fsys.log.Printf("vfs: %s: block %d (cipher bytes %d-%d, plaintext bytes %d-%d) fails authentication; read as zeros (forcedecode): %v",
			cp, be.Block, fsys.blockOff(be.Block), fsys.blockOff(be.Block+1)-1, be.Block*bs, (be.Block+1)*bs-1, be.Err)
		fsys.reportAuthFailure(cp, be.Block)
	})
}

func (f *file) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	fsys := f.node.fsys
	if off < 0 {
		return 0, fsys.op(syscall.EINVAL)
	}
	errno := f.withLocks(true, func() syscall.Errno { return f.write(data, uint64(off), unprivileged(ctx)) })
	if errno != 0 {
		return 0, fsys.op(errno)
	}
	fsys.stats.BytesWritten.Add(uint64(len(data)))
	return uint32(len(data)), fsys.op(0)
}

// write writes data at off; a write by an unprivileged caller drops setuid/setgid. The
// caller holds the node lock exclusively.
//
// A failed write leaves the file as it was. A failure half way through is rolled back to the
// old size and old partial last block (tailGuard), which is all that an append changes. A
// write that replaces older blocks could not be rolled back, and zeros padding a gap up to
// the write (a format without holes) could fill the disk before failing: these reserve their
// cipher space first, so that a full disk fails them before anything is written (reserve).
func (f *file) write(data []byte, off uint64, unprivileged bool) syscall.Errno {
	if len(data) == 0 {
		return 0
	}
	if f.node.fsys.tooBig(off + uint64(len(data))) {
		return syscall.EFBIG
	}
	st, size, errno := f.sizes()
	if errno != 0 {
		return errno
	}
	fsys := f.node.fsys
	if kill := suidBits(st.Mode); kill != 0 && unprivileged {
		if err := unix.Fchmod(f.fd, st.Mode&07777&^kill); err != nil {
			return fs2errno(err)
		}
	}
	bs := fsys.bs
	cs := uint64(st.Size)
	end := off + uint64(len(data))
	// Writing past the end: a partial last block must become a full one first, because only
	// the last block of a file may be short. The blocks in between stay holes where the
	// format has them; otherwise they are written as zeros, up to the block the data starts in.
	padEnd := off / bs * bs
	if fsys.content.holes() {
		padEnd = min(padEnd, fsys.roundUp(size))
	}
	pad := off > size && padEnd > size
	ahead := f.sealAhead(data, off, cs, size, pad)
	defer ahead.release()
	if off/bs < size/bs || pad {
		if errno := f.reserve(&st, size, off, end); errno != 0 {
			return errno
		}
	}
	if pad {
		if errno := f.reserve(&st, size, size, padEnd); errno != 0 {
			return errno
		}
	}
	g, errno := f.saveTail(cs, size, end)
	if errno != 0 {
		return errno
	}
	k, header, errno := f.keyOrNew(cs)
	if errno != 0 {
		return errno
	}
	if header != nil && pad {
		// The zeros up to the write go first, and the header before them.
		if errno := f.writeHeader(header); errno != 0 {
			return errno
		}
		header = nil
	}
	if pad {
		if errno := f.fillZeros(size, padEnd, k); errno != 0 {
			return g.restore(errno)
		}
		size = padEnd
	}
	if errno := f.writeRange(data, off, size, k, prepared{ahead: ahead, header: header, tail: g}); errno != 0 {
		return g.restore(errno)
	}
	return 0
}

// fillZeros writes zeros at the end of a file of plaintext size size, up to end, a request's
// worth at a time (a format without holes writes every block of a file grown by gigabytes).
func (f *file) fillZeros(size, end uint64, k fileKey) syscall.Errno {
	zeros := make([]byte, min(end-size, RequestMax))
	for size < end {
		n := min(end-size, uint64(len(zeros)))
		if errno := f.writeRange(zeros[:n], size, size, k, prepared{}); errno != 0 {
			return errno
		}
		size += n
	}
	return 0
}

// roundUp rounds n up to a whole number of blocks.
func (f *fsys) roundUp(n uint64) uint64 { return (n + f.bs - 1) / f.bs * f.bs }

// cipherSize is the size of the cipher file that holds plain cleartext bytes.
func (f *fsys) cipherSize(plain uint64) uint64 { return uint64(f.geo.CipherSize(int64(plain))) }

// pageAlignedWith returns an empty slice of buf that starts at the same offset within a 4 KiB
// page as file offset off, when buf has room for that (pool buffers have a page to spare).
// Ciphertext is written where pages do not begin (the header is 18 bytes and a cipher block
// more than 4096), and the kernel's copy into the page cache runs at half speed when its
// source lies a few bytes behind its destination modulo 4096: each load waits on the store
// just made to an address that looks the same ("4K aliasing"). With source and destination
// at the same page offset, pwrite of 1 MiB to tmpfs went from 850 to 1,500 MB/s.
func pageAlignedWith(buf []byte, off int64) []byte {
	// Unsigned arithmetic wraps modulo 2^64, a multiple of the page size.
	shift := int((uintptr(off) - uintptr(unsafe.Pointer(unsafe.SliceData(buf)))) % 4096)
	if shift >= cap(buf)/2 {
		return buf[:0]
	}
	return buf[shift:shift]
}

// reserve allocates the cipher bytes that writing plaintext [off, end) into a file of
// plaintext size size (not empty) will occupy, so that a full disk refuses the write with
// ENOSPC before any block changes. Overwriting allocated blocks needs nothing new and skips
// the system call.
func (f *file) reserve(st *unix.Stat_t, size, off, end uint64) syscall.Errno {
	fsys := f.node.fsys
	sparse := st.Blocks*512 < st.Size
	if end <= size && !sparse {
		return 0
	}
	cOff := uint64(fsys.blockOff(off / fsys.bs))
	// The last block written ends at the end of the data or, when it merges old content, at
	// the end of that block's old content.
	lastEnd := max(end, min(size, fsys.roundUp(end)))
	cEnd := fsys.cipherSize(lastEnd)
	if cEnd <= cOff {
		return 0
	}
	err := unix.Fallocate(f.fd, unix.FALLOC_FL_KEEP_SIZE, int64(cOff), int64(cEnd-cOff))
	if err != nil && err != unix.EOPNOTSUPP {
		// ext4 keeps what a failed fallocate did allocate past the end of the file until
		// the file is truncated: give it back.
		unix.Ftruncate(f.fd, st.Size)
		return fs2errno(err)
	}
	return 0
}

// tailGuard remembers what a write can damage beyond repair: the file's cipher size and the
// ciphertext of its old partial last block, which the write merges into a new block. It rolls
// back failures the daemon sees (an error returned by a system call); a crash leaves no one
// to roll back, so what a crash may leave is kept safe by the order of the system calls
// instead (see truncate).
type tailGuard struct {
	f          *file
	cipherSize uint64
	tailOff    int64
	tail       []byte
}

// saveTail prepares the rollback of a write of plaintext [off, end) into a file of the given
// cipher and plaintext sizes: it keeps the old partial last block if the write reaches it.
func (f *file) saveTail(cipherSize, size, end uint64) (tailGuard, syscall.Errno) {
	bs := f.node.fsys.bs
	if size%bs == 0 || (end-1)/bs < size/bs {
		return tailGuard{f: f, cipherSize: cipherSize}, 0
	}
	return f.saveBlock(cipherSize, size/bs)
}

// saveBlock prepares a rollback to the given cipher size that also restores block b's
// current ciphertext.
func (f *file) saveBlock(cipherSize, b uint64) (tailGuard, syscall.Errno) {
	g := tailGuard{f: f, cipherSize: cipherSize}
	g.tailOff = f.node.fsys.blockOff(b)
	g.tail = make([]byte, min(int64(f.node.fsys.cbs), int64(cipherSize)-g.tailOff))
	n, err := pread(f.fd, g.tail, g.tailOff)
	if err != nil {
		return g, fs2errno(err)
	}
	g.tail = g.tail[:n]
	return g, 0
}

// of returns the saved ciphertext of block b, or nil.
func (g tailGuard) of(b uint64) []byte {
	if g.tail == nil || g.tailOff != g.f.node.fsys.blockOff(b) {
		return nil
	}
	return g.tail
}

// restore puts the file back as it was and returns errno, the failure that needs it.
func (g tailGuard) restore(errno syscall.Errno) syscall.Errno {
	f := g.f
	if g.tail != nil {
		if err := pwrite(f.fd, g.tail, g.tailOff); err != nil {
			f.node.fsys.log.Printf("vfs: %s: restoring the last block after a failed write: %v", f.node.cipherPath(), err)
		}
	}
	if err := unix.Ftruncate(f.fd, int64(g.cipherSize)); err != nil {
		f.node.fsys.log.Printf("vfs: %s: restoring the size after a failed write: %v", f.node.cipherPath(), err)
	}
	if g.cipherSize == 0 {
		f.node.ext().key.Store(nil)
	}
	return errno
}

// mergesNothing reports whether writing plaintext [off, end) into a file of the given size
// replaces whole blocks only: it starts on a block boundary and ends on one or at or past the
// end of the file, so no old content has to be read and merged into its blocks.
func mergesNothing(off, end, size, bs uint64) bool {
	return off%bs == 0 && (end%bs == 0 || end >= size)
}

// sealAheadMin is the smallest write encrypted on another goroutine (see sealAhead): below
// it, waking another core costs more than it saves.
const sealAheadMin = 256 << 10

// aheadSeal is the ciphertext of a write's data, sealed on another goroutine while the write
// reserves space and checks the file. The kernel waits for each write request to be answered,
// so that work and the encryption would otherwise run one after the other, with a core idle.
type aheadSeal struct {
	fsys *fsys
	key  fileKey
	done chan struct{}
	cb   *[]byte
	ct   []byte
}

// sealAhead starts encrypting data, to be written at off into a file of the given cipher and
// plaintext sizes, when the write is large and merges nothing old (mergesNothing, and no pad:
// filling the file up to the write first). It needs the file's key, so only files with a
// header cached qualify. nil when the write does not qualify; release must be called either
// way.
func (f *file) sealAhead(data []byte, off, cipherSize, size uint64, pad bool) *aheadSeal {
	fsys := f.node.fsys
	p := f.node.ext().key.Load()
	if len(data) < sealAheadMin || p == nil || cipherSize == 0 || pad || !mergesNothing(off, off+uint64(len(data)), size, fsys.bs) {
		return nil
	}
	a := &aheadSeal{fsys: fsys, key: p.fileKey, done: make(chan struct{}), cb: fsys.getCipherBuf()}
	first := off / fsys.bs
	go func() {
		defer close(a.done)
		a.ct = a.key.seal(pageAlignedWith(*a.cb, fsys.blockOff(first)), data, first)
	}()
	return a
}

// sealed returns the ciphertext of data if it was sealed ahead under key k.
func (a *aheadSeal) sealed(k fileKey) ([]byte, bool) {
	if a == nil {
		return nil, false
	}
	<-a.done
	return a.ct, a.key == k
}

// release waits for the goroutine (data and the buffer stay in use until it is done) and
// returns the buffer.
func (a *aheadSeal) release() {
	if a == nil {
		return
	}
	<-a.done
	a.fsys.putCipherBuf(a.cb)
}

// prepared is what a write request has at hand for writeRange beyond its data: its ciphertext
// sealed ahead (may be nil), a new file's header to write with block 0 (see writeBlocks), and
// the old partial last block, read for the rollback, which need not be read again to merge.
type prepared struct {
	ahead  *aheadSeal
	header []byte
	tail   tailGuard
}

// writeRange encrypts data at off as whole blocks in one batch, merging the old contents of
// partially covered first and last blocks (size is the current plaintext size).
func (f *file) writeRange(data []byte, off, size uint64, k fileKey, p prepared) syscall.Errno {
	fsys := f.node.fsys
	bs := fsys.bs
	end := off + uint64(len(data))
	first, last := off/bs, (end-1)/bs
	base := first * bs
	extEnd := max(end, min(size, (last+1)*bs))
	l := int(extEnd - base)

	cOff := fsys.blockOff(first)
	var buf []byte
	if mergesNothing(off, end, size, bs) {
		// The usual large aligned write: encrypt data as it is.
		if ct, ok := p.ahead.sealed(k); ok && p.header == nil {
			return fs2errno(pwrite(f.fd, ct, cOff))
		}
		buf = data
	} else {
		pb := fsys.getPlainBuf()
		defer fsys.putPlainBuf(pb)
		if cap(*pb) < l {
			*pb = make([]byte, 0, l)
		}
		buf = (*pb)[:l]
		if errno := f.merge(buf, data, off, end, size, first, last, k, p.tail); errno != 0 {
			return errno
		}
	}

	cb := fsys.getCipherBuf()
	defer fsys.putCipherBuf(cb)
	return fs2errno(writeBlocks(k, f.fd, *cb, buf, first, fsys.blockOff(first), p.header))
}

// WriteBlocks encrypts plaintext as whole blocks, from block first of the file with ID id,
// into cb (which needs a page to spare, see pageAlignedWith) and writes them at their offset
// in the cipher file fd. It is the last step of every write request; the speed test (package
// app) times it to tell what a mount gains from a faster cipher on a given file system.
func WriteBlocks(enc *crypto.ContentEnc, fd int, cb, plaintext []byte, first uint64, id []byte) error {
	k := &gocryptfsKey{enc: enc}
	copy(k.id[:], id)
	return writeBlocks(k, fd, cb, plaintext, first, int64(enc.BlockCipherOffset(first)), nil)
}

// writeBlocks seals plaintext from block first under k and writes it at cOff, the block's
// offset in the cipher file fd. A new file's header, if not nil, is written first: in front of
// block 0 in the same system call (a write of its own cost as much as the block's, on tmpfs),
// in the room that cb has before the blocks (see pageAlignedWith), where there is room.
func writeBlocks(k fileKey, fd int, cb, plaintext []byte, first uint64, cOff int64, header []byte) error {
	dst := pageAlignedWith(cb, cOff)
	ct := k.seal(dst, plaintext, first)
	room := cap(cb) - cap(dst)
	if header == nil || first != 0 || room < len(header) || unsafe.SliceData(ct) != unsafe.SliceData(dst) {
		if header != nil {
			if err := pwrite(fd, header, 0); err != nil {
				return err
			}
		}
		return pwrite(fd, ct, cOff)
	}
	withHeader := cb[room-len(header) : room+len(ct)]
	copy(withHeader, header)
	return pwrite(fd, withHeader, cOff-int64(len(header)))
}

// merge lays data over the old contents of the partially covered first and last blocks in
// buf, which starts at block first; what neither covers is zero (a hole being filled). saved
// may hold the ciphertext of one of them.
func (f *file) merge(buf, data []byte, off, end, size, first, last uint64, k fileKey, saved tailGuard) syscall.Errno {
	bs := f.node.fsys.bs
	base := first * bs
	extEnd := base + uint64(len(buf))
	clear(buf[:off-base])
	clear(buf[end-base:])
	if off > base && base < size {
		if errno := f.readBlock(first, k, buf[:min(int(bs), len(buf))], saved.of(first)); errno != 0 {
			return errno
		}
	}
	if lastBase := last * bs; end < extEnd && lastBase < size && (last != first || off == base) {
		if errno := f.readBlock(last, k, buf[lastBase-base:], saved.of(last)); errno != 0 {
			return errno
		}
	}
	copy(buf[off-base:], data)
	return 0
}

// readBlock decrypts block b into dst (up to a block; a short last block fills less). c is the
// block's ciphertext if the caller has it, else nil: it is read.
func (f *file) readBlock(b uint64, k fileKey, dst, c []byte) syscall.Errno {
	fsys := f.node.fsys
	if c == nil {
		cb := fsys.getCipherBuf()
		defer fsys.putCipherBuf(cb)
		n, err := pread(f.fd, (*cb)[:fsys.cbs], fsys.blockOff(b))
		if err != nil {
			return fs2errno(err)
		}
		c = (*cb)[:n]
	}
	pb := fsys.getPlainBuf()
	defer fsys.putPlainBuf(pb)
	plain, err := k.open((*pb)[:0], c, b)
	if err != nil {
		cp := f.node.cipherPath()
		fsys.log.Printf("vfs: %s: block %d fails authentication; refusing to rewrite it: %v", cp, b, err)
		fsys.reportAuthFailure(cp, b)
		return syscall.EIO
	}
	copy(dst, plain)
	return 0
}

// truncate sets the plaintext size. Growing leaves holes (sparse cipher file) and writes only
// the partial last blocks; shrinking inside a block re-encrypts the new partial last block.
//
// What a crash (the daemon killed, the machine stopping) at any system call leaves: never a
// block that fails authentication, and every byte the file then holds is the old or the new
// file's byte at that offset. Exactly:
//   - cutting whole blocks, emptying, or growing within the last block: one system call, so
//     the old file or the new one;
//   - shrinking inside block b: the old file, the new one, or the new one cut back to block
//     b's start (the kept part of block b, at most 4095 bytes, lost). The new short block
//     occupies the cipher bytes of the old block's start, so in place one of them must go
//     before the other is written; cutting first, as gocryptfs does, loses only bytes that
//     were being cut back anyway, where writing first (the old order) tore block b;
//   - growing past the last block: the old file, the new one, or the old one with its partial
//     last block zero-filled to the block's end (a prefix of the new file).
//
// Errors inside the process (a full disk, an I/O error) are rolled back by a tailGuard.
func (f *file) truncate(newSize uint64) syscall.Errno {
	return f.withLocks(true, func() syscall.Errno { return f.truncateLocked(newSize) })
}

func (f *file) truncateLocked(newSize uint64) syscall.Errno {
	fsys := f.node.fsys
	bs := fsys.bs
	st, size, errno := f.sizes()
	if errno != 0 {
		return errno
	}
	cs := uint64(st.Size)
	switch {
	case newSize == size:
		return 0
	case newSize > size && fsys.tooBig(newSize):
		return syscall.EFBIG
	case newSize == 0:
		return f.empty(cs)
	case newSize < size && newSize%bs == 0:
		// Cutting whole blocks rewrites nothing.
		return fs2errno(unix.Ftruncate(f.fd, int64(fsys.cipherSize(newSize))))
	case newSize < size:
		return f.shrinkInBlock(cs, newSize)
	}
	// Growing: the old partial last block is written out in full, the new last block is
	// written if partial, and everything in between stays a hole where the format has them
	// (else it is written as zeros too).
	if !fsys.content.holes() {
		// Every block will be written: a growth the disk cannot hold fails at once (ENOSPC),
		// not after writing zeros until it is full, nor after allocating all it has.
		var sfs unix.Statfs_t
		if unix.Fstatfs(f.fd, &sfs) == nil && fsys.cipherSize(newSize)-cs > sfs.Bavail*uint64(sfs.Bsize) {
			return noRoomFor(f.fd, fsys.cipherSize(newSize))
		}
		if errno := f.reserve(&st, size, size, newSize); errno != 0 {
			return errno
		}
	}
	g, errno := f.saveTail(cs, size, newSize)
	if errno != 0 {
		return errno
	}
	k, header, errno := f.keyOrNew(cs)
	if errno == 0 && header != nil {
		errno = f.writeHeader(header) // an empty file gets its header on its own
	}
	if errno != 0 {
		return errno
	}
	fillEnd := min(fsys.roundUp(size), newSize)
	if !fsys.content.holes() {
		fillEnd = newSize
	}
	if fillEnd > size {
		if errno := f.fillZeros(size, fillEnd, k); errno != 0 {
			return g.restore(errno)
		}
		size = fillEnd
	}
	switch {
	case newSize == size:
		return 0
	case newSize%bs == 0:
		if err := unix.Ftruncate(f.fd, int64(fsys.cipherSize(newSize))); err != nil {
			return g.restore(fs2errno(err))
		}
		return 0
	}
	lastBase := newSize / bs * bs
	if errno := f.writeRange(make([]byte, newSize-lastBase), lastBase, size, k, prepared{}); errno != 0 {
		return g.restore(errno)
	}
	return 0
}

// empty truncates a file of cipher size cs to plaintext size 0: one system call. A format
// whose empty files have a header keeps the header there is (and the key it holds).
func (f *file) empty(cs uint64) syscall.Errno {
	keep := int64(0)
	if f.node.fsys.geo.EmptyHasHeader && cs >= uint64(f.node.fsys.geo.HeaderLen) {
		keep = int64(f.node.fsys.geo.HeaderLen)
	}
	if err := unix.Ftruncate(f.fd, keep); err != nil {
		return fs2errno(err)
	}
	if keep == 0 {
		f.node.ext().key.Store(nil)
	}
	return 0
}

// shrinkInBlock cuts a file of cipher size cs to newSize, which falls inside block b: the
// file is cut at block b's start, then the kept part of block b is appended, re-encrypted
// (see truncate for what a crash leaves). If the append fails, block b's old ciphertext is
// put back: the file then holds its old content up to block b's end, every byte readable.
func (f *file) shrinkInBlock(cs, newSize uint64) syscall.Errno {
	fsys := f.node.fsys
	bs := fsys.bs
	b := newSize / bs
	k, _, errno := f.key()
	if errno != 0 {
		return errno
	}
	keep := make([]byte, newSize-b*bs)
	if errno := f.readBlock(b, k, keep, nil); errno != 0 {
		return errno
	}
	g, errno := f.saveBlock(cs, b)
	if errno != 0 {
		return errno
	}
	g.cipherSize = uint64(g.tailOff) + uint64(len(g.tail)) // the blocks after b go either way
	if err := unix.Ftruncate(f.fd, g.tailOff); err != nil {
		return fs2errno(err)
	}
	ct := k.seal(nil, keep, b)
	if err := pwrite(f.fd, ct, g.tailOff); err != nil {
		return g.restore(fs2errno(err))
	}
	return 0
}

func (f *file) Allocate(ctx context.Context, off, size uint64, mode uint32) syscall.Errno {
	fsys := f.node.fsys
	if mode&^unix.FALLOC_FL_KEEP_SIZE != 0 {
		// Punching holes or zeroing ranges would need re-encryption of partial blocks.
		return fsys.op(syscall.EOPNOTSUPP)
	}
	if fsys.tooBig(off + size) {
		return fsys.op(syscall.EFBIG)
	}
	return fsys.op(f.withLocks(true, func() syscall.Errno {
		_, plainSize, errno := f.sizes()
		if errno != 0 {
			return errno
		}
		// Reserve the cipher blocks covering the range (header included) without changing the
		// cipher size, then grow the plaintext if asked to.
		cOff := uint64(0)
		if off > 0 {
			cOff = uint64(fsys.blockOff(off / fsys.bs))
		}
		cEnd := fsys.cipherSize(fsys.roundUp(off + size))
		if err := syscall.Fallocate(f.fd, unix.FALLOC_FL_KEEP_SIZE, int64(cOff), int64(cEnd-cOff)); err != nil && err != syscall.EOPNOTSUPP {
			return fs2errno(err)
		}
		if mode&unix.FALLOC_FL_KEEP_SIZE == 0 && off+size > plainSize {
			return f.truncateLocked(off + size)
		}
		return 0
	}))
}

// Flush has nothing to do (writes are synchronous); answering ENOSYS once tells the kernel to
// stop sending FLUSH on every close, one round trip less per file.
func (f *file) Flush(ctx context.Context) syscall.Errno { return syscall.ENOSYS }

func (f *file) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	return f.node.fsys.op(fs2errno(syscall.Fsync(f.fd)))
}

func (f *file) Release(ctx context.Context) syscall.Errno {
	return f.close()
}
