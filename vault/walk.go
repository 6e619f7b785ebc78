package vault

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vaultui/vaultui/crypto"
)

// Problem kinds reported by Fsck and Export.
const (
	KindDirIV    = "diriv"    // a directory's gocryptfs.diriv is missing or malformed
	KindName     = "name"     // an entry name does not decrypt
	KindLongName = "longname" // a long name's .name file is missing, too big or does not match
	KindHeader   = "header"   // a file header is malformed or its file ID opens no block
	KindContent  = "content"  // blocks that do not authenticate (FirstBlock..LastBlock)
	KindSize     = "size"     // a ciphertext size no plaintext size maps to
	KindSymlink  = "symlink"  // a symlink target does not decrypt
	KindType     = "type"     // an entry of a type a vault cannot hold (irregular files)
	KindIO       = "io"       // the cipherdir could not be read
)

// Problem is one defect found in a vault. Path is the plaintext path
// (slash-separated, relative to the vault root; for an entry whose name does
// not decrypt, its directory's plaintext path); CipherPath is the path in
// the cipherdir. FirstBlock and LastBlock give the affected block range for
// content problems and are -1 otherwise.
type Problem struct {
	Path, CipherPath, Kind, Detail string
	FirstBlock, LastBlock          int64
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

func newProblem(p, cp, kind, detail string) Problem {
	return Problem{Path: p, CipherPath: cp, Kind: kind, Detail: detail, FirstBlock: -1, LastBlock: -1}
}

// FsckProgress reports how far Fsck or Export is: Done of Total entries,
// Path the plaintext path being processed.
type FsckProgress struct {
	Done, Total int
	Path        string
}

// Node is one entry of the decrypted tree.
type Node struct {
	Path       string      // plaintext path, slash-separated, relative to the root
	CipherPath string      // path in the cipherdir, slash-separated
	Info       fs.FileInfo // Lstat of the cipher entry
}

// Walk visits every entry of the vault below the root, depth first and in
// plaintext name order, a directory before its contents, decrypting names
// with each directory's IV (deterministic and plaintext names as the config
// says, long names through their .name files). Entries it cannot decrypt
// the name of, and directories whose IV it cannot read, go to problem (which
// may be nil) and are skipped; the walk goes on. An error from fn or ctx ends
// it and is returned.
func (v *Vault) Walk(ctx context.Context, fn func(Node) error, problem func(Problem)) error {
	if problem == nil {
		problem = func(Problem) {}
	}
	return v.walkDir(ctx, "", "", fn, problem)
}

func (v *Vault) walkDir(ctx context.Context, cdir, pdir string, fn func(Node) error, problem func(Problem)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	abs := filepath.Join(v.Dir, filepath.FromSlash(cdir))
	ents, err := os.ReadDir(abs)
	if err != nil {
		problem(newProblem(pdir, cdir, KindIO, err.Error()))
		return nil
	}
	var iv []byte
	if v.Names != nil {
		if iv, err = v.DirIV(filepath.FromSlash(cdir)); err != nil {
			problem(newProblem(pdir, path.Join(cdir, crypto.DirIVName), KindDirIV,
				"cannot decrypt the names in this directory: "+errDetail(err)))
			return nil
		}
	}
	nodes := make([]Node, 0, len(ents))
	for _, e := range ents {
		name := e.Name()
		cpath := path.Join(cdir, name)
		if v.hidden(cdir, name) {
			continue
		}
		plain := name
		if v.Names != nil {
			if plain, err = v.decryptEntryName(abs, name, iv); err != nil {
				kind := KindName
				if crypto.IsLongName(name) {
					kind = KindLongName
				}
				problem(newProblem(pdir, cpath, kind, errDetail(err)))
				continue
			}
		}
		info, err := e.Info()
		if err != nil {
			problem(newProblem(path.Join(pdir, plain), cpath, KindIO, err.Error()))
			continue
		}
		nodes = append(nodes, Node{Path: path.Join(pdir, plain), CipherPath: cpath, Info: info})
	}
	slices.SortFunc(nodes, func(a, b Node) int { return strings.Compare(a.Path, b.Path) })
	for _, n := range nodes {
		if err := fn(n); err != nil {
			return err
		}
		if n.Info.IsDir() {
			if err := v.walkDir(ctx, n.CipherPath, n.Path, fn, problem); err != nil {
				return err
			}
		}
	}
	return nil
}

// hidden reports whether the entry name in cipher directory cdir is part of
// the vault's machinery rather than content: gocryptfs.conf (and, with
// encrypted names, the temporary and backup copies gocryptfs and vaultui
// leave beside it at the root), gocryptfs.diriv and long-name .name files.
func (v *Vault) hidden(cdir, name string) bool {
	if v.Names == nil {
		return cdir == "" && name == crypto.ConfName
	}
	if cdir == "" && (name == crypto.ConfName || name == crypto.ConfName+".tmp" || name == crypto.ConfName+".bak") {
		return true
	}
	return name == crypto.DirIVName || crypto.IsLongNameFile(name)
}

// decryptEntryName decrypts the entry name in directory dir (absolute).
func (v *Vault) decryptEntryName(dir, name string, iv []byte) (string, error) {
	encoded := name
	if crypto.IsLongName(name) {
		b, err := readSmall(filepath.Join(dir, name+crypto.LongNameSuffix), crypto.MaxLongNameFile)
		if err != nil {
			return "", err
		}
		encoded = string(b)
		if v.Names.HashLongName(encoded) != name {
			return "", fmt.Errorf("%w: %s%s does not match its entry's hash", ErrCorrupt, name, crypto.LongNameSuffix)
		}
	}
	plain, err := v.Names.DecryptName(encoded, iv)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return plain, nil
}

// readSmall reads a file that must not exceed max bytes.
func readSmall(p string, max int) ([]byte, error) {
	f, err := openRegular(p) // a FIFO must not hang fsck, export or the master-key check
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: missing %s", ErrCorrupt, filepath.Base(p))
		}
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > max {
		return nil, fmt.Errorf("%w: %s is longer than %d bytes", ErrCorrupt, filepath.Base(p), max)
	}
	if len(b) == 0 {
		return nil, fmt.Errorf("%w: %s is empty", ErrCorrupt, filepath.Base(p))
	}
	return b, nil
}

