// Package format is what the offline walker (package vault: WalkVolume, FsckVolume,
// ExportVolume) needs of a vault format, so that one walker serves both formats vaultui
// reads: gocryptfs (package vault/gocryptfs) and Cryptomator (package vault/cryptomator). It
// is the walker's half of the design in vault/cryptomator's package doc (issue 23); the mount
// (mountmgr/vfs) has interfaces of its own, over descriptors, and shares Geometry.
//
// A format gives its Geometry (how cleartext maps onto a cipher file), opens a file's content
// cipher from its header, lists a directory as Nodes with the Problems it met, finds a child
// directory from its parent (gocryptfs: the folder of the encrypted name; Cryptomator: the
// d/XX/YYYY folder its dir.c9r names) and reads symlink targets. The rest is written once:
// the walk itself (Walk, here), and in package vault reading and checking every block,
// progress, writing an export and listing conflict copies. It also holds what the format
// packages and package vault share without importing each other: the sentinel errors, which
// package vault's are.
//
// It imports vault/layout (for the sync-conflict description and ErrCorrupt) and nothing of
// vault; vault and the format packages import it.
package format

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strings"

	"github.com/vaultui/vaultui/vault/layout"
)

// The sentinels every format's errors wrap, so that package vault's (which are these) test
// alike whichever format package made the error. Package vault documents them; its
// ErrCorrupt is layout.ErrCorrupt.
var (
	ErrWrongPassword   = errors.New("wrong password")
	ErrNotFound        = errors.New("no vault found")
	ErrNotEmpty        = errors.New("directory is not empty")
	ErrUnsupported     = errors.New("unsupported vault feature")
	ErrKeyUnverifiable = errors.New("the master key cannot be verified")
)

// Geometry is how a file's cleartext maps onto its cipher file: a header, then blocks of up
// to BlockSize cleartext bytes, each BlockOverhead bytes longer when sealed (gocryptfs:
// 18, 4096 and its cipher's overhead; Cryptomator SIV_GCM: 68, 32768, 28).
type Geometry struct {
	HeaderLen, BlockSize, BlockOverhead int
	// EmptyHasHeader: an empty file is written as its header alone (Cryptomator); without
	// it an empty file is 0 bytes (gocryptfs). Either format reads both as empty.
	EmptyHasHeader bool
}

// CipherBlockSize is the size of a full sealed block.
func (g Geometry) CipherBlockSize() int { return g.BlockSize + g.BlockOverhead }

// CipherSize is the size of the cipher file that holds plain cleartext bytes.
func (g Geometry) CipherSize(plain int64) int64 {
	if plain == 0 && !g.EmptyHasHeader {
		return 0
	}
	bs, oh := int64(g.BlockSize), int64(g.BlockOverhead)
	n := int64(g.HeaderLen) + plain/bs*(bs+oh)
	if rest := plain % bs; rest > 0 {
		n += rest + oh
	}
	return n
}

// MaxPlainSize is the largest cleartext size a file of the format can have: the largest
// whose cipher file has a size an int64 counts (Linux's largest file, MAX_LFS_FILESIZE). The
// cipherdir's own file system may hold less; it says so itself (EFBIG).
func (g Geometry) MaxPlainSize() int64 {
	body := uint64(math.MaxInt64) - uint64(g.HeaderLen)
	bs, cbs := uint64(g.BlockSize), uint64(g.CipherBlockSize())
	n := body / cbs * bs
	if rest := body % cbs; rest > uint64(g.BlockOverhead) {
		n += rest - uint64(g.BlockOverhead)
	}
	return int64(n)
}

// PlainSize is the cleartext size of a cipher file of cipher bytes; false when no cleartext
// size maps to it (a torn header, or a last block too short to hold its overhead). A 0-byte
// file and a header alone are empty files in both formats: gocryptfs writes the header before
// the first block, and Cryptomator creates a file before its first write.
func (g Geometry) PlainSize(cipher int64) (int64, bool) {
	if cipher == 0 {
		return 0, true
	}
	if cipher < int64(g.HeaderLen) {
		return 0, false
	}
	bs, cbs := int64(g.BlockSize), int64(g.CipherBlockSize())
	body := cipher - int64(g.HeaderLen)
	n := body / cbs * bs
	if rest := body % cbs; rest > 0 {
		if rest <= int64(g.BlockOverhead) {
			return 0, false
		}
		n += rest - int64(g.BlockOverhead)
	}
	return n, true
}

// FileCipher is one file's content key, opened from its header.
type FileCipher interface {
	// OpenBlocks appends to dst the cleartext of cipher, sealed blocks numbered from first
	// (all full but perhaps the last). A block that does not authenticate is appended as
	// zeros of its cleartext length, never as its unauthenticated decryption, and its number
	// is passed to bad.
	OpenBlocks(dst, cipher []byte, first uint64, bad func(block uint64)) []byte
}

