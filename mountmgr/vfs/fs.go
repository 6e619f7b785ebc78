// Package vfs is the FUSE file system of a mounted vault: a plaintext view of a cipherdir in
// the gocryptfs v2 format or Cryptomator's vault format 8, built on go-fuse's fs API. Every
// FUSE operation is written once; what the formats do differently is behind tree (tree.go:
// names, where an entry's object is, making, removing and renaming entries, capabilities) and
// contentFormat (content.go: headers, block geometry, holes).
//
// # Layout
//
// Every node is a [node]. Operations on the cipherdir run relative to directory descriptors,
// never on string paths (see dirs.go): a directory's descriptor is opened by walking the go-fuse
// inode tree to the root and opening each stored name with O_NOFOLLOW, each name encrypted
// under its directory's key (cached in the directory's node: a gocryptfs directory keeps its
// gocryptfs.diriv when renamed, a Cryptomator directory its ID; a Cryptomator directory whose
// ID is known is opened from the root directly). Open files are [file] handles that keep a
// file descriptor on the cipher file; a handle is always on its node's own file, even when a
// rename replaced the file under the node's name between the kernel's lookup and its open
// (node.openEntry). The daemon log gets cipher names and inode numbers, never plaintext names.
//
// # Contents
//
// Reads and writes are translated into whole blocks (4 KiB for gocryptfs, 32 KiB for
// Cryptomator) and encrypted or decrypted in one batch per request. A per-inode lock
// serialises writers (and truncation) against each other and against readers, so a reader
// never sees a torn block. A block that fails authentication fails the read with EIO and is
// logged with its path; its plaintext is never returned. In recovery mode
// (Options.ForceDecode, read-only) it reads as zeros instead, logged the same.
//
// # Formats
//
// Each vault format's Volume (formats.go: GocryptfsVolume, CryptomatorVolume; VolumeOf makes
// one of a vault.Volume) sets up its tree and content. formats.go, tree.go, tree_cryptomator.go
// and content.go are the only files that know which formats there are; the operations ask the
// tree's capabilities (hard links, special files).
//
// It imports crypto, vault (the unlocked Volume), vault/layout, vault/format,
// vault/gocryptfs (in its per-format files and the reverse view: the reverse config's name),
// vault/cryptomator (in its per-format files) and mountmgr/vfs/exclude;
// mountmgr, mountbench and app (the speed test's write path) import it.
package vfs

import (
	"fmt"
	"io"
	"log"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/format"
)

// Options configure a mount.
type Options struct {
	ReadOnly bool
	// AllowOther lets other users (root included) into the mount; off unless asked for.
	AllowOther bool
	// NoExec forbids running programs from the mount. nosuid and nodev always hold (go-fuse's
	// default mount flags, and fusermount's), as gocryptfs's defaults are.
	NoExec bool
	// Logger receives corruption reports and FUSE-level problems; nil discards them.
	Logger *log.Logger
	// Debug logs every FUSE request.
	Debug bool
	// AuthFailed, if set, is called (besides the log line) when a block fails
	// authentication, with the file's path inside the cipherdir (encrypted names) and the
	// block number. It runs on the request's goroutine: it must return quickly.
	AuthFailed func(cipherPath string, block uint64)
	// ForceDecode serves what a damaged vault still holds (recovery): a block that fails
	// authentication reads as zeros instead of failing the read with EIO. Each such block is
	// logged and reported (AuthFailed) all the same. Its unauthenticated decryption is never
	// returned. Only with ReadOnly: a write would merge the zeros into the file for good.
	ForceDecode bool
	// BadNames shows the entries whose names do not decrypt and whose cipher names match one
	// of these glob patterns (path.Match; "*" for all), as gocryptfs's -badname does, under
	// layout.BadName's name instead of hiding them.
	BadNames []string
	// cacheTimeout replaces the package's cacheTimeout when set: tests that count requests
	// hold the kernel to its caches however slow the machine is.
	cacheTimeout time.Duration
	// maxWatches, when set, stands for the fanotify mark limit: tests of what a mount does
	// past it.
	maxWatches int
	// watchOwn takes the process's own changes of the cipherdir for someone else's: tests
	// change it behind a mount from the process that serves the mount.
	watchOwn bool
	// SharedStorage is for a cipherdir that other machines use at the same time over network
	// storage, gocryptfs's -sharedstorage: the kernel caches no entries, attributes or file
	// contents, every directory entry is a node of its own (identity.go), and content
	// operations hold a lock on the cipher file (sharedlock.go). It costs speed, and hard
	// links show with separate nodes.
	SharedStorage bool
}

