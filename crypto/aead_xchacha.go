package crypto

import (
	"crypto/cipher"
	"fmt"

	"golang.org/x/crypto/chacha20poly1305"
)

// newXChaCha returns XChaCha20-Poly1305 (24-byte nonce). It copies key.
func newXChaCha(key []byte) (cipher.AEAD, error) {
	a, err := chacha20poly1305.NewX(key)
	if err != nil {
		return nil, fmt.Errorf("crypto: XChaCha20-Poly1305: %w", err)
	}
	return a, nil
}
