package crypto

import (
	"crypto/cipher"

	"github.com/vaultui/vaultui/crypto/aegis"
)

// newAEGIS returns AEGIS-256X2 with a 128-bit tag and a 256-bit nonce, as
// gocryptfs's AEGIS branch stores it. The key is the HKDF-derived content key
// (never the all-zero key that branch used by mistake).
func newAEGIS(key []byte) (cipher.AEAD, error) { return aegis.New256X2(key, TagLen) }
