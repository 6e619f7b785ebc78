package app

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/keyring"
	"github.com/vaultui/vaultui/vault"
)

// ErrPasswordNeeded: the use case needs the vault's password from the user (see
// PasswordNeededError for why).
var ErrPasswordNeeded = errors.New("password needed")

// NeedReason says why a password is needed.
type NeedReason int

const (
	// NoneStored: the keyring holds no password for the vault.
	NoneStored NeedReason = iota
	// StoredFailed: the keyring's password no longer unlocks the vault (changed elsewhere).
	// The password typed next replaces it.
	StoredFailed
	// KeyringUnavailable: the keyring could not be reached or stayed locked (no session
	// bus, a dismissed unlock prompt): a normal state of a headless machine.
	KeyringUnavailable
	// ProgramFailed: the vault's password program (Vault.ExtPass) failed, or its password
	// does not unlock the vault (Err wraps vault.ErrWrongPassword then).
	ProgramFailed
)

// PasswordNeededError is returned by a use case called without a password when the keyring
// cannot give one that works. errors.Is(err, ErrPasswordNeeded) holds; Err is the keyring's
// or the vault's error behind it (nil for NoneStored).
type PasswordNeededError struct {
	Vault  Vault
	Reason NeedReason
	Err    error
}

func (e *PasswordNeededError) Error() string {
	switch e.Reason {
	case ProgramFailed:
		return e.programError()
	case StoredFailed:
		return fmt.Sprintf("the password stored in the keyring for %s does not unlock it", e.Vault.display())
	case KeyringUnavailable:
		return fmt.Sprintf("password needed for %s: %v", e.Vault.display(), e.Err)
	}
	return fmt.Sprintf("password needed for %s: none stored in the keyring", e.Vault.display())
}

// Is makes errors.Is(err, ErrPasswordNeeded) hold. It does not unwrap to Err: a stored
// password that failed is not the user's wrong password.
func (e *PasswordNeededError) Is(target error) bool { return target == ErrPasswordNeeded }

func (v Vault) display() string { return cmp.Or(v.Name, v.CipherDir) }

// KeyringAction is what a use case did to the vault's keyring entry.
type KeyringAction int

const (
	KeyringUntouched KeyringAction = iota // nothing to do (or nothing asked)
	KeyringStored                         // Remember: the password was stored
	KeyringReplaced                       // the entry held another password; now this one
	KeyringFailed                         // it should have been stored or replaced: Err says why not
)

// KeyringChange reports what became of the keyring entry of a vault whose password worked.
type KeyringChange struct {
	Action KeyringAction
	Err    error
}

// withPassword runs try with the vault's password: password if given, else the password
// program's when the registry names one, else the keyring's (see the package doc). With a
// given password that worked, the keyring entry follows it.
func (a *App) withPassword(ctx context.Context, v Vault, password []byte, remember bool, try func(pw []byte) error) (KeyringChange, error) {
	if password != nil {
		if err := try(password); err != nil {
			return KeyringChange{}, err
		}
		return a.keyringFollows(ctx, v, password, remember), nil
	}
	if len(v.ExtPass) > 0 {
		pw, err := a.RunPasswordProgram(ctx, v.ExtPass)
		if err != nil {
			return KeyringChange{}, &PasswordNeededError{Vault: v, Reason: ProgramFailed, Err: err}
		}
		return KeyringChange{}, tryOwn(v, ProgramFailed, pw, try)
	}
	k, err := a.opts.Keyring(ctx)
	if err != nil {
		return KeyringChange{}, &PasswordNeededError{Vault: v, Reason: KeyringUnavailable, Err: err}
	}
	defer k.Close()
	pw, err := k.Get(ctx, v.CipherDir)
	switch {
	case errors.Is(err, keyring.ErrNotFound):
		return KeyringChange{}, &PasswordNeededError{Vault: v, Reason: NoneStored}
	case err != nil:
		return KeyringChange{}, &PasswordNeededError{Vault: v, Reason: KeyringUnavailable, Err: err}
	}
	return KeyringChange{}, tryOwn(v, StoredFailed, pw, try)
}

// tryOwn runs try with pw, the vault's own password (its program's or the keyring's), and
// wipes it; a pw that does not unlock the vault is a *PasswordNeededError with Reason failed.
func tryOwn(v Vault, failed NeedReason, pw []byte, try func(pw []byte) error) error {
	defer crypto.Wipe(pw)
	err := try(pw)
	if errors.Is(err, vault.ErrWrongPassword) {
		return &PasswordNeededError{Vault: v, Reason: failed, Err: err}
	}
	return err
}