// Counters are a mount's live statistics, updated atomically on the hot path (mountmgr turns
// them into rates).
type Counters struct {
	BytesRead, BytesWritten, Ops, Errors atomic.Uint64
}

// Volume is what the file system needs of an unlocked vault: one implementation per format
// (GocryptfsVolume, CryptomatorVolume; VolumeOf makes one of a vault.Volume). vfs does not
// read a vault's configuration; the caller (package vault) did that.
type Volume interface {
	// CipherDir is the vault's folder.
	CipherDir() string
	// serve sets f up to serve the format: its tree, content, and the keys they use.
	serve(f *fsys) error
}

// Mounted is a live mount.
type Mounted struct {
	Server   *fuse.Server
	Counters *Counters
	root     *node // nil for a reverse view
	// closeFS releases the file system's descriptors once it is unmounted.
	closeFS func()
}

// DropOpenPages tells the kernel to drop the cached pages and attributes of every file open
// on the mount. A daemon that exits with files still open calls it first: the kernel keeps
// serving cached pages without asking the file system (on a watched local mount it drops them
// only when told), and those users must get "transport endpoint is not connected" rather
// than contents that nothing keeps current any more.
func (m *Mounted) DropOpenPages() {
	if m.root == nil {
		return
	}
	m.root.fsys.handles.Range(func(h, _ any) bool {
		if f, ok := h.(*file); ok {
			f.node.NotifyContent(0, 0)
		}
		return true
	})
}

// Wait blocks until the file system is unmounted.
func (m *Mounted) Wait() {
	m.Server.Wait()
	m.closeFS()
}

// cacheTimeout is how long the kernel may cache entries and attributes, and names that do
// not exist, where nothing tells it of changes behind the mount. Changes through this file
// system reach the kernel as they are made; with shared storage nothing is cached.
//
// watchedCacheTimeout is how long it may cache entries and attributes in directories whose
// changes behind the mount are told to it (watch.go), on a local cipherdir (localFS): repeated
// walks of a tree (git status, grep -r, a build) are then answered by the kernel alone. It is
// not longer because what the watcher misses (watch.go) stays wrong that long.
const (
	cacheTimeout        = time.Second
	watchedCacheTimeout = time.Minute
)

// Capabilities are the FUSE capabilities a mount asks for beyond go-fuse's own. O_TRUNC comes
// with OPEN (handled there) instead of a separate SETATTR round trip. HANDLE_KILLPRIV_V2: we
// drop setuid/setgid on writes ourselves (killSuid), and in exchange the kernel marks the
// mount SB_NOSEC, so it stops asking for security.capability with a GETXATTR before every
// write.
const Capabilities = fuse.CAP_ATOMIC_O_TRUNC | fuse.CAP_HANDLE_KILLPRIV_V2

// RequestMax is the largest write request we ask the kernel for, and the readahead window;
// the speed test (package app) writes in requests of this size, as a mount receives them.
const RequestMax = 1 << 20

// ReadMax is the largest read request. Smaller than RequestMax so that a read's ciphertext,
// its plaintext and the reply copy stay in a core's L2 cache (512 KiB on this project's test
// machine) between the pread, the decryption and the copy into FUSE's pages; the 1 MiB
// readahead window keeps four such requests in flight. dd of 512 MiB, 16 interleaved
// rounds: 1085 MB/s with 1 MiB reads, 1201 with 256 KiB, and 8% less daemon CPU.
const ReadMax = 256 << 10

// ReadMaxOption is the mount option that caps read requests at ReadMax (go-fuse puts
// max_read=MaxWrite first; the kernel takes the last one given).
var ReadMaxOption = fmt.Sprintf("max_read=%d", ReadMax)

