package crypto

import (
	"crypto/sha256"
	"fmt"
	"strings"
)

// Long names: an encoded name longer than the limit is stored as
// LongNamePrefix + base64url(sha256(encoded name)), and the encoded name
// itself goes into a sibling file with LongNameSuffix appended.
const (
	LongNamePrefix = "gocryptfs.longname."
	LongNameSuffix = ".name"
	// DefaultLongNameMax is the longest encoded name stored as is.
	DefaultLongNameMax = 255
	// MinLongNameMax is the smallest limit gocryptfs accepts: the length of
	// a hashed long name itself (19 + 43).
	MinLongNameMax = 62
	// MaxLongNameFile bounds a .name file: 256 bytes (255 padded) in padded
	// base64 is 344 characters.
	MaxLongNameFile = 344
)

// HashLongName returns the stored name for an encoded name that is too long.
func (n *NameTransform) HashLongName(encoded string) string {
	h := sha256.Sum256([]byte(encoded))
	return LongNamePrefix + n.b64.EncodeToString(h[:])
}

// IsLongName reports whether stored is a hashed long name (the entry itself,
// not its .name file).
func IsLongName(stored string) bool {
	return strings.HasPrefix(stored, LongNamePrefix) && !strings.HasSuffix(stored, LongNameSuffix)
}

// IsLongNameFile reports whether stored is the .name file of a long name.
func IsLongNameFile(stored string) bool {
	return strings.HasPrefix(stored, LongNamePrefix) && strings.HasSuffix(stored, LongNameSuffix)
}

// LongNameMax returns the longest encoded name stored as is.
func (n *NameTransform) LongNameMax() int { return n.longNameMax }

// DecryptEntry decrypts the name of a directory entry: stored is the entry's name, encoded
// the encrypted name it stands for (stored itself, or the content of the .name file of a
// hashed long name). Besides DecryptName's checks it refuses a name in the form StoredName
// would not give it: an encoded name longer than LongNameMax stored as it is, or one within
// it behind a hashed long name. Either would be a second entry of one plaintext name, which a
// listing would show twice while a lookup finds only the one StoredName gives.
func (n *NameTransform) DecryptEntry(stored, encoded string, iv []byte) (string, error) {
	if long := stored != encoded; long != (len(encoded) > n.longNameMax) {
		return "", fmt.Errorf("crypto: %w: %q is not stored as gocryptfs stores a name of %d characters (long names above %d)",
			ErrBadName, stored, len(encoded), n.longNameMax)
	}
	return n.DecryptName(encoded, iv)
}
