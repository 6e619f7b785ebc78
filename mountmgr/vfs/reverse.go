package vfs

// Reverse mode: a read-only encrypted view of a plaintext folder in the gocryptfs v2 format,
// byte for byte what gocryptfs -reverse shows, for backups to storage that must not see the
// plaintext. It shares the name encryption (crypto.NameTransform, with the long-name rule of
// StoredName) and the content sealing (crypto.ContentEnc) with the forward mount; it has none
// of its write paths.
//
// Every IV is derived from the entry's path in the view (crypto.PathIV): a directory's name
// IV, a file's ID and block-0 nonce, a symlink target's nonce. The same plaintext at the same
// path gives the same bytes, so a second rsync or restic run only sends what changed. Inode
// numbers are derived from the path in the view too, like the content: a number always stands
// for the same bytes (gocryptfs #802 was stale cached content under a reused number), and
// they are the same on every mount. Hardlinked files get the IVs of their own path (gocryptfs
// gives every link those of whichever path was opened first, so its view depends on the order
// of access).
//
// The view of the plaintext folder DIR holds: DIR/.gocryptfs.reverse.conf as gocryptfs.conf
// at the root; every other entry under its encrypted name; in each directory a virtual
// gocryptfs.diriv (unless names are plaintext or deterministic); and for each name longer
// than the long-name limit a gocryptfs.longname.<hash> entry with its virtual .name file.
// Entries the exclusion rules leave out are in no listing and no lookup finds them.

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"log"
	"path"
	"strings"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/mountmgr/vfs/exclude"
	"github.com/vaultui/vaultui/vault/gocryptfs"
	"github.com/vaultui/vaultui/vault/layout"
)

// ReverseVolume is what a reverse view needs of an unlocked reverse config.
type ReverseVolume struct {
	// Dir is the plaintext folder.
	Dir string
	// Content must be AES-SIV: only it stays secure with derived nonces.
	Content *crypto.ContentEnc
	// Names is nil with PlaintextNames.
	Names *crypto.NameTransform
	// PerDirIV: names are encrypted under path-derived directory IVs, shown as virtual
	// gocryptfs.diriv files; false with deterministic names (all-zero IV, no diriv files).
	PerDirIV bool
	// Exclude leaves entries out of the view; nil leaves nothing out.
	Exclude *exclude.Rules
}

// virtualTimeShift is added to the mtime and ctime of the virtual gocryptfs.diriv and .name
// files, which take their times from the directory or file they describe: gocryptfs 2.5 did so
// that rsync copies them anew after 2.5 fixed their content (its #802); the same times keep
// the views identical to an rsync.
const virtualTimeShift = 10

// rfs is the state shared by every node of one reverse view.
type rfs struct {
	ReverseVolume     // PerDirIV false with plaintext names
	rootFd        int // the plaintext folder, O_PATH
	log           *log.Logger
	stats         *Counters
	zeroIV        []byte
}

// MountReverse mounts the read-only encrypted view of v.Dir at mountPoint. The caller keeps
// the keys alive until the file system is unmounted (Wait returns), then wipes them.
func MountReverse(mountPoint string, v ReverseVolume, opts Options) (*Mounted, error) {
	root, err := newReverseRoot(v, opts)
	if err != nil {
		return nil, err
	}
	opts.ReadOnly = true
	mopts := mountOptions(v.Dir, 1, opts, root.fs.log)
	mopts.DisableXAttrs = true
	server, err := fs.Mount(mountPoint, root, mopts)
	if err != nil {
		root.fs.close()
		return nil, fmt.Errorf("vfs: mounting %s: %w", mountPoint, err)
	}
	return &Mounted{Server: server, Counters: root.fs.stats, closeFS: root.fs.close}, nil
}

func newReverseRoot(v ReverseVolume, opts Options) (*rnode, error) {
	if v.Content == nil {
		return nil, fmt.Errorf("vfs: reverse view of %s: not unlocked", v.Dir)
	}
	if v.Content.Cipher() != crypto.AESSIV {
		return nil, fmt.Errorf("vfs: reverse view of %s: %s cannot be used with derived nonces, only AES-SIV", v.Dir, v.Content.Cipher())
	}
	lg := opts.Logger
	if lg == nil {
		lg = log.New(io.Discard, "", 0)
	}
	fd, err := unix.Open(v.Dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("vfs: opening %s: %w", v.Dir, err)
	}
	v.PerDirIV = v.Names != nil && v.PerDirIV
	f := &rfs{ReverseVolume: v, rootFd: fd, log: lg, stats: &Counters{}, zeroIV: make([]byte, crypto.DirIVLen)}
	return &rnode{fs: f, kind: kindDir}, nil
}

