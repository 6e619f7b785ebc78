package crypto

import (
	"errors"
	"fmt"
)

// ErrCipherSize is wrapped by PlainSize for a ciphertext size that no
// plaintext size maps to.
var ErrCipherSize = errors.New("impossible ciphertext size")

// CipherSize returns the size of the encrypted file that holds plainSize
// bytes: 0 for an empty file, else the header plus per-block overhead.
func (e *ContentEnc) CipherSize(plainSize uint64) uint64 {
	if plainSize == 0 {
		return 0
	}
	blocks := (plainSize + BlockSize - 1) / BlockSize
	return HeaderLen + plainSize + blocks*uint64(e.overhead)
}

// PlainSize returns the plaintext size of an encrypted file of cipherSize
// bytes. A file of exactly HeaderLen bytes is size 0: gocryptfs writes the
// header before the first block, so an interrupted write leaves it behind,
// and gocryptfs reads it as empty. Sizes shorter than the header, or whose
// last block could not hold even one byte, are errors wrapping
// ErrCipherSize.
func (e *ContentEnc) PlainSize(cipherSize uint64) (uint64, error) {
	switch {
	case cipherSize == 0 || cipherSize == HeaderLen:
		return 0, nil
	case cipherSize < HeaderLen:
		return 0, fmt.Errorf("crypto: %w: %d bytes is shorter than the %d-byte header", ErrCipherSize, cipherSize, HeaderLen)
	}
	payload := cipherSize - HeaderLen
	cbs := uint64(e.cipherBS)
	full, rest := payload/cbs, payload%cbs
	plain := full * BlockSize
	if rest > 0 {
		if rest <= uint64(e.overhead) {
			return 0, fmt.Errorf("crypto: %w: %d bytes leaves a last block of %d bytes, not more than the %d-byte overhead",
				ErrCipherSize, cipherSize, rest, e.overhead)
		}
		plain += rest - uint64(e.overhead)
	}
	return plain, nil
}

// BlockCipherOffset returns the offset of block n in the encrypted file.
func (e *ContentEnc) BlockCipherOffset(n uint64) uint64 {
	return HeaderLen + n*uint64(e.cipherBS)
}
