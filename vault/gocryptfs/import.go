package gocryptfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/format"
	"github.com/vaultui/vaultui/vault/layout"
)

// Import encrypts the plaintext tree under src into the vault's root, which must hold no
// entries yet, through the vault's Builder: directories, files (all-zero full blocks as
// holes), symlinks, and their permission bits and times, written exactly as gocryptfs
// writes them. Other file types are refused.
//
// No command uses it: tests make vaults of known content with it, which is why it is
// exported rather than in a _test.go file.
func (v *Vault) Import(ctx context.Context, src string) error {
	ents, err := layout.ReadDirPath(v.Dir)
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	for _, e := range ents {
		if n := e.Name(); n != crypto.ConfName && n != crypto.DirIVName {
			return fmt.Errorf("%s: %w: import needs an empty vault", v.Dir, format.ErrNotEmpty)
		}
	}
	b := v.Builder()
	return importDir(ctx, b, b.Root(), src)
}

// importDir makes the entries of the plaintext directory src in dir.
func importDir(ctx context.Context, b format.Builder, dir format.Made, src string) error {
	ents, err := layout.ReadDirPath(src)
	if err != nil {
		return fmt.Errorf("vault: import: %w", err)
	}
	for _, e := range ents {
		if err := ctx.Err(); err != nil {
			return err
		}
		sp := filepath.Join(src, e.Name())
		info, err := e.Info()
		if err != nil {
			return fmt.Errorf("vault: import: %w", err)
		}
		var m format.Made
		switch t := info.Mode().Type(); {
		case t.IsDir():
			if m, err = b.Mkdir(dir, e.Name()); err == nil {
				err = importDir(ctx, b, m, sp)
			}
		case t.IsRegular():
			var f *os.File
			if f, err = os.Open(sp); err == nil {
				m, err = b.WriteFile(dir, e.Name(), f)
				f.Close()
			}
		case t == fs.ModeSymlink:
			var target string
			if target, err = os.Readlink(sp); err == nil {
				m, err = b.Symlink(dir, e.Name(), target)
			}
		default:
			return fmt.Errorf("vault: import %s: file type %v is not supported", sp, t)
		}
		if err == nil {
			err = b.SetAttrs(m, info)
		}
		if err != nil {
			return fmt.Errorf("vault: import %s: %w", sp, err)
		}
	}
	return nil
}

// chunkBlocks is how many blocks encryptInto and a reseal handle at once (128 KiB).
const chunkBlocks = 32

// isZero reports whether b is all zero bytes: a block gocryptfs leaves as a hole.
func isZero(b []byte) bool { return len(bytes.TrimLeft(b, "\x00")) == 0 }

// encryptInto writes the content read from in, encrypted, into the empty cipher file out as
// gocryptfs writes it: a header before the first block (none for an empty file), and full
// zero blocks left as holes.
func (v *Vault) encryptInto(out *os.File, in io.Reader) error {
	ce := v.Content
	plain := make([]byte, chunkBlocks*crypto.BlockSize)
	cipher := make([]byte, 0, chunkBlocks*ce.CipherBlockSize())
	defer crypto.Wipe(plain)
	var h crypto.FileHeader
	var size int64
	var err error
	for blk := int64(0); ; blk += chunkBlocks {
		n, rerr := io.ReadFull(in, plain)
		if n > 0 {
			if blk == 0 {
				if h, err = crypto.NewFileHeader(); err != nil {
					return err
				}
				if _, err := out.Write(h.Bytes()); err != nil {
					return err
				}
			}
			if cipher, err = writeBlocks(out, ce, cipher, plain[:n], uint64(blk), h.ID[:]); err != nil {
				return err
			}
			size += int64(n)
		}
		if rerr == io.EOF || errors.Is(rerr, io.ErrUnexpectedEOF) {
			break
		}
		if rerr != nil {
			return rerr
		}
	}
	return out.Truncate(int64(ce.CipherSize(uint64(size))))
}

// writeBlocks seals plain, blocks numbered from first (all full but perhaps the last), under
// the file ID id and writes them at their offsets in out, using buf; full zero blocks stay
// holes, as gocryptfs leaves them (they read as zeros).
func writeBlocks(out *os.File, ce *crypto.ContentEnc, buf, plain []byte, first uint64, id []byte) ([]byte, error) {
	for i := 0; i < len(plain); {
		j := i
		for j < len(plain) && !(j+crypto.BlockSize <= len(plain) && isZero(plain[j:j+crypto.BlockSize])) {
			j += crypto.BlockSize
		}
		j = min(j, len(plain))
		if j > i {
			blk := first + uint64(i/crypto.BlockSize)
			buf = ce.EncryptBlocks(buf[:0], plain[i:j], blk, id)
			if _, err := out.WriteAt(buf, int64(ce.BlockCipherOffset(blk))); err != nil {
				return buf, err
			}
		}
		i = j + crypto.BlockSize // skip the zero block
	}
	return buf, nil
}
