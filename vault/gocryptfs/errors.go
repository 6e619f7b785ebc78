package gocryptfs

import (
	"errors"
	"fmt"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/format"
	"github.com/vaultui/vaultui/vault/layout"
)

// The sentinels this package's errors wrap: package vault/format's, which are package vault's.
var (
	ErrWrongPassword   = format.ErrWrongPassword
	ErrCorrupt         = layout.ErrCorrupt
	ErrNotFound        = format.ErrNotFound
	ErrNotEmpty        = format.ErrNotEmpty
	ErrUnsupported     = format.ErrUnsupported
	ErrKeyUnverifiable = format.ErrKeyUnverifiable
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
