package crypto

import (
	"crypto/cipher"
	"fmt"

	"github.com/aperturerobotics/jacobsa-crypto/siv"
)

const (
	sivKeyLen   = 64 // AES-SIV-512: two AES-256 keys
	sivNonceLen = 16
)

// sivAEAD adapts RFC 5297 AES-SIV to cipher.AEAD the way gocryptfs does:
// the associated data and then the nonce are the two associated-data
// elements (RFC 5297 section 3's nonce-based use), and the output is
// SIV || ciphertext, so the tag sits in front.
type sivAEAD struct {
	key []byte // owned copy, wiped by wipe
}

func newSIV(key []byte) (cipher.AEAD, error) {
	if len(key) != sivKeyLen {
		return nil, fmt.Errorf("crypto: AES-SIV-512 key is %d bytes, want %d", len(key), sivKeyLen)
	}
	return &sivAEAD{key: append([]byte(nil), key...)}, nil
}

func (s *sivAEAD) NonceSize() int { return sivNonceLen }
func (s *sivAEAD) Overhead() int  { return TagLen }

func (s *sivAEAD) Seal(dst, nonce, plaintext, ad []byte) []byte {
	if len(nonce) != sivNonceLen {
		panic("crypto: AES-SIV: wrong nonce length")
	}
	out, err := siv.Encrypt(dst, s.key, plaintext, [][]byte{ad, nonce})
	if err != nil {
		panic("crypto: AES-SIV: " + err.Error()) // only reachable with a bad key length
	}
	return out
}

func (s *sivAEAD) Open(dst, nonce, ciphertext, ad []byte) ([]byte, error) {
	if len(nonce) != sivNonceLen {
		panic("crypto: AES-SIV: wrong nonce length")
	}
	if len(ciphertext) < TagLen {
		return nil, ErrAuth
	}
	pt, err := siv.Decrypt(s.key, ciphertext, [][]byte{ad, nonce})
	if err != nil {
		return nil, ErrAuth
	}
	// pt is a fresh buffer, so copying it out is safe even when dst overlaps
	// ciphertext.
	ret := append(dst, pt...)
	Wipe(pt)
	return ret, nil
}

func (s *sivAEAD) wipe() { Wipe(s.key) }
