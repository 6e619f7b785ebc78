package vault

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/vaultui/vaultui/crypto"
)

// FormatMasterKey writes a master key as gocryptfs does: hex in dash-separated groups of 8
// digits, four groups a line, each line but the last ending in a dash, so it can be copied onto
// paper and typed back. The CLI and the TUI both show it this way.
func FormatMasterKey(key []byte) []string {
	h := hex.EncodeToString(key)
	var lines []string
	for i := 0; i < len(h); i += 32 {
		var groups []string
		for j := i; j < min(i+32, len(h)); j += 8 {
			groups = append(groups, h[j:min(j+8, len(h))])
		}
		line := strings.Join(groups, "-")
		if i+32 < len(h) {
			line += "-"
		}
		lines = append(lines, line)
	}
	return lines
}

// ParseMasterKey reads a master key typed back as FormatMasterKey shows it, with or without
// dashes, spaces and line breaks: 32 bytes for a gocryptfs vault, 64 (the raw key, encryption
// then MAC key) for a Cryptomator vault; the vault's format checks which it takes.
func ParseMasterKey(s string) ([]byte, error) {
	clean := strings.Map(func(r rune) rune {
		switch r {
		case '-', ' ', '\t', '\n', '\r':
			return -1
		}
		return r
	}, s)
	key, err := hex.DecodeString(clean)
	if err != nil {
		return nil, errors.New("master key: not hexadecimal (expected 64 hex digits, or 128 for a Cryptomator vault; dashes allowed)")
	}
	if len(key) != 32 && len(key) != 64 {
		crypto.Wipe(key)
		return nil, fmt.Errorf("master key: %d bytes, expected 32 (64 hex digits), or 64 (128 hex digits) for a Cryptomator vault", len(key))
	}
	return key, nil
}
