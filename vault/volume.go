package vault

import (
	"fmt"
	"os"
	"path"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/format"
	"github.com/vaultui/vaultui/vault/layout"
)

// gocryptfsVolume is a gocryptfs vault as the walker reads it (format.Volume): the rules of
// walk.go, crypto and vault/layout behind the interface vault/cryptomator also implements.
type gocryptfsVolume struct {
	v *Vault
	// folder (if not nil) is called for each folder made on two computers, after the
	// folder's own node and before its entries (see ConflictFolderMadeTwice).
	folder func(splitFolder) error
}

// Volume returns v as the walker reads it.
func (v *Vault) Volume() format.Volume { return gocryptfsVolume{v: v} }

// gocryptfsRef reaches a gocryptfs entry during the walk's call for it: the descriptor of its
// directory and its stored name (see package layout: no string paths into the cipherdir).
type gocryptfsRef struct {
	dirfd int
	name  string
}

// refOf is where the gocryptfs node n is.
func refOf(n Node) gocryptfsRef { return n.Ref.(gocryptfsRef) }

func (g gocryptfsVolume) Folder() string { return g.v.Dir }

func (g gocryptfsVolume) Geometry() format.Geometry {
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
func (g gocryptfsVolume) OpenHeader(b []byte) (format.FileCipher, error) {
	h, err := crypto.ParseFileHeader(b)
	if err != nil {
		return nil, err
	}
	return gocryptfsFile{ce: g.v.Content, id: h.ID[:]}, nil
}

func (g gocryptfsVolume) Root() (format.Dir, error) {
	fd, err := unix.Open(g.v.Dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return format.Dir{}, err
	}
	key, err := folderKey(fd)
	if err != nil {
		unix.Close(fd)
		return format.Dir{}, err
	}
	return format.Dir{Ref: fd, Key: key}, nil
}

// folderKey is the identity of the folder open at fd (format.Dir.Key): its device and inode,
// the same whatever path or bind mount reached it.
func folderKey(fd int) ([2]uint64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return [2]uint64{}, err
	}
	return [2]uint64{st.Dev, st.Ino}, nil
}

func (g gocryptfsVolume) ReadDir(d format.Dir, showBadNames bool, problem func(Problem)) ([]Node, error) {
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

func (g gocryptfsVolume) OpenDir(d format.Dir, n Node) (format.Dir, error) {
	at := refOf(n)
	fd, err := layout.OpenDir(at.dirfd, at.name)
	if err != nil {
		return format.Dir{}, err
	}
	key, err := folderKey(fd)
	if err != nil {
		unix.Close(fd)
		return format.Dir{}, err
	}
	return format.Dir{Path: n.Path, CipherPath: n.CipherPath, Ref: fd, Key: key}, nil
}

func (g gocryptfsVolume) CloseDir(d format.Dir) { unix.Close(d.Ref.(int)) }

func (g gocryptfsVolume) OpenFile(n Node) (*os.File, error) {
	at := refOf(n)
	// The walk saw a regular file; by now the name may hold a FIFO (which would block the
	// open) or anything else: layout.OpenFile refuses it, naming what it is.
	fd, err := layout.OpenFile(at.dirfd, at.name, unix.O_RDONLY, 0, nil)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), n.CipherPath), nil
}

func (g gocryptfsVolume) Readlink(n Node) (string, error) { return g.v.readSymlink(n) }

func (g gocryptfsVolume) Xattrs(n Node, problem func(Problem)) map[string][]byte {
	return g.v.readXattrs(n, problem)
}

func (g gocryptfsVolume) Count(counted func(size int64)) {
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
		info, err := lstatAt(dirfd, name)
		if err != nil {
			counted(0)
			continue
		}
		counted(contentSize(info))
		if !info.IsDir() {
			continue
		}
		if cfd, err := layout.OpenDir(dirfd, name); err == nil {
			v.countIn(cfd, path.Join(cdir, name), counted)
			unix.Close(cfd)
		}
	}
}

func (g gocryptfsVolume) FormatName() string {
	return fmt.Sprintf("gocryptfs v%d, %s", g.v.Config.Version, g.v.Config.Cipher())
}

func (g gocryptfsVolume) Close() { g.v.Close() }
