package crypto

import (
	"crypto/aes"
	"crypto/subtle"
	"encoding/binary"
	"fmt"
)

// keyWrapIV is the default initial value of RFC 3394 section 2.2.3.1: the integrity check
// that KeyUnwrap verifies.
var keyWrapIV = [8]byte{0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6}

// KeyWrap wraps key under the key-encryption key kek with the AES Key Wrap algorithm of
// RFC 3394 (the index-based form of section 2.2.1). kek is an AES key (16, 24 or 32 bytes);
// key is at least 16 bytes and a multiple of 8. The result is 8 bytes longer than key.
// Cryptomator's masterkey.cryptomator stores its two master keys this way.
func KeyWrap(kek, key []byte) ([]byte, error) {
	if len(key) < 16 || len(key)%8 != 0 {
		return nil, fmt.Errorf("crypto: key wrap: a key of %d bytes cannot be wrapped (at least 16, a multiple of 8)", len(key))
	}
	block, err := aes.NewCipher(kek)
	if err != nil {
		return nil, fmt.Errorf("crypto: key wrap: %w", err)
	}
	n := len(key) / 8
	out := make([]byte, 8+len(key)) // A, then R[1..n]
	copy(out, keyWrapIV[:])
	copy(out[8:], key)
	var b [16]byte
	defer Wipe(b[:])
	for j := range 6 {
		for i := 1; i <= n; i++ {
			r := out[8*i : 8*i+8]
			copy(b[:8], out[:8])
			copy(b[8:], r)
			block.Encrypt(b[:], b[:])
			t := uint64(n*j + i)
			binary.BigEndian.PutUint64(out[:8], binary.BigEndian.Uint64(b[:8])^t)
			copy(r, b[8:])
		}
	}
	return out, nil
}

// KeyUnwrap reverses KeyWrap. A wrapped key whose integrity check fails (a wrong kek, which
// for a vault means a wrong password, or a changed byte) returns an error wrapping ErrAuth and
// no key bytes.
func KeyUnwrap(kek, wrapped []byte) ([]byte, error) {
	if len(wrapped) < 24 || len(wrapped)%8 != 0 {
		return nil, fmt.Errorf("crypto: key unwrap: %d bytes cannot be a wrapped key (at least 24, a multiple of 8)", len(wrapped))
	}
	block, err := aes.NewCipher(kek)
	if err != nil {
		return nil, fmt.Errorf("crypto: key unwrap: %w", err)
	}
	n := len(wrapped)/8 - 1
	out := make([]byte, len(wrapped)) // A, then R[1..n]
	copy(out, wrapped)
	var b [16]byte
	defer Wipe(b[:])
	for j := 5; j >= 0; j-- {
		for i := n; i >= 1; i-- {
			r := out[8*i : 8*i+8]
			t := uint64(n*j + i)
			binary.BigEndian.PutUint64(b[:8], binary.BigEndian.Uint64(out[:8])^t)
			copy(b[8:], r)
			block.Decrypt(b[:], b[:])
			copy(out[:8], b[:8])
			copy(r, b[8:])
		}
	}
	if subtle.ConstantTimeCompare(out[:8], keyWrapIV[:]) != 1 {
		Wipe(out)
		return nil, fmt.Errorf("crypto: key unwrap: integrity check failed: %w", ErrAuth)
	}
	key := make([]byte, 8*n)
	copy(key, out[8:])
	Wipe(out)
	return key, nil
}
