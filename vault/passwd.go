package vault

import (
	"errors"
	"fmt"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/atomicfile"
)

// ChangePassword re-seals the master key of the vault in cipherdir under
// newPassword. The master key is either masterKey (when the old password is
// lost; it is tried on the vault first, see UnlockWithMasterKey: a wrong one
// gives ErrWrongPassword, one that cannot be checked ErrKeyUnverifiable) or
// opened with oldPassword (a wrong one gives ErrWrongPassword).
// The scrypt cost stays the same, with a new salt. Only gocryptfs.conf
// changes, atomically (see writeConfig): a crash leaves the old or the new
// config.
func ChangePassword(cipherdir string, oldPassword, masterKey, newPassword []byte) error {
	return changePassword(atomicfile.OS{}, cipherdir, oldPassword, masterKey, newPassword, true)
}

// ChangePasswordUnverified reseals the vault under newPassword with a master
// key that could not be verified (ErrKeyUnverifiable), once the user has
// confirmed it. A wrong key makes the vault unreadable for good.
func ChangePasswordUnverified(cipherdir string, masterKey, newPassword []byte) error {
	if masterKey == nil {
		return errors.New("no master key")
	}
	return changePassword(atomicfile.OS{}, cipherdir, nil, masterKey, newPassword, false)
}

// changePassword writes the new config through fsys.
func changePassword(fsys atomicfile.FS, cipherdir string, oldPassword, masterKey, newPassword []byte, verify bool) error {
	if len(newPassword) == 0 {
		return errors.New("the new password is empty")
	}
	c, err := LoadConfig(cipherdir)
	if err != nil {
		return err
	}
	mk := masterKey
	if mk == nil {
		if mk, err = c.openMasterKey(cipherdir, oldPassword); err != nil {
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
	kek, err := kdf.DeriveKey(newPassword)
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
