package vfs

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
)

// cipherPath returns the path of n's cipher file, or ENOENT when n has been deleted.
func (n *node) cipherPath() (string, syscall.Errno) {
	var parts []string
	in := n.EmbeddedInode()
	for !in.IsRoot() {
		name, parent := in.Parent()
		if parent == nil {
			return "", syscall.ENOENT
		}
		pn := parent.Operations().(*node)
		stored, _, _, errno := pn.storedName(name)
		if errno != 0 {
			return "", errno
		}
		parts = append(parts, stored)
		in = parent
	}
	p := n.fsys.dir
	for i := len(parts) - 1; i >= 0; i-- {
		p += "/" + parts[i]
	}
	return p, 0
}

// iv returns the directory IV of directory node n, reading gocryptfs.diriv once.
func (n *node) iv() ([]byte, syscall.Errno) {
	if !n.fsys.dirIVs {
		return n.fsys.zeroIV, 0
	}
	if iv := n.dirIV.Load(); iv != nil {
		return iv[:], 0
	}
	dir, errno := n.cipherPath()
	if errno != 0 {
		return nil, errno
	}
	b, err := readDirIV(dir)
	if err != nil {
		n.fsys.log.Printf("vfs: reading the directory IV of %s: %v", dir, err)
		return nil, syscall.EIO
	}
	var iv [crypto.DirIVLen]byte
	copy(iv[:], b)
	n.dirIV.Store(&iv)
	return iv[:], 0
}

// storedName returns the on-disk name of child plain in directory n; long names also return
// the encoded name that goes into the .name file.
func (n *node) storedName(plain string) (stored, encoded string, long bool, errno syscall.Errno) {
	if n.fsys.names == nil {
		if n.IsRoot() && plain == crypto.ConfName {
			return "", "", false, syscall.EPERM
		}
		return plain, "", false, 0
	}
	n.namesMu.Lock()
	e, ok := n.names[plain]
	n.namesMu.Unlock()
	if ok {
		return e.stored, e.encoded, e.long, 0
	}
	iv, errno := n.iv()
	if errno != 0 {
		return "", "", false, errno
	}
	stored, encoded, long, err := n.fsys.names.StoredName(plain, iv)
	if err != nil {
		n.fsys.log.Printf("vfs: encrypting name %q: %v", plain, err)
		return "", "", false, syscall.EINVAL
	}
	n.cacheName(plain, storedEntry{stored: stored, encoded: encoded, long: long})
	return stored, encoded, long, 0
}

func (n *node) cacheName(plain string, e storedEntry) {
	n.namesMu.Lock()
	if n.names == nil || len(n.names) >= nameCacheMax {
		n.names = make(map[string]storedEntry)
	}
	n.names[plain] = e
	n.namesMu.Unlock()
}

// nameCacheMax bounds each directory's name cache; a full cache starts over.
const nameCacheMax = 4096

type storedEntry struct {
	stored, encoded string
	long            bool
}

// childPath returns the cipher path of child plain of directory n, and the long-name data.
type childRef struct {
	dir, stored, encoded string
	long                 bool
}

func (r childRef) path() string     { return r.dir + "/" + r.stored }
func (r childRef) namePath() string { return r.dir + "/" + r.stored + crypto.LongNameSuffix }

func (n *node) child(plain string) (childRef, syscall.Errno) {
	dir, errno := n.cipherPath()
	if errno != 0 {
		return childRef{}, errno
	}
	stored, encoded, long, errno := n.storedName(plain)
	if errno != 0 {
		return childRef{}, errno
	}
	return childRef{dir: dir, stored: stored, encoded: encoded, long: long}, 0
}

// writeLongName writes the .name file of a long name before the entry itself appears, as
// gocryptfs does. It reports whether it created the file (so a failure can remove it).
func writeLongName(r childRef) (created bool, errno syscall.Errno) {
	if !r.long {
		return false, 0
	}
	fd, err := syscall.Open(r.namePath(), syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, 0o400)
	if errors.Is(err, syscall.EEXIST) {
		// The entry exists already (rename over it, or a leftover): its .name file holds the
		// same encoded name, since the stored name is its hash.
		return false, 0
	}
	if err != nil {
		return false, fs2errno(err)
	}
	_, werr := syscall.Write(fd, []byte(r.encoded))
	cerr := syscall.Close(fd)
	if werr == nil {
		werr = cerr
	}
	if werr != nil {
		syscall.Unlink(r.namePath())
		return false, fs2errno(werr)
	}
	return true, 0
}

// removeLongName removes the .name file of a long name whose entry is gone.
func removeLongName(r childRef) {
	if r.long {
		syscall.Unlink(r.namePath())
	}
}

// readLongName reads the encoded name of a gocryptfs.longname.* entry in dir.
func readLongName(dir, stored string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, stored+crypto.LongNameSuffix))
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// writeDirIV creates the gocryptfs.diriv file of a new directory.
func writeDirIV(dir string) ([]byte, error) {
	iv := make([]byte, crypto.DirIVLen)
	if _, err := rand.Read(iv); err != nil {
		return nil, err
	}
	p := filepath.Join(dir, crypto.DirIVName)
	fd, err := syscall.Open(p, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, 0o440)
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", p, err)
	}
	_, werr := syscall.Write(fd, iv)
	if werr == nil {
		werr = unix.Fdatasync(fd)
	}
	cerr := syscall.Close(fd)
	if werr == nil {
		werr = cerr
	}
	if werr != nil {
		syscall.Unlink(p)
		return nil, fmt.Errorf("writing %s: %w", p, werr)
	}
	return iv, nil
}

// fs2errno converts an error from the host file system to an errno for FUSE.
func fs2errno(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return syscall.EIO
}

// readDirIV reads the gocryptfs.diriv file of a cipher directory.
func readDirIV(dir string) ([]byte, error) {
	p := filepath.Join(dir, crypto.DirIVName)
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	iv := make([]byte, crypto.DirIVLen+1)
	n, err := f.Read(iv)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if n != crypto.DirIVLen {
		return nil, fmt.Errorf("%s: %d bytes, want %d", p, n, crypto.DirIVLen)
	}
	return iv[:n], nil
}
