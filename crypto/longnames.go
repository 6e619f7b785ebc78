package crypto

import (
	"crypto/sha256"
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
