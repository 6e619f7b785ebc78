package gocryptfs

import (
	"fmt"
	"os"
	"path"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/format"
	"github.com/vaultui/vaultui/vault/layout"
)

// Volume is a gocryptfs vault as the walker reads it (format.Volume): the rules of
// walk.go, crypto and vault/layout behind the interface vault/cryptomator also implements.
type Volume struct {
	v *Vault
	// folder (if not nil) is called for each folder made on two computers, after the
	// folder's own node and before its entries (see format.ConflictFolderMadeTwice).
	folder func(SplitFolder) error
}

// Volume returns v as the walker reads it.
func (v *Vault) Volume() *Volume { return &Volume{v: v} }

// SplitVolume is Volume that also calls folder for each folder made on two computers, after
// the folder's own node and before its entries: what listing and settling conflicts walk.
func (v *Vault) SplitVolume(folder func(SplitFolder) error) *Volume {
	return &Volume{v: v, folder: folder}
}

// Vault is the unlocked vault g reads.
func (g *Volume) Vault() *Vault { return g.v }

// Ref reaches a gocryptfs entry during the walk's call for it: the descriptor of its
// directory and its stored name (see package layout: no string paths into the cipherdir).
type Ref struct {
	Dirfd int
	Name  string
}

// RefOf is where the gocryptfs node n is.
func RefOf(n format.Node) Ref { return n.Ref.(Ref) }

func (g *Volume) Folder() string { return g.v.Dir }

func (g *Volume) Geometry() format.Geometry {
	return format.Geometry{HeaderLen: crypto.HeaderLen, BlockSize: crypto.BlockSize, BlockOverhead: g.v.Content.BlockOverhead()}
}

// gocryptfsFile is one file's blocks, bound to the file ID of its header.
type gocryptfsFile struct {
	ce *crypto.ContentEnc
	id []byte
}

func (f gocryptfsFile) OpenBlocks(dst, cipher []byte, first uint64, bad func(uint64)) []byte {
	return f.ce.DecryptBlocksZeroing(dst, cipher, first, f.id, func(be *crypto.BlockError) { bad(be.Block) })
}

// OpenHeader parses the header; gocryptfs's header holds no MAC, so a damaged file ID shows
// when no block opens under it.
func (g *Volume) OpenHeader(b []byte) (format.FileCipher, error) {
	h, err := crypto.ParseFileHeader(b)
	if err != nil {
		return nil, err
	}
	return gocryptfsFile{ce: g.v.Content, id: h.ID[:]}, nil
}

func (g *Volume) Root() (format.Dir, error) {
	fd, err := unix.Open(g.v.Dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	return dirAt(fd, err, "", "")
}

// dirAt is the folder open at fd (unless err), at plaintext path p and cipher path cp, keyed
// by its identity (format.Dir.Key): its device and inode, the same whatever path or bind
// mount reached it. It closes fd when that fails.
func dirAt(fd int, err error, p, cp string) (format.Dir, error) {
	if err != nil {
		return format.Dir{}, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return format.Dir{}, err
	}
	return format.Dir{Path: p, CipherPath: cp, Ref: fd, Key: [2]uint64{st.Dev, st.Ino}}, nil
}

func (g *Volume) ReadDir(d format.Dir, showBadNames bool, problem func(format.Problem)) ([]format.Node, error) {
	nodes, split, ok := g.v.readDir(d.Ref.(int), d.CipherPath, d.Path, problem, showBadNames)
	if !ok {
		return nil, nil
	}
	if split != nil && g.folder != nil {
		if err := g.folder(*split); err != nil {
			return nil, err
		}
	}
	return nodes, nil
}

func (g *Volume) OpenDir(d format.Dir, n format.Node) (format.Dir, error) {
	at := RefOf(n)
	fd, err := layout.OpenDir(at.Dirfd, at.Name)
	return dirAt(fd, err, n.Path, n.CipherPath)
}

func (g *Volume) CloseDir(d format.Dir) { unix.Close(d.Ref.(int)) }

func (g *Volume) OpenFile(n format.Node) (*os.File, error) {
	at := RefOf(n)
	// The walk saw a regular file; by now the name may hold a FIFO (which would block the
	// open) or anything else: layout.OpenFile refuses it, naming what it is.
	fd, err := layout.OpenFile(at.Dirfd, at.Name, unix.O_RDONLY, 0, nil)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), n.CipherPath), nil
}

func (g *Volume) Readlink(n format.Node) (string, error) { return g.v.readSymlink(n) }

func (g *Volume) Xattrs(n format.Node, problem func(format.Problem)) map[string][]byte {
	return g.v.readXattrs(n, problem)
}

func (g *Volume) Count(counted func(size int64)) {
	if fd, err := unix.Open(g.v.Dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
		g.v.countIn(fd, "", counted)
		unix.Close(fd)
	}
}

// countIn counts the entries below the cipher directory open at dirfd (cdir) that the walk
// will visit, with their content (an estimate: undecryptable entries are counted too).
func (v *Vault) countIn(dirfd int, cdir string, counted func(size int64)) {
	names, err := layout.ReadDirNames(dirfd)
	if err != nil {
		return
	}
	for _, name := range names {
		if v.hidden(cdir, name) {
			continue
		}
		info, err := LstatAt(dirfd, name)
		var size int64
		if err == nil && info.Mode().IsRegular() {
			size = info.Size()
		}
		counted(size)
		if err != nil || !info.IsDir() {
			continue
		}
		if cfd, err := layout.OpenDir(dirfd, name); err == nil {
			v.countIn(cfd, path.Join(cdir, name), counted)
			unix.Close(cfd)
		}
	}
}

func (g *Volume) FormatName() string {
	return fmt.Sprintf("gocryptfs v%d, %s", g.v.Config.Version, g.v.Config.Cipher())
}

func (g *Volume) Close() { g.v.Close() }

// Paths maps paths with the vault's name keys (layout.PathNames).
func (g *Volume) Paths() format.PathMapper {
	return paths{dir: g.v.Dir, pn: g.v.PathNames()}
}

// paths is layout.PathNames on the vault's folder, opened for each path.
type paths struct {
	dir string
	pn  layout.PathNames
}

func (p paths) EncryptPath(plain string) (string, error) {
	return p.at(func(rootfd int) (string, error) { return p.pn.EncryptPath(rootfd, plain) })
}

func (p paths) DecryptPath(cipher string) (string, error) {
	return p.at(func(rootfd int) (string, error) { return p.pn.DecryptPath(rootfd, cipher) })
}

func (p paths) at(fn func(rootfd int) (string, error)) (string, error) {
	rootfd, err := unix.Open(p.dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", &os.PathError{Op: "open", Path: p.dir, Err: err}
	}
	defer unix.Close(rootfd)
	return fn(rootfd)
}
