package app

import (
	"context"
	"errors"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/vault/convert"
)

// ConvertRequest changes a vault's content cipher or format (convert.Run). KeepOld: where
// the old vault is kept ("" beside it). Format: the ID of the new format ("" keeps the
// vault's); DropUnsupported leaves behind what it cannot hold instead of refusing.
type ConvertRequest struct {
	Vault           Vault
	To              crypto.CipherID
	Format          string
	DropUnsupported bool
	KeepOld         string
	// Password unlocks the vault; nil: the keyring's (a *PasswordNeededError when it has
	// none that works). NewPassword, if not nil, seals a vault moved into another format
	// (which gets a new master key) instead of the old password.
	Password, NewPassword []byte
	Progress              func(convert.Progress)
}

// ConvertPlan is what converting will do, for the user to confirm: convert.Plan, after
// an interrupted run that had already swapped its new vault in was finished (Finished).
// Done: that run was to the cipher asked for, so nothing is left to do.
type ConvertPlan struct {
	*convert.Plan
	Finished *convert.Result
	Done     bool
}

func (r ConvertRequest) options() convert.Options {
	// The vault must not be mounted: asked of the kernel's mounts, by identity.
	return convert.Options{To: r.To, Format: r.Format, DropUnsupported: r.DropUnsupported, KeepOld: r.KeepOld, NewPassword: r.NewPassword,
		MountedAt: mountmgr.MountedAt, Progress: r.Progress}
}

// PlanConvert says what converting r.Vault will do, without its password. An interrupted
// conversion that had already swapped in its new vault is finished first: the old vault is
// moved away, which needs no key.
func (a *App) PlanConvert(ctx context.Context, r ConvertRequest) (ConvertPlan, error) {
	opts := r.options()
	plan, err := convert.PlanFor(r.Vault.CipherDir, opts)
	if err != nil {
		return ConvertPlan{}, err
	}
	out := ConvertPlan{Plan: plan}
	if plan.Interrupted != convert.InterruptedSwapped {
		return out, nil
	}
	if out.Finished, err = convert.Finish(r.Vault.CipherDir); err != nil {
		return out, err
	}
	out.Plan, err = convert.PlanFor(r.Vault.CipherDir, opts)
	if errors.Is(err, convert.ErrAlreadyConverted) {
		// That run was the conversion asked for.
		out.Done = true
		return out, nil
	}
	return out, err
}

// CheckPassword unlocks the vault (of either format) and locks it again: the password, or
// without one the keyring's, is tried before a conversion shows its plan, so that a wrong
// one is said first and not after the user read the plan and said yes.
func (a *App) CheckPassword(ctx context.Context, v Vault, password []byte) (KeyringChange, error) {
	vol, change, err := a.unlockVolume(ctx, v, password)
	if err == nil {
		vol.Close()
	}
	return change, err
}

// Convert re-encrypts the vault's contents with r.To (see convert.Run): with r.Password,
// or without one with the keyring's.
func (a *App) Convert(ctx context.Context, r ConvertRequest) (*convert.Result, KeyringChange, error) {
	ctx = kdfContext(ctx, r.Vault)
	var res *convert.Result
	change, err := a.withPassword(ctx, r.Vault, r.Password, false, func(pw []byte) (err error) {
		res, err = convert.Run(ctx, r.Vault.CipherDir, pw, r.options())
		return err
	})
	if err == nil && r.NewPassword != nil && res.MasterKey != nil {
		// The vault now has the new password: a keyring entry follows it.
		change = a.keyringFollows(ctx, r.Vault, r.NewPassword, false)
	}
	return res, change, err
}
