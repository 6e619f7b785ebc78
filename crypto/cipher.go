package crypto

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	"golang.org/x/sys/cpu"
)

// CipherID names a content cipher. Its value is the short, stable name used
// in vaultui's own files and command line.
type CipherID string

// The content ciphers.
const (
	AESGCM  CipherID = "aes-gcm"
	XChaCha CipherID = "xchacha"
	AESSIV  CipherID = "aes-siv"
	AEGIS   CipherID = "aegis"
)

// Ciphers lists every content cipher, in the order the speed test measures
// them.
var Ciphers = []CipherID{AEGIS, AESGCM, XChaCha, AESSIV}

// String returns the cipher's full name, e.g. "AES-256-GCM".
func (c CipherID) String() string {
	if b, err := backendFor(c); err == nil {
		return b.name
	}
	return fmt.Sprintf("unknown cipher %q", string(c))
}

// Valid reports whether c is one of the known ciphers.
func (c CipherID) Valid() bool {
	_, err := backendFor(c)
	return err == nil
}

// ErrUnknownCipher is returned by ParseCipher for a name it does not know.
var ErrUnknownCipher = errors.New("unknown cipher")

// ParseCipher parses a cipher name as users type it: "gcm", "aes-gcm",
// "aegis", "xchacha", "siv" or "aes-siv" (case-insensitive), or a full name
// such as "AES-256-GCM".
func ParseCipher(s string) (CipherID, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "gcm", "aes-gcm", "aes256gcm", "aes-256-gcm":
		return AESGCM, nil
	case "xchacha", "xchacha20", "xchacha20-poly1305", "xchacha20poly1305":
		return XChaCha, nil
	case "siv", "aes-siv", "aessiv", "aes-siv-512":
		return AESSIV, nil
	case "aegis", "aegis256x2", "aegis-256x2":
		return AEGIS, nil
	}
	return "", fmt.Errorf("crypto: %w %q (want gcm, aegis, xchacha or siv)", ErrUnknownCipher, s)
}

// HasAESInstructions reports whether the CPU accelerates AES in hardware,
// which decides between AES-based ciphers and XChaCha20-Poly1305.
func HasAESInstructions() bool {
	switch runtime.GOARCH {
	case "amd64", "386":
		return cpu.X86.HasAES && cpu.X86.HasPCLMULQDQ
	case "arm64":
		return cpu.ARM64.HasAES && cpu.ARM64.HasPMULL
	case "s390x":
		return cpu.S390X.HasAES && cpu.S390X.HasAESGCM
	case "ppc64", "ppc64le":
		return true // POWER8 and later have AES instructions; Go requires POWER8.
	}
	return false
}

// BlockOverhead returns the on-disk overhead of one content block of cipher c
// (nonce and tag), or 0 for an unknown cipher. It needs no key: sizes of a
// vault with another cipher can be planned before it is unlocked.
func (c CipherID) BlockOverhead() int {
	b, err := backendFor(c)
	if err != nil {
		return 0
	}
	return b.nonceLen + TagLen
}
