package vault

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/atomicfile"
	"github.com/vaultui/vaultui/vault/cryptomator"
)

// ChangePassword re-seals the master key of the vault in cipherdir under
// newPassword. The master key is either masterKey (when the old password is
// lost; it is tried on the vault first, see UnlockWithMasterKey: a wrong one
// gives ErrWrongPassword, one that cannot be checked ErrKeyUnverifiable) or
// opened with oldPassword (a wrong one gives ErrWrongPassword).
// The scrypt cost stays the same, with a new salt. Only gocryptfs.conf
// changes, atomically (see writeConfig): a crash leaves the old or the new
// config. For a Cryptomator vault it is the masterkey file that is rewritten, the same way,
// and masterKey is the raw 64-byte key (always verified: it must sign vault.cryptomator).
func ChangePassword(ctx context.Context, cipherdir string, oldPassword, masterKey, newPassword []byte) error {
	return changePassword(ctx, atomicfile.OS{}, cipherdir, oldPassword, masterKey, newPassword, true)
}

// ChangePasswordUnverified reseals the vault under newPassword with a master
// key that could not be verified (ErrKeyUnverifiable), once the user has
// confirmed it. A wrong key makes the vault unreadable for good.
func ChangePasswordUnverified(ctx context.Context, cipherdir string, masterKey, newPassword []byte) error {
	if masterKey == nil {
		return errors.New("no master key")
	}
	return changePassword(ctx, atomicfile.OS{}, cipherdir, nil, masterKey, newPassword, false)
}

// changePassword writes the new config through fsys.
func changePassword(ctx context.Context, fsys atomicfile.FS, cipherdir string, oldPassword, masterKey, newPassword []byte, verify bool) error {
	if len(newPassword) == 0 {
		return errors.New("the new password is empty")
	}
	if IsCryptomator(cipherdir) {
		return changeCryptomatorPassword(ctx, fsys, cipherdir, oldPassword, masterKey, newPassword)
	}
	if masterKey != nil && len(masterKey) != crypto.MasterKeyLen {
		return fmt.Errorf("%s: the master key is %d bytes; a gocryptfs vault's is %d", cipherdir, len(masterKey), crypto.MasterKeyLen)
	}
	c, err := LoadConfig(cipherdir)
	if err != nil {
		return err
	}
	mk := masterKey
	if mk == nil {
		if mk, err = c.openMasterKey(ctx, cipherdir, oldPassword); err != nil {
			return err
		}
		defer crypto.Wipe(mk)
	} else if verify {
		// Refuse a wrong master key rather than lock the vault for good.
		v, err := UnlockWithMasterKey(cipherdir, mk)
		if err != nil {
			return err
		}
		v.Close()
	}
	logN := c.ScryptObject.LogN()
	kdf, err := crypto.NewScryptKDF(logN)
	if err != nil {
		return fmt.Errorf("%s: %w", cipherdir, err)
	}
	kek, err := kdf.DeriveKey(ctx, newPassword)
	if err != nil {
		return kdfError(cipherdir, err)
	}
	defer crypto.Wipe(kek)
	sealed, err := crypto.SealMasterKey(kek, mk, c.Has(FlagHKDF))
	if err != nil {
		return fmt.Errorf("%s: %w", cipherdir, err)
	}
	nc := *c
	nc.ScryptObject = kdf
	nc.EncryptedKey = sealed
	if err := writeConfig(fsys, cipherdir, &nc); err != nil {
		return fmt.Errorf("%s: %w", cipherdir, err)
	}
	return nil
}

// changeCryptomatorPassword rewrites a Cryptomator vault's masterkey file (the one its
// vault.cryptomator names) under newPassword, at the same scrypt cost with a new salt,
// atomically. The key is opened with oldPassword or given raw; either way the vault's
// signed configuration must verify under it, so a wrong key is refused.
func changeCryptomatorPassword(ctx context.Context, fsys atomicfile.FS, cipherdir string, oldPassword, rawKey, newPassword []byte) error {
	info, err := cryptomator.ReadInfo(cipherdir)
	if err != nil {
		return err
	}
	var v *cryptomator.Vault
	if rawKey != nil {
		k, err := cryptomator.MasterkeyFromRaw(rawKey)
		if err != nil {
			return fmt.Errorf("%s: %w", cipherdir, err)
		}
		v, err = cryptomator.OpenWithKey(cipherdir, k)
		k.Wipe()
		if err != nil {
			return fmt.Errorf("%w: the master key does not open this vault: %w", ErrWrongPassword, cryptomatorError(cipherdir, err))
		}
	} else if v, err = cryptomator.Open(ctx, cipherdir, oldPassword); err != nil {
		return cryptomatorError(cipherdir, err)
	}
	defer v.Close()
	raw := v.RawMasterkey()
	defer crypto.Wipe(raw)
	k, err := cryptomator.MasterkeyFromRaw(raw)
	if err != nil {
		return err
	}
	defer k.Wipe()
	data, err := cryptomator.LockMasterkey(ctx, k, newPassword, info.ScryptLogN)
	if err != nil {
		return cryptomatorError(cipherdir, err)
	}
	final := filepath.Join(cipherdir, info.MasterkeyFile)
	if err := atomicfile.Replace(fsys, final, final+".tmp", data, 0o600); err != nil {
		return fmt.Errorf("%s: %w", final, err)
	}
	return fsys.SyncDir(cipherdir)
}
