package vault

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/atomicfile"
	"github.com/vaultui/vaultui/vault/cryptomator"
)

// PasswordChange says how ChangePassword proves the master key and what it seals it under.
type PasswordChange struct {
	// OldPassword opens the master key (a wrong one gives ErrWrongPassword); or, when the
	// password is lost, MasterKey is the key itself: the 32 bytes gocryptfs -init printed,
	// or a Cryptomator vault's raw 64 bytes. A gocryptfs key is tried on the vault first (see
	// UnlockWithMasterKey: a wrong one gives ErrWrongPassword, one that cannot be checked
	// ErrKeyUnverifiable); a Cryptomator key must sign vault.cryptomator.
	OldPassword, MasterKey []byte
	NewPassword            []byte
	// Unverified reseals with a gocryptfs master key that could not be verified
	// (ErrKeyUnverifiable), once the user has confirmed it. A wrong key makes the vault
	// unreadable for good.
	Unverified bool
	// ScryptLogN is the new scrypt cost; 0 keeps the current one, or raises it to the
	// format's default for new vaults if it is lower (a cost someone edited down in the
	// file is not carried over).
	ScryptLogN int
}

// ChangePassword re-seals the master key of the vault in cipherdir under c.NewPassword,
// with a new salt. Only the key file changes (gocryptfs.conf, or the masterkey file a
// Cryptomator vault names), atomically: a crash leaves the old or the new file. The file as
// it was is kept beside it with the suffix .bak, as gocryptfs -passwd keeps one (replacing
// the .bak of an earlier change); backup is its path.
func ChangePassword(cipherdir string, c PasswordChange) (backup string, err error) {
	return changePassword(atomicfile.OS{}, cipherdir, c)
}

// changePassword writes the new key file through fsys.
func changePassword(fsys atomicfile.FS, cipherdir string, pc PasswordChange) (string, error) {
	if len(pc.NewPassword) == 0 {
		return "", errors.New("the new password is empty")
	}
	if pc.Unverified && pc.MasterKey == nil {
		return "", errors.New("no master key")
	}
	if IsCryptomator(cipherdir) {
		return changeCryptomatorPassword(fsys, cipherdir, pc)
	}
	mk := pc.MasterKey
	if mk != nil && len(mk) != crypto.MasterKeyLen {
		return "", fmt.Errorf("%s: the master key is %d bytes; a gocryptfs vault's is %d", cipherdir, len(mk), crypto.MasterKeyLen)
	}
	c, err := LoadConfig(cipherdir)
	if err != nil {
		return "", err
	}
	if mk == nil {
		if mk, err = c.openMasterKey(cipherdir, pc.OldPassword); err != nil {
			return "", err
		}
		defer crypto.Wipe(mk)
	} else if !pc.Unverified {
		// Refuse a wrong master key rather than lock the vault for good.
		v, err := UnlockWithMasterKey(cipherdir, mk)
		if err != nil {
			return "", err
		}
		v.Close()
	}
	kdf, err := crypto.NewScryptKDF(resealCost(pc.ScryptLogN, c.ScryptObject.LogN(), crypto.DefaultScryptLogN))
	if err != nil {
		return "", fmt.Errorf("%s: %w", cipherdir, err)
	}
	kek, err := kdf.DeriveKey(pc.NewPassword)
	if err != nil {
		return "", kdfError(cipherdir, err)
	}
	defer crypto.Wipe(kek)
	sealed, err := crypto.SealMasterKey(kek, mk, c.Has(FlagHKDF))
	if err != nil {
		return "", fmt.Errorf("%s: %w", cipherdir, err)
	}
	nc := *c
	nc.ScryptObject = kdf
	nc.EncryptedKey = sealed
	data, err := nc.Marshal()
	if err != nil {
		return "", err
	}
	return replaceKeeping(fsys, cipherdir, crypto.ConfName, data, 0o400)
}

// resealCost is the scrypt cost a password change seals at: the one asked for, else the
// current one, raised to the format's default when it is below it.
func resealCost(asked, current, formatDefault int) int {
	if asked != 0 {
		return asked
	}
	return max(current, formatDefault)
}

// replaceKeeping replaces the key file name in dir with data and keeps the old file as
// name.bak. The backup is written first and made durable, so at every point one of the two
// files holds the old key file and the key file itself is old or new.
func replaceKeeping(fsys atomicfile.FS, dir, name string, data []byte, perm os.FileMode) (string, error) {
	final := filepath.Join(dir, name)
	old, err := os.ReadFile(final)
	if err != nil {
		return "", err
	}
	backup := final + ".bak"
	if err := atomicfile.Replace(fsys, backup, backup+".tmp", old, perm); err != nil {
		return "", fmt.Errorf("%s: keeping a copy of the old file: %w", backup, err)
	}
	if err := atomicfile.Replace(fsys, final, final+".tmp", data, perm); err != nil {
		return "", fmt.Errorf("%s: %w", final, err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		return "", fmt.Errorf("%s: %w", dir, err)
	}
	return backup, nil
}

// changeCryptomatorPassword rewrites a Cryptomator vault's masterkey file (the one its
// vault.cryptomator names) under the new password, with a new salt, atomically. The key is
// opened with the old password or given raw; either way the vault's signed configuration
// must verify under it, so a wrong key is refused.
func changeCryptomatorPassword(fsys atomicfile.FS, cipherdir string, pc PasswordChange) (string, error) {
	info, err := cryptomator.ReadInfo(cipherdir)
	if err != nil {
		return "", err
	}
	var v *cryptomator.Vault
	if pc.MasterKey != nil {
		k, err := cryptomator.MasterkeyFromRaw(pc.MasterKey)
		if err != nil {
			return "", fmt.Errorf("%s: %w", cipherdir, err)
		}
		v, err = cryptomator.OpenWithKey(cipherdir, k)
		k.Wipe()
		if err != nil {
			return "", fmt.Errorf("%w: the master key does not open this vault: %w", ErrWrongPassword, cryptomatorError(cipherdir, err))
		}
	} else if v, err = cryptomator.Open(cipherdir, pc.OldPassword); err != nil {
		return "", cryptomatorError(cipherdir, err)
	}
	defer v.Close()
	raw := v.RawMasterkey()
	defer crypto.Wipe(raw)
	k, err := cryptomator.MasterkeyFromRaw(raw)
	if err != nil {
		return "", err
	}
	defer k.Wipe()
	data, err := cryptomator.LockMasterkey(k, pc.NewPassword, resealCost(pc.ScryptLogN, info.ScryptLogN, cryptomator.DefaultScryptLogN))
	if err != nil {
		return "", cryptomatorError(cipherdir, err)
	}
	return replaceKeeping(fsys, cipherdir, info.MasterkeyFile, data, 0o600)
}
