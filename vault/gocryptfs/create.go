package gocryptfs

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/atomicfile"
	"github.com/vaultui/vaultui/vault/layout"
	"golang.org/x/sys/unix"
)

// CreateOptions selects what a new vault uses, checked by the caller (package vault's
// CreateOptions.Validate, against the table of formats). The zero value is gocryptfs's
// default but for the cipher: scrypt N=2^16, encrypted names with per-directory IVs and
// long names over 255 bytes.
type CreateOptions struct {
	Cipher             crypto.CipherID
	ScryptLogN         int // 0 means crypto.DefaultScryptLogN
	PlaintextNames     bool
	DeterministicNames bool // no per-directory IVs (gocryptfs -deterministic-names)
	LongNameMax        int  // 0 means 255; else 62..255
	Creator            string
}

// Flags returns the feature flags gocryptfs -init sets for these options, in
// gocryptfs's order.
func (o CreateOptions) Flags() []string {
	flags := []string{FlagHKDF}
	switch o.Cipher {
	case crypto.XChaCha:
		flags = append(flags, FlagXChaCha20Poly1305)
	case crypto.AEGIS:
		flags = append(flags, FlagAEGIS256X2)
	default:
		flags = append(flags, FlagGCMIV128)
	}
	if o.PlaintextNames {
		flags = append(flags, FlagPlaintextNames)
	} else {
		if !o.DeterministicNames {
			flags = append(flags, FlagDirIV)
		}
		if o.LongNameMax != 0 && o.LongNameMax != crypto.DefaultLongNameMax {
			flags = append(flags, FlagLongNameMax)
		}
		flags = append(flags, FlagEMENames, FlagLongNames, FlagRaw64)
	}
	if o.Cipher == crypto.AESSIV {
		flags = append(flags, FlagAESSIV)
	}
	return flags
}

// Create makes a gocryptfs vault in the empty folder cipherdir and returns its new master key
// (wipe it after showing it): gocryptfs.conf (mode 0400, atomically, through fsys) and, unless
// names are plaintext or deterministic, the root gocryptfs.diriv; exactly what gocryptfs -init
// writes. On failure it removes what it wrote.
func Create(ctx context.Context, fsys atomicfile.FS, cipherdir string, password []byte, opts CreateOptions) (masterKey []byte, err error) {
	c, masterKey, err := newConfig(ctx, cipherdir, password, opts)
	if err != nil {
		return nil, err
	}
	var wrote []string
	defer func() {
		if err != nil {
			for _, p := range wrote {
				os.Remove(p)
			}
			crypto.Wipe(masterKey)
			masterKey = nil
		}
	}()
	if !opts.PlaintextNames && !opts.DeterministicNames {
		wrote = append(wrote, filepath.Join(cipherdir, crypto.DirIVName))
		if err = writeDirIV(cipherdir); err != nil {
			return nil, err
		}
	}
	wrote = append(wrote, filepath.Join(cipherdir, crypto.ConfName))
	if err = WriteConfig(fsys, cipherdir, c); err != nil {
		return nil, fmt.Errorf("%s: %w", cipherdir, err)
	}
	return masterKey, nil
}

// newConfig makes a new master key and the config that seals it under password, for the
// (checked) options. where names the vault in errors.
func newConfig(ctx context.Context, where string, password []byte, opts CreateOptions) (c *Config, masterKey []byte, err error) {
	masterKey = make([]byte, crypto.MasterKeyLen)
	defer func() {
		if err != nil {
			crypto.Wipe(masterKey)
			masterKey = nil
		}
	}()
	if _, err = rand.Read(masterKey); err != nil {
		return nil, nil, fmt.Errorf("reading random master key: %w", err)
	}
	kdf, sealed, err := sealMasterKey(ctx, where, masterKey, password, opts.ScryptLogN, true)
	if err != nil {
		return nil, nil, err
	}
	c = &Config{Creator: opts.Creator, EncryptedKey: sealed, ScryptObject: kdf, Version: ConfigVersion, FeatureFlags: opts.Flags()}
	if c.Has(FlagLongNameMax) {
		c.LongNameMax = uint8(opts.LongNameMax)
	}
	if err = c.Validate(); err != nil {
		return nil, nil, fmt.Errorf("new config does not validate: %w", err)
	}
	return c, masterKey, nil
}

// writeDirIV creates the gocryptfs.diriv of directory dir.
func writeDirIV(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	defer unix.Close(fd)
	if _, err := layout.WriteDirIV(fd); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	return nil
}

// Reseal returns the content of c's file with the master key mk sealed under password at
// scrypt cost 2^logN, with a new salt: what a password change writes. dir names the vault in
// errors.
func (c *Config) Reseal(ctx context.Context, dir string, mk, password []byte, logN int) ([]byte, error) {
	kdf, sealed, err := sealMasterKey(ctx, dir, mk, password, logN, c.Has(FlagHKDF))
	if err != nil {
		return nil, err
	}
	nc := *c
	nc.ScryptObject = kdf
	nc.EncryptedKey = sealed
	return nc.Marshal()
}

// sealMasterKey seals mk under password with a new scrypt KDF of cost 2^logN (a new salt).
// where names the vault in errors.
func sealMasterKey(ctx context.Context, where string, mk, password []byte, logN int, hkdf bool) (crypto.ScryptKDF, []byte, error) {
	kdf, err := crypto.NewScryptKDF(logN)
	if err != nil {
		return kdf, nil, fmt.Errorf("%s: %w", where, err)
	}
	kek, err := kdf.DeriveKey(ctx, password)
	if err != nil {
		return kdf, nil, kdfError(where, err)
	}
	defer crypto.Wipe(kek)
	sealed, err := crypto.SealMasterKey(kek, mk, hkdf)
	if err != nil {
		return kdf, nil, fmt.Errorf("%s: %w", where, err)
	}
	return kdf, sealed, nil
}