// mountOptions are the options of a mount of the directory fsName whose root has the inode
// number rootIno, as far as the forward and the reverse mount share them.
func mountOptions(fsName string, rootIno uint64, opts Options, lg *log.Logger) *fs.Options {
	timeout := cacheTimeout
	if opts.cacheTimeout > 0 {
		timeout = opts.cacheTimeout
	}
	if opts.SharedStorage {
		timeout = 0
	}
	mo := fuse.MountOptions{
		AllowOther:   opts.AllowOther,
		FsName:       fsName,
		Name:         "vaultui",
		MaxReadAhead: RequestMax,
		DirectMount:  true,
		Debug:        opts.Debug,
		Logger:       lg,
	}
	// The kernel's own permission checks (default_permissions) only matter when other users
	// come in. Without allow_other the kernel lets only the mount's owner in, and the daemon
	// runs as that owner, so the cipherdir applies the same checks to our syscalls. Asking the
	// kernel to check costs a GETATTR of the parent directory per create and per unlink (each
	// one invalidates the directory's cached attributes). gocryptfs does the same.
	if opts.AllowOther {
		mo.Options = append(mo.Options, "default_permissions")
	}
	mo.Options = append(mo.Options, ReadMaxOption)
	if opts.ReadOnly {
		mo.Options = append(mo.Options, "ro")
	}
	if opts.NoExec {
		mo.Options = append(mo.Options, "noexec")
	}
	return &fs.Options{
		MountOptions:    mo,
		EntryTimeout:    &timeout,
		AttrTimeout:     &timeout,
		NegativeTimeout: &timeout,
		RootStableAttr:  &fs.StableAttr{Ino: rootIno, Mode: syscall.S_IFDIR},
		Logger:          lg,
		// Modes are the stored files' own: a file created with mode 0 shows as 0000.
		NullPermissions: true,
	}
}

// Mount mounts v at mountPoint and returns once the mount is usable. The caller keeps the keys
// alive until the file system is unmounted (Wait returns), then wipes them.
func Mount(mountPoint string, v Volume, opts Options) (*Mounted, error) {
	root, err := newRoot(v, opts)
	if err != nil {
		return nil, err
	}
	mopts := mountOptions(v.CipherDir(), root.fsys.rootIno, opts, root.fsys.log)
	mo := &mopts.MountOptions
	mo.MaxWrite = RequestMax
	mo.DisableXAttrs = root.fsys.xattrNames == nil
	// Reads return decrypted data from memory, never a descriptor: splice cannot work, and
	// go-fuse would log its failed attempt once per request.
	mo.DisableSplice = true
	// File locks (POSIX and flock) stay in the kernel (EnableLocks false), which keeps them on
	// the mount's inodes with their exact semantics (a POSIX lock belongs to its process,
	// flock to its open file), as on a local file system and in gocryptfs; every locker goes
	// through this mount, so nothing else needs to see them. Forwarding them cost a round
	// trip per lock call: 9 of an SQLite transaction's 38 requests.
	mo.EnableLocks = false
	mo.ExtraCapabilities = Capabilities
	if opts.SharedStorage {
		// Opens are direct I/O (node.Open); this keeps shared mmap working on them (Linux 6.6+).
		mo.ExtraCapabilities |= fuse.CAP_DIRECT_IO_ALLOW_MMAP
	}
	mo.MaxBackground = 64
	if !opts.SharedStorage { // other machines' changes: fanotify does not see them (watch.go)
		root.fsys.watch = newWatcher(root.fsys, root, opts)
	}
	// A watched mount tells the kernel itself when a file's pages go stale (watch.go), so the
	// kernel need not drop them whenever it sees a new size or modification time
	// (AUTO_INVAL_DATA), which mostly come from the mount's own writes, whose pages it has.
	// Such a drop is also unsafe: while one process reads a file and another extends it, the
	// reader can copy a page dropped just before the write together with the size after it,
	// and return zeros no one wrote (TestAtomicSaves, run long: 9 reads in 30 minutes before,
	// none since; TestOwnWriteKeepsPages).
	// Only on a local cipherdir: fanotify does not see what other machines change on a network
	// file system, where the kernel's own drops are all there is.
	root.fsys.pagesTold = root.fsys.watch != nil && localFS(root.fsys.rootFd)
	mo.ExplicitDataCacheControl = root.fsys.pagesTold
	if root.fsys.pagesTold && opts.cacheTimeout == 0 {
		long := watchedCacheTimeout
		mopts.EntryTimeout, mopts.AttrTimeout = &long, &long
		root.fsys.longCache = true
	}
	server, err := fs.Mount(mountPoint, root, mopts)
	if err != nil {
		root.fsys.close()
		return nil, fmt.Errorf("vfs: mounting %s: %w", mountPoint, err)
	}
	if w := root.fsys.watch; w != nil {
		w.start()
	}
	if err := RaiseReadahead(mountPoint); err != nil {
		root.fsys.log.Printf("vfs: %s: reads stay at the kernel's default readahead (128 KiB requests): %v", mountPoint, err)
	}
	return &Mounted{Server: server, Counters: root.fsys.stats, root: root, closeFS: root.fsys.close}, nil
}