// Dir is a directory being walked: its plaintext path and a label of its cipher folder (both
// slash-separated, relative to the vault's folder; "" is the root), and the format's handle
// of it (gocryptfs: an open descriptor; Cryptomator: its ID and d/ folder), valid until
// Volume.CloseDir.
type Dir struct {
	Path, CipherPath string
	Ref              any
	// Key is the identity of the cipher folder, comparable: two Dirs of one vault with equal
	// Keys are one folder (gocryptfs: its device and inode; Cryptomator: its d/XX/YYYY path,
	// which its ID gives). The walker enters a folder once (see Walk); nil is never compared.
	Key any
}

// Node is one entry of the decrypted tree.
type Node struct {
	Path       string      // plaintext path, slash-separated, relative to the root
	CipherPath string      // where it is in the vault's folder, slash-separated (a label: it may exceed PATH_MAX)
	Info       fs.FileInfo // the cipher entry's stat, with the entry's type (a Cryptomator symlink is a folder)
	// Conflict is set for a sync tool's conflict copy; Path is then the name it shows under.
	Conflict *Conflict
	// Ref is the format's handle of the entry, valid while its directory is open.
	Ref any
}

// Volume is an unlocked vault of some format, as the walker reads it.
type Volume interface {
	// Folder is the vault's folder (the cipherdir), for messages and for refusing to
	// export into it.
	Folder() string
	Geometry() Geometry
	// OpenHeader opens a file's content key from its header (HeaderLen bytes); an error
	// means the header is damaged.
	OpenHeader(b []byte) (FileCipher, error)
	// Root opens the root directory.
	Root() (Dir, error)
	// ReadDir lists d in plaintext name order, with the sync tools' conflict copies under the
	// names they show as, and reports to problem what it cannot read (a name that does not
	// decrypt, a damaged directory ID or IV, ...). With showBadNames, entries whose names do
	// not decrypt are listed too, under a name that says so, if the format can name them.
	// A directory it cannot read at all is reported and gives no nodes. The error is only
	// what ends the walk.
	ReadDir(d Dir, showBadNames bool, problem func(Problem)) ([]Node, error)
	// OpenDir opens the directory n of d (the parent-directory lookup).
	OpenDir(d Dir, n Node) (Dir, error)
	CloseDir(d Dir)
	// OpenFile opens the cipher file of the regular file n for reading.
	OpenFile(n Node) (*os.File, error)
	// Readlink returns the plaintext target of the symlink n.
	Readlink(n Node) (string, error)
	// Xattrs returns n's decrypted extended attributes, reporting those that do not
	// decrypt; nil for a format without them.
	Xattrs(n Node, problem func(Problem)) map[string][]byte
	// Count calls counted for each entry a walk will visit, with its cipher content size
	// (0 but for files): an estimate for progress, made without decrypting.
	Count(counted func(size int64))
}

// Problem kinds reported by the walker and the formats.
const (
	KindDirIV    = "diriv"    // a directory's gocryptfs.diriv is missing or malformed
	KindDirID    = "dirid"    // a Cryptomator directory's dir.c9r or dirid.c9r is missing or wrong
	KindName     = "name"     // an entry name does not decrypt
	KindLongName = "longname" // a long name's .name file (Cryptomator: name.c9s) is missing, too big or does not match
	KindHeader   = "header"   // a file header is malformed or does not authenticate
	KindContent  = "content"  // blocks that do not authenticate (FirstBlock..LastBlock)
	KindSize     = "size"     // a ciphertext size no plaintext size maps to
	KindSymlink  = "symlink"  // a symlink target does not decrypt
	KindType     = "type"     // an entry of a type a vault cannot hold (irregular files)
	KindIO       = "io"       // the cipherdir could not be read
	KindDirTwice = "dirtwice" // a directory whose cipher folder the walk entered already (see Walk)

	// Notes, not damage (Problem.Damage is false): the vault reads fine.
	KindConflict = "conflict" // a sync tool's conflict copy
	KindForeign  = "foreign"  // a file whose name is not of the vault's format
	KindTemp     = "temp"     // a directory a crash left half made or half removed (layout.IsTemp)
)

// Problem is one defect found in a vault. Path is the plaintext path (slash-separated,
// relative to the vault root; for an entry whose name does not decrypt, its directory's
// plaintext path); CipherPath is the path in the cipherdir. FirstBlock and LastBlock give the
// affected block range for content problems and are -1 otherwise.
type Problem struct {
	Path, CipherPath, Kind, Detail string
	FirstBlock, LastBlock          int64
}

// NewProblem is a problem of no block range.
func NewProblem(p, cp, kind, detail string) Problem {
	return Problem{Path: p, CipherPath: cp, Kind: kind, Detail: detail, FirstBlock: -1, LastBlock: -1}
}

// Detail is err's message without the leading "vault is corrupt: " and "crypto: " prefixes,
// for Problem.Detail.
func Detail(err error) string {
	s := err.Error()
	for _, p := range []string{layout.ErrCorrupt.Error() + ": ", "crypto: "} {
		s = strings.ReplaceAll(s, p, "")
	}
	return s
}

