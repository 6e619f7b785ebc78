package vault

import (
	"errors"
	"fmt"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/layout"
)

// Sentinel errors about a vault, tested with errors.Is. An error wraps at most
// one of them (a KDF that needs more memory than there is also wraps
// crypto.ErrKDFMemory, the reason) and names the vault or file it is about.
// ErrKeyUnverifiable is in keycheck.go; the registry's sentinels are in
// package registry.
var (
	// ErrWrongPassword: the password (or master key) does not open the vault.
	ErrWrongPassword = errors.New("wrong password")
	// ErrCorrupt: the vault's files are damaged or not in a format vaultui
	// can read (config, directory IVs, names, file contents).
	// It is the same sentinel as layout.ErrCorrupt.
	ErrCorrupt = layout.ErrCorrupt
	// ErrNotFound: there is no vault (no gocryptfs.conf) where one was
	// expected.
	ErrNotFound = errors.New("no vault found")
	// ErrNotEmpty: Create or Export refuses a directory that is not empty.
	ErrNotEmpty = errors.New("directory is not empty")
	// ErrUnsupported: a valid gocryptfs vault that vaultui cannot open: one
	// that uses a feature vaultui does not support (FIDO2, another format
	// version, an unknown feature flag; the error names it), or whose scrypt
	// cost needs more memory than this machine has (see kdfError).
	ErrUnsupported = errors.New("unsupported vault feature")
)

// kdfError wraps an error of crypto's key derivation for the vault (or
// directory) where: parameters this machine cannot afford are a valid vault
// vaultui cannot open here, so they also wrap ErrUnsupported (exit code 10).
func kdfError(where string, err error) error {
	if errors.Is(err, crypto.ErrKDFMemory) || errors.Is(err, crypto.ErrKDFCostly) {
		return fmt.Errorf("%s: %w: %w", where, ErrUnsupported, err)
	}
	return fmt.Errorf("%s: %w", where, err)
}