func newRoot(v Volume, opts Options) (*node, error) {
	if v == nil {
		return nil, fmt.Errorf("vfs: vault is not unlocked")
	}
	if opts.ForceDecode && !opts.ReadOnly {
		return nil, fmt.Errorf("vfs: forced decoding needs a read-only mount")
	}
	for _, p := range opts.BadNames {
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("vfs: bad-name pattern %q: %w", p, err)
		}
	}
	lg := opts.Logger
	if lg == nil {
		lg = log.New(io.Discard, "", 0)
	}
	dir := v.CipherDir()
	rootFd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("vfs: opening %s: %w", dir, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(rootFd, &st); err != nil {
		unix.Close(rootFd)
		return nil, fmt.Errorf("vfs: %s: %w", dir, err)
	}
	f := &fsys{
		dir:     dir,
		rootFd:  rootFd,
		rootDir: rootFd,
		rootDev: st.Dev,
		rootIno: st.Ino,
		umask:   processUmask(),
		log:     lg,
		opts:    opts,
		stats:   &Counters{},
		asRoot:  syscall.Geteuid() == 0,
		zeroIV:  make([]byte, crypto.DirIVLen),
	}
	if err := v.serve(f); err != nil {
		unix.Close(rootFd)
		return nil, fmt.Errorf("vfs: %s: %w", dir, err)
	}
	f.xattrAt = f.xattrNames != nil && probeXattrAt(rootFd)
	f.geo = f.content.geometry()
	f.bs, f.cbs = uint64(f.geo.BlockSize), f.geo.CipherBlockSize()
	// Room for a request's blocks, two more for unaligned ends, and a page for pageAlignedWith.
	f.cipherPool.New = func() any { b := make([]byte, 0, (RequestMax/f.geo.BlockSize+2)*f.cbs+4096); return &b }
	f.plainPool.New = func() any { b := make([]byte, 0, RequestMax+2*f.geo.BlockSize); return &b }
	return &node{fsys: f}, nil
}

// processUmask reads the umask without changing it (umask(2) can only swap it, which would
// race with other goroutines creating files).
func processUmask() uint32 {
	b, err := os.ReadFile("/proc/self/status")
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Umask:"); ok {
				if m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
					return uint32(m)
				}
			}
		}
	}
	return 0o777 // unknown: always set the mode again
}

// fsys is the state shared by every node of one mount.
type fsys struct {
	dir string
	// rootFd is the cipherdir, opened once (it may be reached through a symlink; nothing
	// below it is); rootDev and rootIno are its device and inode number. rootDir is the
	// folder of the root directory's entries: rootFd itself, or Cryptomator's d/XX/YYYY.
	rootFd, rootDir  int
	rootDev, rootIno uint64
	dirs             dirCache
	closeOnce        sync.Once
	// handles are the open files (*file) and directories (*dirHandle). A RELEASE the kernel had queued when the mount
	// ended never comes; close closes what is left, so a long-lived daemon neither leaks
	// the descriptors nor keeps the cipherdir's file system busy (it could not be unmounted).
	handles sync.Map
	// umask is this process's umask. The kernel has applied the caller's umask to every mode
	// it sends; where ours would strip more bits, a new entry's mode is set again.
	umask uint32
	enc   *crypto.ContentEnc    // a gocryptfs vault's (nil for Cryptomator)
	names *crypto.NameTransform // a gocryptfs vault's; nil with PlaintextNames and for Cryptomator
	// tree and content are the vault format's cipher tree and file contents (tree.go,
	// content.go); geo is content's geometry, bs and cbs its cleartext and sealed block sizes.
	tree       tree
	content    contentFormat
	geo        format.Geometry
	bs         uint64
	plainNames bool // a gocryptfs vault with PlaintextNames: names are stored as they are
	// xattrNames encrypts extended attribute names; nil when they are off.
	xattrNames  *crypto.NameTransform
	xattrStored xattrNameCache
	storedNames storedNameCache // stored names of plain names, all directories
	xattrAt     bool            // the kernel has the *xattrat calls (see xattrat.go)
	perDirIV    bool            // per-directory IVs (false: deterministic names, zero IV)
	log         *log.Logger
	opts        Options
	watch       *watcher      // nil: no changes behind the mount are seen (watch.go)
	longCache   bool          // watched directories' entries are cached for watchedCacheTimeout
	pagesTold   bool          // the kernel drops a file's pages only when told (ExplicitDataCacheControl)
	gen         atomic.Uint64 // node generations with shared storage
	noLocks     sync.Once     // logs that the cipherdir refuses locks
	stats       *Counters
	cbs         int
	asRoot      bool
	zeroIV      []byte

	cipherPool, plainPool sync.Pool
}

