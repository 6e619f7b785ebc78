package vault

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/vaultui/vaultui/internal/atomicfile"
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
// with a new salt. Only the key file changes (gocryptfs.conf, or the
// masterkey file a Cryptomator vault names), atomically: a crash leaves the old or the new
// file. The file as it was is kept beside it with the suffix .bak, as gocryptfs -passwd keeps
// one (replacing the .bak of an earlier change); backup is its path.
func ChangePassword(ctx context.Context, cipherdir string, c PasswordChange) (backup string, err error) {
	return changePassword(ctx, atomicfile.OS{}, cipherdir, c)
}

// changePassword writes the new key file through fsys.
func changePassword(ctx context.Context, fsys atomicfile.FS, cipherdir string, pc PasswordChange) (string, error) {
	f, err := Open(cipherdir)
	if err != nil {
		return "", err
	}
	return f.changePassword(ctx, fsys, pc)
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
