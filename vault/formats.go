package vault

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/cryptomator"
	"github.com/vaultui/vaultui/vault/format"
)

// Volume is an unlocked vault of either format, as the walker reads it (Fsck, Export).
type Volume interface {
	format.Volume
	// FormatName names the format as every front end shows it ("Cryptomator vault format 8,
	// SIV_GCM"; for gocryptfs, "gocryptfs v2, AES-256-GCM").
	FormatName() string
	// Close wipes the keys.
	Close()
}

// IsCryptomator reports whether cipherdir holds a Cryptomator vault rather than a gocryptfs
// one: a vault.cryptomator (its masterkey file is where it names) and no gocryptfs.conf.
func IsCryptomator(cipherdir string) bool {
	return !exists(cipherdir, crypto.ConfName) && cryptomator.IsVault(cipherdir)
}

// ErrCryptomatorMount: what vaultui does not do with Cryptomator vaults yet (mount them, or
// any other change); the walker's commands (info, fsck, export) read them.
var ErrCryptomatorMount = fmt.Errorf("%w: mounting Cryptomator vaults is not supported yet (info, fsck and export read them)", ErrUnsupported)

// UnlockVolume opens the vault in cipherdir, of either format, with its password: the one
// place a folder's format is told (IsCryptomator). Errors wrap this package's sentinels for
// both formats (ErrWrongPassword, ErrCorrupt, ErrUnsupported, ErrNotFound).
func UnlockVolume(cipherdir string, password []byte) (Volume, error) {
	if !IsCryptomator(cipherdir) {
		v, err := Unlock(cipherdir, password)
		if err != nil {
			return nil, err
		}
		return gocryptfsVolume{v: v}, nil
	}
	v, err := cryptomator.Open(cipherdir, password)
	if err != nil {
		return nil, cryptomatorError(cipherdir, err)
	}
	return v.Volume(), nil
}

// cryptomatorError makes an error of package cryptomator also wrap this package's sentinel
// for it, so that callers (the CLI's exit codes, the keyring's retry) treat both formats alike.
func cryptomatorError(cipherdir string, err error) error {
	switch {
	case errors.Is(err, cryptomator.ErrWrongPassword):
		return fmt.Errorf("%s: %w", cipherdir, ErrWrongPassword)
	case errors.Is(err, cryptomator.ErrUnsupported), errors.Is(err, crypto.ErrKDFMemory):
		return also{err, ErrUnsupported}
	}
	return err // ErrCorrupt is layout's, which is this package's
}

// also is err that also wraps sentinel, with err's message.
type also struct{ err, sentinel error }

func (a also) Error() string   { return a.err.Error() }
func (a also) Unwrap() []error { return []error{a.err, a.sentinel} }

// exists reports whether dir holds an entry name (of any type: a damaged config still marks
// the folder's format).
func exists(dir, name string) bool {
	_, err := os.Lstat(filepath.Join(dir, name))
	return err == nil
}