// reportAuthFailure hands a block that failed authentication to Options.AuthFailed.
// cipherPath is as node.cipherPath gives it for log lines (quoted); the callback gets the
// path itself, and escapes it wherever it shows it.
func (f *fsys) reportAuthFailure(cipherPath string, block uint64) {
	if f.opts.AuthFailed == nil {
		return
	}
	if p, err := strconv.Unquote(cipherPath); err == nil {
		cipherPath = p
	}
	f.opts.AuthFailed(cipherPath, block)
}

// showsBadName reports whether an entry whose stored name does not decrypt is shown
// (Options.BadNames).
func (f *fsys) showsBadName(stored string) bool {
	for _, p := range f.opts.BadNames {
		if ok, _ := path.Match(p, stored); ok {
			return true
		}
	}
	return false
}

// op counts one operation and, when it failed unexpectedly, one error.
func (f *fsys) op(errno syscall.Errno) syscall.Errno {
	f.stats.Ops.Add(1)
	switch errno {
	case 0, syscall.ENOENT, syscall.EEXIST, syscall.ENOTEMPTY, syscall.ENODATA, syscall.ENOTSUP:
	default:
		f.stats.Errors.Add(1)
	}
	return errno
}

// close releases the mount's descriptors once it is unmounted; later calls do nothing.
func (f *fsys) close() {
	f.closeOnce.Do(func() {
		f.handles.Range(func(h, _ any) bool {
			h.(interface{ close() syscall.Errno }).close()
			return true
		})
		if f.watch != nil {
			f.watch.close()
		}
		f.dirs.dropAll()
		if f.rootDir != f.rootFd {
			unix.Close(f.rootDir)
		}
		unix.Close(f.rootFd)
	})
}

// blockOff is the offset of cipher block b in a cipher file: after the header, blocks of cbs.
func (f *fsys) blockOff(b uint64) int64 { return int64(f.geo.HeaderLen) + int64(b)*int64(f.cbs) }

func (f *fsys) getCipherBuf() *[]byte { return f.cipherPool.Get().(*[]byte) }
func (f *fsys) getPlainBuf() *[]byte  { return f.plainPool.Get().(*[]byte) }
func (f *fsys) putCipherBuf(b *[]byte) {
	*b = (*b)[:0]
	f.cipherPool.Put(b)
}
func (f *fsys) putPlainBuf(b *[]byte) {
	*b = (*b)[:0]
	f.plainPool.Put(b)
}

// RaiseReadahead lets the kernel keep RequestMax of reads in flight: FUSE caps a mount's
// readahead at the default 128 KiB whatever max_readahead says, and each request costs a round
// trip.
// Only root may write the mount's bdi setting; others keep the default.
func RaiseReadahead(mountPoint string) error {
	var st syscall.Stat_t
	if err := syscall.Stat(mountPoint, &st); err != nil {
		return err
	}
	p := fmt.Sprintf("/sys/class/bdi/%d:%d/read_ahead_kb", unix.Major(st.Dev), unix.Minor(st.Dev))
	return os.WriteFile(p, []byte(strconv.Itoa(RequestMax/1024)), 0)
}
