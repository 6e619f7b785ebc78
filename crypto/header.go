package crypto

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
)

// File header layout.
const (
	// BlockSize is the plaintext size of a full content block.
	BlockSize = 4096
	// HeaderLen is the size of the header at the start of every non-empty
	// file: a 2-byte version and the file ID.
	HeaderLen = 18
	// FileIDLen is the size of the random file ID.
	FileIDLen = 16
	// HeaderVersion is the on-disk format version in every header.
	HeaderVersion = 2
)

// ErrBadHeader is wrapped by ParseFileHeader for a header that cannot be
// valid.
var ErrBadHeader = errors.New("bad file header")

// FileHeader is the header of an encrypted file.
type FileHeader struct {
	ID [FileIDLen]byte
}

// NewFileHeader returns a header with a fresh random file ID.
func NewFileHeader() (FileHeader, error) {
	var h FileHeader
	if _, err := rand.Read(h.ID[:]); err != nil {
		return h, fmt.Errorf("crypto: reading random file ID: %w", err)
	}
	return h, nil
}

// ParseFileHeader parses the first HeaderLen bytes of b. It refuses a
// version other than 2 and an all-zero file ID (what a hole or a torn write
// leaves behind).
func ParseFileHeader(b []byte) (FileHeader, error) {
	var h FileHeader
	if len(b) < HeaderLen {
		return h, fmt.Errorf("crypto: %w: %d bytes, want %d", ErrBadHeader, len(b), HeaderLen)
	}
	if v := binary.BigEndian.Uint16(b); v != HeaderVersion {
		return h, fmt.Errorf("crypto: %w: version %d, want %d", ErrBadHeader, v, HeaderVersion)
	}
	copy(h.ID[:], b[2:HeaderLen])
	if h.ID == ([FileIDLen]byte{}) {
		return h, fmt.Errorf("crypto: %w: all-zero file ID", ErrBadHeader)
	}
	return h, nil
}

// Bytes returns the 18-byte on-disk form of h.
func (h FileHeader) Bytes() []byte {
	b := make([]byte, HeaderLen)
	binary.BigEndian.PutUint16(b, HeaderVersion)
	copy(b[2:], h.ID[:])
	return b
}
