package vfs

import (
	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/cryptomator"
	"github.com/vaultui/vaultui/vault/format"
)

// contentFormat is a vault format's file content encryption as the mount uses it (file.go is
// written once against it and fileKey): a header, then blocks sealed under the header's key.
type contentFormat interface {
	geometry() format.Geometry
	// holes reports whether an all-zero cipher block reads as a block of zeros (gocryptfs:
	// a file grown by truncate or a write past its end keeps the blocks in between sparse).
	// Without holes (Cryptomator) every block is sealed, zeros included.
	holes() bool
	newHeader() (fileKey, []byte, error)
	// openHeader opens a file's key from its header (geometry().HeaderLen bytes).
	openHeader(b []byte) (fileKey, error)
}

// fileKey is one file's content key, bound to its header.
type fileKey interface {
	// seal appends the sealed blocks of plain (all full but perhaps the last), numbered from
	// first, to dst.
	seal(dst, plain []byte, first uint64) []byte
	// open appends the plaintext of the sealed blocks to dst; a block that does not
	// authenticate is a *crypto.BlockError, and nothing of it or after it is released.
	open(dst, sealed []byte, first uint64) ([]byte, error)
	// openZeroing is open with zeros for the blocks that do not authenticate, each passed
	// to bad (recovery, Options.ForceDecode).
	openZeroing(dst, sealed []byte, first uint64, bad func(*crypto.BlockError)) []byte
}

// gocryptfsContent is the gocryptfs format's content: an 18-byte header holding a file ID,
// 4 KiB blocks sealed under the master key with the ID and block number.
type gocryptfsContent struct{ enc *crypto.ContentEnc }

func (c gocryptfsContent) geometry() format.Geometry {
	return format.Geometry{HeaderLen: crypto.HeaderLen, BlockSize: crypto.BlockSize, BlockOverhead: c.enc.BlockOverhead()}
}

func (gocryptfsContent) holes() bool { return true }

func (c gocryptfsContent) newHeader() (fileKey, []byte, error) {
	h, err := crypto.NewFileHeader()
	if err != nil {
		return nil, nil, err
	}
	return &gocryptfsKey{enc: c.enc, id: h.ID}, h.Bytes(), nil
}

func (c gocryptfsContent) openHeader(b []byte) (fileKey, error) {
	h, err := crypto.ParseFileHeader(b)
	if err != nil {
		return nil, err
	}
	return &gocryptfsKey{enc: c.enc, id: h.ID}, nil
}

type gocryptfsKey struct {
	enc *crypto.ContentEnc
	id  [crypto.FileIDLen]byte
}

func (k *gocryptfsKey) seal(dst, plain []byte, first uint64) []byte {
	return k.enc.EncryptBlocks(dst, plain, first, k.id[:])
}

func (k *gocryptfsKey) open(dst, sealed []byte, first uint64) ([]byte, error) {
	return k.enc.DecryptBlocks(dst, sealed, first, k.id[:])
}

func (k *gocryptfsKey) openZeroing(dst, sealed []byte, first uint64, bad func(*crypto.BlockError)) []byte {
	return k.enc.DecryptBlocksZeroing(dst, sealed, first, k.id[:], bad)
}

// cryptomatorContent is a Cryptomator vault's content: a header sealing a per-file content
// key, 32 KiB chunks sealed under it (vault/cryptomator). Nothing is sparse: Cryptomator
// reads an all-zero chunk as damage.
type cryptomatorContent struct{ c *cryptomator.Content }

func (c cryptomatorContent) geometry() format.Geometry { return c.c.Geometry() }
func (cryptomatorContent) holes() bool                 { return false }

func (c cryptomatorContent) newHeader() (fileKey, []byte, error) {
	h, b, err := c.c.NewHeader()
	if err != nil {
		return nil, nil, err
	}
	return &cryptomatorKey{c: c.c, h: h}, b, nil
}

func (c cryptomatorContent) openHeader(b []byte) (fileKey, error) {
	h, err := c.c.OpenHeader(b)
	if err != nil {
		return nil, err
	}
	return &cryptomatorKey{c: c.c, h: h}, nil
}

type cryptomatorKey struct {
	c *cryptomator.Content
	h *cryptomator.FileHeader
}

func (k *cryptomatorKey) seal(dst, plain []byte, first uint64) []byte {
	out, err := k.c.SealChunks(dst, plain, first, k.h)
	if err != nil {
		// Only the random source can fail; the kernel's getrandom does not.
		panic("vfs: sealing a chunk: " + err.Error())
	}
	return out
}

func (k *cryptomatorKey) open(dst, sealed []byte, first uint64) ([]byte, error) {
	return k.c.OpenChunks(dst, sealed, first, k.h)
}

func (k *cryptomatorKey) openZeroing(dst, sealed []byte, first uint64, bad func(*crypto.BlockError)) []byte {
	return k.c.OpenChunksZeroing(dst, sealed, first, k.h, bad)
}