// Damage reports whether p is damage (fsck's exit code 4) rather than a note about a
// conflict copy or a foreign file.
func (p Problem) Damage() bool {
	return p.Kind != KindConflict && p.Kind != KindForeign && p.Kind != KindTemp
}

func (p Problem) String() string {
	s := p.Path
	if s == "" {
		s = "/" + p.CipherPath
	}
	s += ": " + p.Kind + ": " + p.Detail
	if p.FirstBlock >= 0 {
		if p.FirstBlock == p.LastBlock {
			s += fmt.Sprintf(" (block %d)", p.FirstBlock)
		} else {
			s += fmt.Sprintf(" (blocks %d-%d)", p.FirstBlock, p.LastBlock)
		}
	}
	return s
}

// Conflict is what a sync tool's conflict left: see Kind. Of is the plaintext path of the
// entry it concerns.
type Conflict struct {
	Kind ConflictKind
	Of   string
	layout.Conflict
}

// ConflictKind says what a conflict is, and so how it can be settled.
type ConflictKind string

const (
	// ConflictCopyOfEntry is a tool's conflict copy of the entry Of (its Base is that entry's
	// stored name): the copy's content or tree is a second version of Of.
	ConflictCopyOfEntry ConflictKind = "copy"
	// ConflictFolderMadeTwice is a folder made on two computers: the tool kept the second
	// computer's gocryptfs.diriv as a conflict copy (Base is gocryptfs.diriv), and what was made
	// in the folder there is encrypted under the copy's IV. It is settled as a whole, by moving
	// those entries under the folder's own IV.
	ConflictFolderMadeTwice ConflictKind = "folder made twice"
	// ConflictMadeInSecondFolder is an entry made in a folder made twice, on the computer whose
	// gocryptfs.diriv the tool kept as a copy: its name is encrypted under the copy's IV, so
	// gocryptfs does not show it. Of is the name it has there, which the folder may also hold;
	// it is not a copy of a file and its Base (gocryptfs.diriv) is never a name to settle onto.
	ConflictMadeInSecondFolder ConflictKind = "made in second folder"
)

// FolderArg is how a folder's plaintext path is given to settle a conflict, and shown: "/"
// for the root.
func FolderArg(p string) string {
	if p == "" || p == "." {
		return "/"
	}
	return p
}

// Error is damage a format found where the walker asked it for something (a directory whose
// ID names no folder, say): Kind is the problem kind the walker reports it under.
type Error struct {
	Kind string
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// PathMapper maps paths between a vault's plaintext view and its folder, as gocryptfs-xray
// -decrypt-paths and -encrypt-paths do: which file a sync tool's error about a cipher path
// concerns, and the other way round. Paths are slash-separated and relative to the vault's
// root (plaintext) or folder (cipher); leading slashes, "." and ".." are cleaned.
type PathMapper interface {
	// EncryptPath returns the cipher path of the plaintext path; the directories on the way
	// must exist (their keys encrypt the names below them), the last element need not.
	EncryptPath(plain string) (string, error)
	// DecryptPath returns the plaintext path of the cipher path. A path to one of the
	// format's own files has none: the error says whose file it is.
	DecryptPath(cipher string) (string, error)
}

// Made is a format's handle of an entry a Builder made (a directory to make entries in, a
// file to link to or to give its attributes), valid until the Builder is done.
type Made any

// Builder writes a new vault of a format entry by entry, a directory before its entries: what
// converting a vault into another format (or another cipher of one, through the plaintext)
// writes into, while it reads the old vault through its Volume. Names and contents are
// plaintext; each format encrypts and stores them by its own rules (long names, directory
// IVs or IDs, holes where it keeps them). What the format cannot hold (its capabilities in
// package vault's table of formats say so) is an error, never silently lost: a caller asks
// the capabilities first.
type Builder interface {
	// Root is the vault's root directory.
	Root() Made
	// Mkdir makes the directory name in dir.
	Mkdir(dir Made, name string) (Made, error)
	// WriteFile makes the file name in dir with the content read from r until EOF; an error
	// from r leaves no file.
	WriteFile(dir Made, name string, r io.Reader) (Made, error)
	// Symlink makes the symlink name in dir pointing to target.
	Symlink(dir Made, name, target string) (Made, error)
	// Mknod makes a FIFO, socket or device node of type mode (special files).
	Mknod(dir Made, name string, mode fs.FileMode, rdev uint64) (Made, error)
	// Link makes name in dir a second name of the file m (hard links).
	Link(dir Made, name string, m Made) (Made, error)
	// SetXattr sets the extended attribute name of m to value (extended attributes).
	SetXattr(m Made, name string, value []byte) error
	// SetAttrs gives m what the format keeps of info: its times; its permission bits and,
	// run as root, its owner where the format keeps them. A directory's come after its
	// entries were made.
	SetAttrs(m Made, info fs.FileInfo) error
}
