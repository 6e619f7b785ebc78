package crypto

import (
	"crypto/rand"
	"fmt"
	"strings"
)

// Extended attributes in the gocryptfs format: every attribute except POSIX ACLs is stored as
// XattrPrefix + the name encrypted like a file name under a fixed IV (xattrNameIV), and its value
// encrypted like a symlink target (block 0, no file ID), raw rather than base64. Vaults with
// plaintext names encrypt attribute names too.

// XattrPrefix starts the stored name of every encrypted attribute.
const XattrPrefix = "user.gocryptfs."

// xattrNameIV is the fixed IV attribute names are encrypted under ("xattr_name_iv_xx").
var xattrNameIV = []byte("xattr_name_iv_xx")

// EncryptXattrName returns the stored form of attribute name without XattrPrefix. Any
// non-empty name without NUL is allowed.
func (n *NameTransform) EncryptXattrName(name string) (string, error) {
	if name == "" || strings.IndexByte(name, 0) >= 0 {
		return "", fmt.Errorf("crypto: %w: attribute name %q", ErrBadName, name)
	}
	return n.b64.EncodeToString(n.eme.Encrypt(xattrNameIV, pad16([]byte(name)))), nil
}

// DecryptXattrName reverses EncryptXattrName.
func (n *NameTransform) DecryptXattrName(encoded string) (string, error) {
	bin, err := DecodeBase64(n.b64, encoded)
	if err != nil || len(bin) == 0 || len(bin)%16 != 0 || len(bin) > emeMaxLen {
		return "", fmt.Errorf("crypto: %w: stored attribute name %q", ErrBadName, encoded)
	}
	plain, err := unpad16(n.eme.Decrypt(xattrNameIV, bin))
	if err != nil || len(plain) == 0 || strings.IndexByte(string(plain), 0) >= 0 {
		return "", fmt.Errorf("crypto: %w: stored attribute name %q does not decrypt", ErrBadName, encoded)
	}
	return string(plain), nil
}

// EncryptXattrValue encrypts an attribute value; an empty value stays empty, as in gocryptfs.
// The value, of any length, is sealed as one message numbered block 0 without a file ID
// (how gocryptfs encrypts attribute values): nonce, then ciphertext and tag.
func (e *ContentEnc) EncryptXattrValue(value []byte) []byte {
	if len(value) == 0 {
		return []byte{}
	}
	out := make([]byte, e.nonceLen, e.nonceLen+len(value)+TagLen)
	// crypto/rand.Read never returns an error.
	_, _ = rand.Read(out)
	var ad [8]byte // block number 0, big endian
	return e.aead.Seal(out, out[:e.nonceLen], value, ad[:])
}

// DecryptXattrValue reverses EncryptXattrValue. A value that fails authentication wraps
// ErrAuth.
func (e *ContentEnc) DecryptXattrValue(c []byte) ([]byte, error) {
	if len(c) == 0 {
		return []byte{}, nil
	}
	if len(c) <= e.overhead {
		return nil, fmt.Errorf("crypto: %w: attribute value of %d bytes", ErrAuth, len(c))
	}
	var ad [8]byte
	plain, err := e.aead.Open(nil, c[:e.nonceLen], c[e.nonceLen:], ad[:])
	if err != nil {
		return nil, fmt.Errorf("crypto: attribute value: %w", ErrAuth)
	}
	return plain, nil
}
