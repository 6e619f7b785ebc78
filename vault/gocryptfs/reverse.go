package gocryptfs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/atomicfile"
)

// Reverse mode: a plaintext folder served as a read-only encrypted view (gocryptfs -reverse),
// for backups to storage that must not see the plaintext. The folder holds only its config,
// ReverseConfName; the view shows it as gocryptfs.conf, so a copy of the view is an ordinary
// vault that vaultui and gocryptfs mount forward.

// ReverseConfName is the config file of a folder served in reverse mode, as gocryptfs names it.
const ReverseConfName = ".gocryptfs.reverse.conf"

// ErrReverseCipher: reverse mode was asked for with a content cipher other than AES-SIV.
var ErrReverseCipher = errors.New("reverse mode needs AES-SIV")

// reverseCipherReason says why only AES-SIV serves a reverse view.
const reverseCipherReason = "the view derives every nonce from the file's path so that an unchanged file encrypts to the same bytes " +
	"(what makes a backup incremental); AES-GCM, XChaCha20-Poly1305 and AEGIS lose their security when a nonce repeats " +
	"for changed content, AES-SIV does not"

// CheckReverseCipher refuses a content cipher other than AES-SIV ("" picks it) for reverse
// mode, with ErrReverseCipher and the reason.
func CheckReverseCipher(c crypto.CipherID) error {
	if c != "" && c != crypto.AESSIV {
		return fmt.Errorf("%w, not %s: %s", ErrReverseCipher, c, reverseCipherReason)
	}
	return nil
}

// CreateReverse prepares the existing folder dir for reverse mode: it writes
// dir/.gocryptfs.reverse.conf (mode 0400, atomically, through fsys), as gocryptfs -init
// -reverse does, and returns the new master key (wipe it after showing it). The folder's
// files are not touched. The cipher must be AES-SIV (CheckReverseCipher). An existing
// reverse config is never replaced.
func CreateReverse(ctx context.Context, fsys atomicfile.FS, dir string, password []byte, opts CreateOptions) (masterKey []byte, err error) {
	opts.Cipher = cmp.Or(opts.Cipher, crypto.AESSIV)
	if err := CheckReverseCipher(opts.Cipher); err != nil {
		return nil, err
	}
	if err := CheckReverseDir(dir); err != nil {
		return nil, err
	}
	c, masterKey, err := newConfig(ctx, dir, password, opts)
	if err != nil {
		return nil, err
	}
	if err := writeConfigNamed(fsys, dir, ReverseConfName, c); err != nil {
		crypto.Wipe(masterKey)
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return masterKey, nil
}

// CheckReverseDir reports whether dir can be prepared for reverse mode, without changing
// anything: it must be a directory without a reverse config. ErrExists names the config that
// is already there.
func CheckReverseDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	p := filepath.Join(dir, ReverseConfName)
	if _, err := os.Lstat(p); err == nil {
		return fmt.Errorf("%s: %w", p, os.ErrExist)
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// LoadReverseConfig reads and validates dir/.gocryptfs.reverse.conf. A missing file is
// format.ErrNotFound; a config whose cipher is not AES-SIV gives ErrReverseCipher.
func LoadReverseConfig(dir string) (*Config, error) {
	c, err := LoadConfigFile(dir, ReverseConfName)
	if err != nil {
		return nil, err
	}
	if err := CheckReverseCipher(c.Cipher()); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ReverseConfName), err)
	}
	return c, nil
}

// UnlockReverse opens the reverse-mode config of the plaintext folder dir with its password
// (made by CreateReverse or gocryptfs -init -reverse). The Vault's Dir is the plaintext folder.
func UnlockReverse(ctx context.Context, dir string, password []byte) (*Vault, error) {
	return unlockConfig(ctx, dir, password, LoadReverseConfig)
}
