package crypto

import (
	"crypto/aes"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/rfjakob/eme"
)

// Names and sizes in a cipherdir.
const (
	ConfName  = "gocryptfs.conf"
	DirIVName = "gocryptfs.diriv"
	DirIVLen  = 16
	// NameMax is the longest plaintext name, in bytes (as ext4).
	NameMax = 255
	// emeMaxLen is the most EME can transform (128 blocks).
	emeMaxLen = 16 * 128
)

// ErrBadName is wrapped for a name that cannot be encrypted (empty, ".",
// "..", containing '/' or NUL, longer than NameMax) or an encrypted name that
// does not decrypt to such a valid name.
var ErrBadName = errors.New("bad file name")

// The name encodings are Strict: an encoding that ignored non-zero trailing bits would give one
// encrypted name several spellings, so one plaintext name could be listed twice in a directory.
var (
	nameB64Padded = base64.URLEncoding.Strict()
	nameB64Raw    = base64.RawURLEncoding.Strict()
)

// DecodeBase64 decodes s in enc, which must be a Strict encoding, and refuses every spelling
// of the bytes but the one enc writes. Strict alone is not enough: every Go decoder skips
// '\r' and '\n' anywhere in its input, and a file name may hold them, so "QUJD\nREVG" would be
// a second spelling of "QUJDREVG". Names, hashes and tokens read from a cipherdir go through
// this, so that a name that decodes has exactly one stored form.
func DecodeBase64(enc *base64.Encoding, s string) ([]byte, error) {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return nil, base64.CorruptInputError(i)
	}
	return enc.DecodeString(s)
}

// NameTransform encrypts and decrypts file names with EME under a
// per-directory IV. It is safe for concurrent use. Vaults with plaintext
// names have no NameTransform.
type NameTransform struct {
	eme         *eme.EMECipher
	key         []byte
	b64         *base64.Encoding
	longNameMax int
}

// NewNameTransform returns the name transform of a vault. The EME key is
// HKDF-derived from masterKey when useHKDF is set, else the master key itself
// (gocryptfs <= 1.2). raw64 selects unpadded base64url (feature flag Raw64).
// longNameMax is the longest encoded name stored as is: 0 means 255, a
// negative value disables long names (vaults without the LongNames flag).
func NewNameTransform(masterKey []byte, useHKDF, raw64 bool, longNameMax int) (*NameTransform, error) {
	if len(masterKey) != MasterKeyLen {
		return nil, fmt.Errorf("crypto: master key is %d bytes, want %d", len(masterKey), MasterKeyLen)
	}
	switch {
	case longNameMax == 0:
		longNameMax = DefaultLongNameMax
	case longNameMax < 0:
		longNameMax = math.MaxInt32
	case longNameMax < MinLongNameMax || longNameMax > DefaultLongNameMax:
		return nil, fmt.Errorf("crypto: long name limit %d is outside %d..%d", longNameMax, MinLongNameMax, DefaultLongNameMax)
	}
	var key []byte
	if useHKDF {
		key = HKDF(masterKey, InfoEMENames, 32)
	} else {
		key = append([]byte(nil), masterKey...)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		Wipe(key)
		return nil, fmt.Errorf("crypto: %w", err)
	}
	n := &NameTransform{eme: eme.New(block), key: key, b64: nameB64Padded, longNameMax: longNameMax}
	if raw64 {
		n.b64 = nameB64Raw
	}
	return n, nil
}

// ValidName checks that name can be a directory entry: not empty, not "."
// or "..", no '/' or NUL, at most NameMax bytes.
func ValidName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty name", ErrBadName)
	case name == "." || name == "..":
		return fmt.Errorf("%w: %q", ErrBadName, name)
	case strings.ContainsAny(name, "/\x00"):
		return fmt.Errorf("%w: %q contains '/' or NUL", ErrBadName, name)
	case len(name) > NameMax:
		return fmt.Errorf("%w: %d bytes is longer than %d", ErrBadName, len(name), NameMax)
	}
	return nil
}

func checkIV(iv []byte) error {
	if len(iv) != DirIVLen {
		return fmt.Errorf("crypto: directory IV is %d bytes, want %d", len(iv), DirIVLen)
	}
	return nil
}

// EncryptName returns the encoded (encrypted, base64url) form of plain under
// the directory IV iv, however long it is. Use StoredName for the on-disk
// entry name.
func (n *NameTransform) EncryptName(plain string, iv []byte) (string, error) {
	if err := ValidName(plain); err != nil {
		return "", fmt.Errorf("crypto: %w", err)
	}
	if err := checkIV(iv); err != nil {
		return "", err
	}
	return n.b64.EncodeToString(n.eme.Encrypt(iv, pad16([]byte(plain)))), nil
}

// StoredName returns the on-disk entry name: the encoded name, or
// gocryptfs.longname.<hash> when the encoded name is too long (long=true: the
// caller must write the .name file holding encoded).
func (n *NameTransform) StoredName(plain string, iv []byte) (stored, encoded string, long bool, err error) {
	encoded, err = n.EncryptName(plain, iv)
	if err != nil {
		return "", "", false, err
	}
	if len(encoded) > n.longNameMax {
		return n.HashLongName(encoded), encoded, true, nil
	}
	return encoded, encoded, false, nil
}

// DecryptName decrypts an encoded name (not a gocryptfs.longname.* entry:
// pass the content of its .name file) under the directory IV iv.
func (n *NameTransform) DecryptName(encoded string, iv []byte) (string, error) {
	if err := checkIV(iv); err != nil {
		return "", err
	}
	bin, err := n.decode(encoded)
	if err != nil {
		return "", err
	}
	plain, err := unpad16(n.eme.Decrypt(iv, bin))
	if err != nil {
		return "", fmt.Errorf("crypto: %w: %q does not decrypt: %v", ErrBadName, encoded, err)
	}
	if err := ValidName(string(plain)); err != nil {
		return "", fmt.Errorf("crypto: %q decrypts to an invalid name: %w", encoded, err)
	}
	return string(plain), nil
}

// decode turns an encoded name into EME ciphertext, checking the shape every encrypted name
// has whatever the key: base64url of a non-empty multiple of 16 bytes.
func (n *NameTransform) decode(encoded string) ([]byte, error) {
	bin, err := DecodeBase64(n.b64, encoded)
	if err != nil {
		return nil, fmt.Errorf("crypto: %w: %q is not base64url: %v", ErrBadName, encoded, err)
	}
	if len(bin) == 0 || len(bin)%aes.BlockSize != 0 || len(bin) > emeMaxLen {
		return nil, fmt.Errorf("crypto: %w: %q decodes to %d bytes, not a multiple of 16", ErrBadName, encoded, len(bin))
	}
	return bin, nil
}

// WellFormed reports whether encoded has the shape of an encrypted name, which does not
// depend on the key: a name without it was never written through any key.
func (n *NameTransform) WellFormed(encoded string) bool {
	_, err := n.decode(encoded)
	return err == nil
}

// Wipe clears the EME key (best effort) and makes n unusable.
func (n *NameTransform) Wipe() {
	Wipe(n.key)
	n.eme = nil
}