// errDetail is err's message without the leading "vault is corrupt: " and
// "crypto: " prefixes, for Problem.Detail.
func errDetail(err error) string {
	s := err.Error()
	for _, p := range []string{ErrCorrupt.Error() + ": ", "crypto: "} {
		s = strings.ReplaceAll(s, p, "")
	}
	return s
}

// ReadSymlink returns the plaintext target of the symlink at cipherPath
// (relative to v.Dir).
func (v *Vault) ReadSymlink(cipherPath string) (string, error) {
	c, err := os.Readlink(filepath.Join(v.Dir, filepath.FromSlash(cipherPath)))
	if err != nil {
		return "", fmt.Errorf("vault: %w", err)
	}
	if v.Names == nil {
		return c, nil // plaintext names: gocryptfs stores targets as they are
	}
	t, err := v.Content.DecryptSymlink(c)
	if err != nil {
		return "", fmt.Errorf("%s: %w: %w", cipherPath, ErrCorrupt, err)
	}
	return t, nil
}

// readChunkBlocks is how many blocks decryptFile reads at once (128 KiB).
const readChunkBlocks = 32

// decryptFile decrypts the file at cipherPath block by block, calling data
// (if not nil) with each run of plaintext at its offset; blocks that do not
// authenticate are reported as problems and given to data as zeros. It
// returns the plaintext size and whether the file was readable at all (a
// bad header or I/O error makes it unreadable).
func (v *Vault) decryptFile(ctx context.Context, n Node, data func(off int64, b []byte) error, problem func(Problem)) (int64, error) {
	f, err := os.Open(filepath.Join(v.Dir, filepath.FromSlash(n.CipherPath)))
	if err != nil {
		problem(newProblem(n.Path, n.CipherPath, KindIO, err.Error()))
		return 0, err
	}
	defer f.Close()
	ce := v.Content
	csize := uint64(n.Info.Size())
	if csize == 0 {
		return 0, nil
	}
	psize, err := ce.PlainSize(csize)
	if err != nil {
		problem(newProblem(n.Path, n.CipherPath, KindSize, errDetail(err)))
		// Check what is there: the header and all full blocks.
		if csize < crypto.HeaderLen {
			return 0, err
		}
		cbs := uint64(ce.CipherBlockSize())
		full := (csize - crypto.HeaderLen) / cbs
		csize = crypto.HeaderLen + full*cbs
		psize = full * crypto.BlockSize
	}
	var hdr [crypto.HeaderLen]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		problem(newProblem(n.Path, n.CipherPath, KindIO, err.Error()))
		return 0, err
	}
	h, err := crypto.ParseFileHeader(hdr[:])
	if err != nil {
		problem(newProblem(n.Path, n.CipherPath, KindHeader, errDetail(err)))
		return 0, err
	}
	cbs := int64(ce.CipherBlockSize())
	nblocks := (int64(csize) - crypto.HeaderLen + cbs - 1) / cbs
	cbuf := make([]byte, readChunkBlocks*cbs)
	pbuf := make([]byte, 0, readChunkBlocks*crypto.BlockSize)
	var bad [][2]int64 // bad block ranges
	for first := int64(0); first < nblocks; first += readChunkBlocks {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		cnt := min(readChunkBlocks, nblocks-first)
		off := crypto.HeaderLen + first*cbs
		clen := min(cnt*cbs, int64(csize)-off)
		chunk := cbuf[:clen]
		if _, err := f.ReadAt(chunk, off); err != nil {
			problem(newProblem(n.Path, n.CipherPath, KindIO, err.Error()))
			return 0, err
		}
		// Decrypt the chunk, skipping over bad blocks (zeros in their place).
		pbuf = pbuf[:0]
		for pos := int64(0); pos < clen; {
			blk := first + pos/cbs
			out, err := ce.DecryptBlocks(pbuf, chunk[pos:], uint64(blk), h.ID[:])
			pbuf = out
			if err == nil {
				break
			}
			var be *crypto.BlockError
			if !errors.As(err, &be) {
				return 0, err
			}
			b := int64(be.Block)
			if k := len(bad); k > 0 && bad[k-1][1] == b-1 {
				bad[k-1][1] = b
			} else {
				bad = append(bad, [2]int64{b, b})
			}
			// Zeros for the bad block (its plaintext length), then go on.
			bstart := (b - first) * cbs
			blen := min(cbs, clen-bstart) - int64(ce.BlockOverhead())
			pbuf = append(pbuf, make([]byte, max(0, blen))...)
			pos = bstart + cbs
		}
		if data != nil {
			if err := data(first*crypto.BlockSize, pbuf); err != nil {
				return 0, err
			}
		}
	}
	switch {
	case len(bad) == 1 && nblocks > 1 && bad[0] == [2]int64{0, nblocks - 1}:
		// Every block fails: the file ID they are bound to is what is damaged.
		p := newProblem(n.Path, n.CipherPath, KindHeader, "no block opens with the file ID in the header")
		problem(p)
	default:
		for _, r := range bad {
			p := newProblem(n.Path, n.CipherPath, KindContent, "blocks do not authenticate")
			if r[0] == r[1] {
				p.Detail = "block does not authenticate"
			}
			p.FirstBlock, p.LastBlock = r[0], r[1]
			problem(p)
		}
	}
	return int64(psize), nil
}

// isSpecial reports whether t is a FIFO, socket or device node: entries that gocryptfs (and a
// vaultui mount) create with only their names encrypted.
func isSpecial(t fs.FileMode) bool {
	return t == fs.ModeNamedPipe || t == fs.ModeSocket || t&fs.ModeDevice != 0
}