func (f *rfs) close() {
	if f.rootFd >= 0 {
		unix.Close(f.rootFd)
		f.rootFd = -1
	}
}

// ino is the inode number of the entry at cipherPath in the view: from its SHA-256, never 0
// or 1 (the root's).
func reverseIno(cipherPath string) uint64 {
	if cipherPath == "" {
		return 1
	}
	h := sha256.Sum256([]byte("vaultui reverse inode\x00" + cipherPath))
	if n := binary.BigEndian.Uint64(h[:8]); n > 1 {
		return n
	}
	return 2
}

// dirIV is the name IV of the directory at cipherPath in the view.
func (f *rfs) dirIV(cipherPath string) []byte {
	if !f.PerDirIV {
		return f.zeroIV
	}
	return crypto.PathIV(cipherPath, crypto.PurposeDirIV)
}

// openDir opens the plaintext directory dirPath (relative to the folder, "/"-separated; ""
// for the folder itself), walking it with O_NOFOLLOW.
func (f *rfs) openDir(dirPath string) (int, error) {
	fd, err := unix.Openat(f.rootFd, ".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if dirPath == "" || err != nil {
		return fd, err
	}
	for _, p := range strings.Split(dirPath, "/") {
		next, err := layout.OpenDirPath(fd, p)
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

// openParent opens the directory holding the plaintext entry plainPath (openDir) and returns
// it with the entry's name. The root itself is "" and comes back as the folder with name ".".
func (f *rfs) openParent(plainPath string) (dirfd int, name string, err error) {
	if plainPath == "" {
		fd, err := f.openDir("")
		return fd, ".", err
	}
	dir, name := path.Split(plainPath)
	fd, err := f.openDir(strings.TrimSuffix(dir, "/"))
	return fd, name, err
}

// lstat stats the plaintext entry plainPath without following a symlink.
func (f *rfs) lstat(plainPath string) (unix.Stat_t, error) {
	var st unix.Stat_t
	fd, name, err := f.openParent(plainPath)
	if err != nil {
		return st, err
	}
	defer unix.Close(fd)
	if name == "." {
		err = unix.Fstat(fd, &st)
	} else {
		err = unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	}
	return st, err
}

// visible reports whether the exclusion rules show the plaintext entry.
func (f *rfs) visible(plainPath string, mode uint32) bool {
	if plainPath == gocryptfs.ReverseConfName {
		return true // gocryptfs.conf is never excluded
	}
	return f.Exclude.Visible(plainPath, mode&syscall.S_IFMT == syscall.S_IFDIR)
}

// readlink returns the link target as the view shows it: encrypted under a nonce derived
// from the link's cipher path (see symlinkIVPath), or as is with plaintext names.
func (f *rfs) readlink(plainPath, cipherPath string) ([]byte, error) {
	fd, name, err := f.openParent(plainPath)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	target, err := layout.Readlink(fd, name)
	if err != nil || f.Names == nil {
		return target, err
	}
	c := f.Content.EncryptSymlinkIV(string(target), crypto.PathIV(symlinkIVPath(cipherPath), crypto.PurposeSymlinkIV))
	if len(c) > unix.PathMax {
		return nil, syscall.ENAMETOOLONG
	}
	return []byte(c), nil
}

// symlinkIVPath is the path a symlink target's nonce is derived from: the link's cipher path
// with its own name appended once more. That is what gocryptfs's view shows (2.3 and master:
// its Readlink joins the link node's path with the link's name), so it is the format.
func symlinkIVPath(cipherPath string) string {
	return path.Join(cipherPath, path.Base(cipherPath))
}

// attr fills out from the plaintext entry's stat as the view shows it: the inode number of
// its cipher path, the cipher size of a file, the length of a symlink's encrypted target.
func (f *rfs) attr(st *unix.Stat_t, plainPath, cipherPath string, out *fuse.Attr) error {
	statAttr(st, out)
	out.Ino = reverseIno(cipherPath)
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		out.Size = f.Content.CipherSize(uint64(st.Size))
	case syscall.S_IFLNK:
		t, err := f.readlink(plainPath, cipherPath)
		if err != nil {
			return err
		}
		out.Size = uint64(len(t))
	}
	return nil
}

// joinPath joins a relative path in the view or the folder with a name.
func joinPath(dir, name string) string {
	if dir == "" {
		return name
	}
	return path.Join(dir, name)
}
