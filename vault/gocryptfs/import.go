package gocryptfs

import (
	"bytes"
	"errors"
	"io"
	"os"

	"github.com/vaultui/vaultui/crypto"
)

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
