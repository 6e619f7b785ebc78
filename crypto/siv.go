package crypto

import (
	"fmt"

	"github.com/aperturerobotics/jacobsa-crypto/siv"
)

// SIVSeal encrypts plaintext deterministically with AES-SIV (RFC 5297) and returns the
// 16-byte synthetic IV followed by the ciphertext. key is the S2V (MAC) key followed by the
// CTR key, 32, 48 or 64 bytes in all; ad are the associated-data components, in order. No
// component and one empty component are different inputs. Cryptomator encrypts names and
// hashes directory IDs this way; gocryptfs's content cipher is the nonce-based form (aead_siv.go).
func SIVSeal(key, plaintext []byte, ad ...[]byte) ([]byte, error) {
	out, err := siv.Encrypt(nil, key, plaintext, ad)
	if err != nil {
		return nil, fmt.Errorf("crypto: AES-SIV: %w", err)
	}
	return out, nil
}

// SIVOpen reverses SIVSeal. Anything that does not authenticate under key and ad is an error
// wrapping ErrAuth, with no plaintext.
func SIVOpen(key, sealed []byte, ad ...[]byte) ([]byte, error) {
	if len(sealed) < TagLen {
		return nil, fmt.Errorf("crypto: AES-SIV: %d bytes are shorter than the SIV: %w", len(sealed), ErrAuth)
	}
	switch len(key) {
	case 32, 48, 64:
	default:
		return nil, fmt.Errorf("crypto: AES-SIV: key is %d bytes, want 32, 48 or 64", len(key))
	}
	pt, err := siv.Decrypt(key, sealed, ad)
	if err != nil {
		return nil, fmt.Errorf("crypto: AES-SIV: %w", ErrAuth)
	}
	return pt, nil
}
