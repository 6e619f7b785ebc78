package vault

import (
	"context"
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

// ErrCryptomatorNotYet is wrapped, beside ErrUnsupported, by what vaultui cannot do with a
// Cryptomator vault yet (--sharedstorage). Mounting, info, fsck and export read it.
var ErrCryptomatorNotYet = errors.New("not supported for Cryptomator vaults yet")

// CryptomatorNotYet is the error for doing what (e.g. "mounting") with the Cryptomator vault
// in dir.
func CryptomatorNotYet(dir, what string) error {
	return cryptomatorNotYet(fmt.Sprintf("%s: %s Cryptomator vaults is not supported yet (vaultui reads them offline: info, fsck, export, conflicts)", dir, what))
}

func cryptomatorNotYet(msg string) error {
	return also{errors.New(msg), []error{ErrUnsupported, ErrCryptomatorNotYet}}
}

// UnlockVolume opens the vault in cipherdir, of either format, with its password: the one
// place a folder's format is told (IsCryptomator). Errors wrap this package's sentinels for
// both formats (ErrWrongPassword, ErrCorrupt, ErrUnsupported, ErrNotFound).
func UnlockVolume(ctx context.Context, cipherdir string, password []byte) (Volume, error) {
	if !IsCryptomator(cipherdir) {
		v, err := Unlock(ctx, cipherdir, password)
		if err != nil {
			return nil, err
		}
		return gocryptfsVolume{v: v}, nil
	}
	v, err := cryptomator.Open(ctx, cipherdir, password)
	if err != nil {
		return nil, cryptomatorError(cipherdir, err)
	}
	return v.Volume(), nil
}

// UnlockCryptomator opens the Cryptomator vault in cipherdir with its password, for a mount.
// Errors wrap this package's sentinels, as UnlockVolume's do.
func UnlockCryptomator(ctx context.Context, cipherdir string, password []byte) (*cryptomator.Vault, error) {
	v, err := cryptomator.Open(ctx, cipherdir, password)
	if err != nil {
		return nil, cryptomatorError(cipherdir, err)
	}
	return v, nil
}

// UnlockCryptomatorWithKey opens the Cryptomator vault in cipherdir with its raw master key
// (the 64 bytes of its encryption and MAC keys), which the vault's signed configuration
// checks.
func UnlockCryptomatorWithKey(cipherdir string, raw []byte) (*cryptomator.Vault, error) {
	k, err := cryptomator.MasterkeyFromRaw(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cipherdir, err)
	}
	v, err := cryptomator.OpenWithKey(cipherdir, k)
	if err != nil {
		return nil, cryptomatorError(cipherdir, err)
	}
	return v, nil
}

// cryptomatorError makes an error of package cryptomator also wrap this package's sentinel
// for it, so that callers (the CLI's exit codes, the keyring's retry) treat both formats alike.
func cryptomatorError(cipherdir string, err error) error {
	switch {
	case errors.Is(err, cryptomator.ErrWrongPassword):
		return fmt.Errorf("%s: %w", cipherdir, ErrWrongPassword)
	case errors.Is(err, cryptomator.ErrUnsupported), errors.Is(err, crypto.ErrKDFMemory), errors.Is(err, crypto.ErrKDFCostly):
		return also{err, []error{ErrUnsupported}}
	}
	return err // ErrCorrupt is layout's, which is this package's
}

// also is err that also wraps sentinels, with err's message.
type also struct {
	err       error
	sentinels []error
}

func (a also) Error() string   { return a.err.Error() }
func (a also) Unwrap() []error { return append([]error{a.err}, a.sentinels...) }

// exists reports whether dir holds an entry name (of any type: a damaged config still marks
// the folder's format).
func exists(dir, name string) bool {
	_, err := os.Lstat(filepath.Join(dir, name))
	return err == nil
}

// cryptomatorInfo describes the Cryptomator vault in dir without its password.
func cryptomatorInfo(dir string) (Info, error) {
	ci, err := cryptomator.ReadInfo(dir)
	if err != nil {
		return Info{}, cryptomatorError(dir, err)
	}
	content := map[cryptomator.CipherCombo]string{
		cryptomator.SIVGCM:    "AES-256-GCM content, AES-SIV names",
		cryptomator.SIVCTRMAC: "AES-256-CTR + HMAC-SHA256 content, AES-SIV names",
	}[ci.CipherCombo]
	if content == "" {
		content = "unknown (" + string(ci.CipherCombo) + ")"
	}
	return Info{
		Dir: dir, Format: cryptomator.Describe(ci.Format, ci.CipherCombo), Version: ci.Format,
		CipherName: content, LongNames: true, LongNameMax: ci.ShorteningThreshold,
		ScryptN: 1 << ci.ScryptLogN, ScryptLogN: ci.ScryptLogN, ScryptR: ci.ScryptR, ScryptP: 1,
		ScryptKeyLen: 32, ScryptSaltLen: ci.ScryptSaltLen,
	}, nil
}

// errIsCryptomator is what the gocryptfs side of vault (LoadConfig, and so Unlock, passwd,
// settling conflicts, mount) says of a Cryptomator vault's folder.
func errIsCryptomator(dir string) error {
	return cryptomatorNotYet(dir + " is a Cryptomator vault: vaultui reads it offline (info, fsck, export, conflicts) and changes its password; mounting it is not supported for Cryptomator vaults yet")
}