// keyringFollows makes the vault's keyring entry hold password, a password that works: an
// entry with another password is replaced (a vault has one password, so that one was stale),
// and with remember a missing entry is stored. Without remember, a keyring that cannot be
// reached is no news, and one that does not answer within followWait is not waited for: the
// vault is already mounted (or unlocked), and a hung Secret Service would hold every such
// use up for its call timeout.
func (a *App) keyringFollows(ctx context.Context, v Vault, password []byte, remember bool) KeyringChange {
	failed := func(err error) KeyringChange {
		if !remember {
			return KeyringChange{}
		}
		return KeyringChange{Action: KeyringFailed, Err: err}
	}
	if !remember {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, followWait)
		defer cancel()
	}
	k, err := a.opts.Keyring(ctx)
	if err != nil {
		return failed(err)
	}
	defer k.Close()
	has, err := k.Has(ctx, v.CipherDir)
	if err != nil {
		return failed(err)
	}
	action := KeyringStored
	if has {
		// Read without a prompt of our own: a keyring locked now asks its own.
		if old, err := k.Get(ctx, v.CipherDir); err == nil {
			same := bytes.Equal(old, password)
			crypto.Wipe(old)
			if same {
				return KeyringChange{}
			}
		}
		action = KeyringReplaced
	} else if !remember {
		return KeyringChange{}
	}
	if err := k.Set(ctx, v.CipherDir, keyring.Label(v.Name, v.CipherDir), password); err != nil {
		return KeyringChange{Action: KeyringFailed, Err: err}
	}
	return KeyringChange{Action: action}
}

// followWait bounds the keyring check after a typed password worked, when the user did not
// ask to store it (keyringFollows). A healthy keyring answers in milliseconds.
const followWait = time.Second

// HasStoredPassword reports whether the keyring holds a password for the vault, without
// reading it or unlocking the keyring; err says why it cannot tell (see KeyringTrouble).
func (a *App) HasStoredPassword(ctx context.Context, v Vault) (bool, error) {
	k, err := a.opts.Keyring(ctx)
	if err != nil {
		return false, err
	}
	defer k.Close()
	return k.Has(ctx, v.CipherDir)
}

// KeyringTrouble says why the keyring could not be asked, in a few words for one line beside
// a password prompt (keyring.Reason), and whether that is news where the password is asked
// anyway. No keyring at all (no session bus or no Secret Service: ssh, a container) is a
// normal state of a headless machine and is not; a keyring that is there but did not answer
// in time, stayed locked or failed is. The TUI and the commands both decide by it.
func KeyringTrouble(err error) (why string, news bool) {
	news = !errors.Is(err, keyring.ErrUnavailable) || errors.Is(err, keyring.ErrNoAnswer)
	return keyring.Reason(err), news
}

// ForgetPassword removes the vault's password from the keyring (keyring.ErrNotFound when
// there is none).
func (a *App) ForgetPassword(ctx context.Context, v Vault) error {
	k, err := a.opts.Keyring(ctx)
	if err != nil {
		return err
	}
	defer k.Close()
	return k.Delete(ctx, v.CipherDir)
}

// ChangePasswordRequest changes a vault's password, proven by the old password or by the
// master key.
type ChangePasswordRequest struct {
	Vault                  Vault
	OldPassword, MasterKey []byte
	NewPassword            []byte
	// Unverified reseals with a master key the vault holds too little to verify (see
	// vault.ErrKeyUnverifiable); the front end asks the user first.
	Unverified bool
	// ScryptLogN is the new scrypt cost; 0 keeps the current one, raised to the format's
	// default when below it.
	ScryptLogN int
}

// PasswordChanged is what a password change did.
type PasswordChanged struct {
	Keyring KeyringChange
	Backup  string // the old key file, kept (see vault.ChangePassword)
}

// ChangePassword changes the vault's password and, in the same step, the keyring's entry
// for it if there is one: the next mount must not try the old password.
func (a *App) ChangePassword(ctx context.Context, r ChangePasswordRequest) (PasswordChanged, error) {
	ctx = kdfContext(ctx, r.Vault)
	backup, err := vault.ChangePassword(ctx, r.Vault.CipherDir, vault.PasswordChange{
		OldPassword: r.OldPassword, MasterKey: r.MasterKey, NewPassword: r.NewPassword,
		Unverified: r.Unverified, ScryptLogN: r.ScryptLogN,
	})
	if err != nil {
		return PasswordChanged{}, err
	}
	return PasswordChanged{Keyring: a.keyringFollows(ctx, r.Vault, r.NewPassword, false), Backup: backup}, nil
}
