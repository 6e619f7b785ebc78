package gocryptfs

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/format"
	"github.com/vaultui/vaultui/vault/layout"
)

// kdfError wraps an error of crypto's key derivation for the vault (or
// directory) where: parameters this machine cannot afford are a valid vault
// vaultui cannot open here, so they also wrap format.ErrUnsupported (exit code 10).
func kdfError(where string, err error) error {
	if errors.Is(err, crypto.ErrKDFMemory) || errors.Is(err, crypto.ErrKDFCostly) {
		return fmt.Errorf("%s: %w: %w", where, format.ErrUnsupported, err)
	}
	return fmt.Errorf("%s: %w", where, err)
}

// Vault is an unlocked gocryptfs vault: its config and the keys to read and write it.
type Vault struct {
	Dir     string // the cipherdir
	Config  *Config
	Content *crypto.ContentEnc
	Names   *crypto.NameTransform // nil with PlaintextNames
	// XattrNames encrypts extended attribute names: Names, or with plaintext names a
	// transform of its own (gocryptfs encrypts attribute names in every vault).
	XattrNames *crypto.NameTransform
}

// Unlock opens the vault in cipherdir with its password. A password that
// does not open the master key gives an error wrapping format.ErrWrongPassword.
func Unlock(ctx context.Context, cipherdir string, password []byte) (*Vault, error) {
	return unlockConfig(ctx, cipherdir, password, LoadConfig)
}

// unlockConfig opens the vault in cipherdir, whose config load reads, with its password.
func unlockConfig(ctx context.Context, cipherdir string, password []byte, load func(string) (*Config, error)) (*Vault, error) {
	c, err := load(cipherdir)
	if err != nil {
		return nil, err
	}
	mk, err := c.OpenMasterKey(ctx, cipherdir, password)
	if err != nil {
		return nil, err
	}
	defer crypto.Wipe(mk)
	return OpenConfig(cipherdir, c, mk)
}

// OpenMasterKey derives the KEK from password and opens the master key of the vault in
// cipherdir (named in errors); a wrong password gives format.ErrWrongPassword.
func (c *Config) OpenMasterKey(ctx context.Context, cipherdir string, password []byte) ([]byte, error) {
	kek, err := c.ScryptObject.DeriveKey(ctx, password)
	if err != nil {
		return nil, kdfError(cipherdir, err)
	}
	defer crypto.Wipe(kek)
	mk, err := crypto.OpenMasterKey(kek, c.EncryptedKey, c.Has(FlagHKDF))
	if errors.Is(err, crypto.ErrAuth) {
		return nil, fmt.Errorf("%s: %w", cipherdir, format.ErrWrongPassword)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cipherdir, err)
	}
	if len(mk) != crypto.MasterKeyLen {
		crypto.Wipe(mk)
		return nil, fmt.Errorf("%s: %w: master key is %d bytes", cipherdir, layout.ErrCorrupt, len(mk))
	}
	return mk, nil
}

// UnlockWithMasterKey opens the vault with its master key (from Create or
// gocryptfs -init), for a forgotten password or a damaged EncryptedKey. The
// config holds nothing to check the key against, so it is tried on the
// vault's files (see checkMasterKey): an authenticated content block, or
// enough names that decrypt, prove it. A key that fails what was tried gives
// an error wrapping format.ErrWrongPassword; a vault with too little to check (an
// empty one) gives format.ErrKeyUnverifiable, and only OpenWithMasterKey, after the
// user confirmed, opens it then.
func UnlockWithMasterKey(cipherdir string, masterKey []byte) (*Vault, error) {
	v, err := OpenWithMasterKey(cipherdir, masterKey)
	if err != nil {
		return nil, err
	}
	switch v.checkMasterKey() {
	case keyWrong:
		v.Close()
		return nil, fmt.Errorf("%s: %w: the master key does not decrypt this vault", cipherdir, format.ErrWrongPassword)
	case keyUnverifiable:
		v.Close()
		return nil, fmt.Errorf("%s: %w: no file content in the vault authenticates and too few names decrypt to tell", cipherdir, format.ErrKeyUnverifiable)
	}
	return v, nil
}

// OpenWithMasterKey opens the vault with masterKey without checking it: for
// a key the caller knows is right (it just created the vault) or that the
// user accepted after UnlockWithMasterKey said it cannot be verified.
func OpenWithMasterKey(cipherdir string, masterKey []byte) (*Vault, error) {
	if len(masterKey) != crypto.MasterKeyLen {
		return nil, fmt.Errorf("master key is %d bytes, want %d", len(masterKey), crypto.MasterKeyLen)
	}
	c, err := LoadConfig(cipherdir)
	if err != nil {
		return nil, err
	}
	return OpenConfig(cipherdir, c, masterKey)
}

// OpenConfig opens the vault in cipherdir with its config c and its master key mk (not kept:
// the caller wipes it), unchecked: for a conversion, which holds both.
func OpenConfig(cipherdir string, c *Config, mk []byte) (*Vault, error) {
	useHKDF := c.Has(FlagHKDF)
	ce, err := crypto.NewContentEnc(c.Cipher(), mk, useHKDF)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cipherdir, err)
	}
	ce.SetPaddedBase64(!c.Has(FlagRaw64))
	v := &Vault{Dir: cipherdir, Config: c, Content: ce}
	v.XattrNames, err = crypto.NewNameTransform(mk, useHKDF, c.Has(FlagRaw64), c.NameLimit())
	if err != nil {
		ce.Wipe()
		return nil, fmt.Errorf("%s: %w", cipherdir, err)
	}
	if !c.PlaintextNames() {
		v.Names = v.XattrNames
	}
	return v, nil
}

// Close wipes the vault's keys (best effort); v must not be used afterwards.
func (v *Vault) Close() {
	if v.Content != nil {
		v.Content.Wipe()
	}
	if v.XattrNames != nil {
		v.XattrNames.Wipe() // Names is the same transform or nil
	}
}

// DirIV returns the name IV of an encrypted directory: the content of its
// gocryptfs.diriv, or all zeros with deterministic names. cipherDirPath is
// the directory's path in the cipherdir, absolute or relative to v.Dir ("" is
// the root). With plaintext names there are no IVs: it returns nil.
func (v *Vault) DirIV(cipherDirPath string) ([]byte, error) {
	if v.Config.PlaintextNames() {
		return nil, nil
	}
	if v.Config.DeterministicNames() {
		return make([]byte, crypto.DirIVLen), nil
	}
	dir := cipherDirPath
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(v.Dir, dir)
	}
	return ReadDirIV(dir)
}

// ReadDirIV reads dir/gocryptfs.diriv, which must hold exactly 16 bytes.
func ReadDirIV(dir string) ([]byte, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err == unix.ENOENT {
		return nil, fmt.Errorf("%s: %w: missing %s", dir, layout.ErrCorrupt, crypto.DirIVName)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	defer unix.Close(fd)
	iv, err := layout.ReadDirIV(fd)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return iv, nil
}
