package crypto

import (
	"crypto/aes"
	"crypto/cipher"
	"fmt"
)

// newGCM returns AES-256-GCM with the 128-bit nonces gocryptfs uses
// (feature flag GCMIV128). The standard library keeps its own copy of the
// expanded key, so the caller may wipe key afterwards.
func newGCM(key []byte) (cipher.AEAD, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("crypto: AES-256-GCM key is %d bytes, want 32", len(key))
	}
	return aesGCM(key, 16)
}

// aesGCM returns AES-GCM under key with nonces of nonceLen bytes.
func aesGCM(key []byte, nonceLen int) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("crypto: %w", err)
	}
	a, err := cipher.NewGCMWithNonceSize(block, nonceLen)
	if err != nil {
		return nil, fmt.Errorf("crypto: %w", err)
	}
	return a, nil
}
