package crypto

import (
	"crypto/cipher"
	"crypto/sha512"
	"fmt"

	"github.com/vaultui/vaultui/crypto/aegis"
)

// TagLen is the authentication tag (or SIV) length of every content cipher.
const TagLen = 16

// backend describes one content cipher: how its key is derived from the
// master key, and how to build its AEAD. Every content AEAD has a 16-byte
// tag (for AES-SIV: the synthetic IV, stored before the ciphertext, which is
// what Seal produces), so the on-disk block is always nonce || Seal output.
type backend struct {
	id       CipherID
	name     string // CipherID.String
	info     string // HKDF info string
	keyLen   int
	nonceLen int
	// legacyKey derives the key without HKDF (gocryptfs <= 1.2), or is nil
	// when the cipher requires HKDF.
	legacyKey func(masterKey []byte) []byte
	newAEAD   func(key []byte) (cipher.AEAD, error)
	// wipe clears key material the AEAD keeps (best effort), or is nil when
	// there is none beyond the key ContentEnc wipes itself.
	wipe func(cipher.AEAD)
}

func backendFor(c CipherID) (*backend, error) {
	switch c {
	case AESGCM:
		return &backend{id: c, name: "AES-256-GCM", info: InfoGCMContent, keyLen: 32, nonceLen: 16,
			legacyKey: func(mk []byte) []byte { return append([]byte(nil), mk...) },
			newAEAD:   newGCM}, nil
	case XChaCha:
		return &backend{id: c, name: "XChaCha20-Poly1305", info: InfoXChaChaContent, keyLen: 32, nonceLen: 24, newAEAD: newXChaCha}, nil
	case AESSIV:
		return &backend{id: c, name: "AES-SIV-512", info: InfoSIVContent, keyLen: sivKeyLen, nonceLen: sivNonceLen,
			legacyKey: func(mk []byte) []byte { s := sha512.Sum512(mk); return s[:] },
			newAEAD:   newSIV, wipe: func(a cipher.AEAD) { a.(*sivAEAD).wipe() }}, nil
	case AEGIS:
		return &backend{id: c, name: "AEGIS-256X2", info: InfoAEGISContent, keyLen: 32, nonceLen: 32, newAEAD: newAEGIS, wipe: aegis.Wipe}, nil
	}
	return nil, fmt.Errorf("crypto: %w %q", ErrUnknownCipher, string(c))
}

// contentKey derives the content key for b from the master key.
func (b *backend) contentKey(masterKey []byte, useHKDF bool) ([]byte, error) {
	if useHKDF {
		return HKDF(masterKey, b.info, b.keyLen), nil
	}
	if b.legacyKey == nil {
		return nil, fmt.Errorf("crypto: %s requires HKDF key derivation", b.id)
	}
	return b.legacyKey(masterKey), nil
}
