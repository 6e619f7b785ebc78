package vault

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"syscall"

	"github.com/vaultui/vaultui/vault/cryptomator"
)

// Settle settles the conflict listed at plaintext path p of a Cryptomator vault that is not
// mounted, or whose mount sees changes in its folder, in the vault's folder with the rules
// the mount renames and removes entries with (cryptomator.Vault.RemoveCopy, ReplaceWithCopy,
// KeepCopyAs): a copy of a file, a directory, a symlink, under a short or a shortened name,
// after the copy authenticated whole unless it is deleted. A directory holding entries is
// neither deleted nor replaced, and a directory's copy naming the original's own directory
// is not kept beside it (ErrUnsupported).
func (cv cryptomatorVolume) Settle(ctx context.Context, p string, keep Keep) (Settled, error) {
	p = strings.Trim(p, "/")
	var copyNode Node
	found := false
	dir := cv.Folder()
	if err := atConflict(ctx, cv, dir, p, &found, func(n Node) error { copyNode = n; return nil }); err != nil {
		return Settled{}, err
	}
	v, e := cv.Vault(), copyNode.Ref.(cryptomator.Entry)
	var err error
	switch keep {
	case KeepOriginal:
		err = v.RemoveCopy(e)
	case KeepCopy:
		err = v.ReplaceWithCopy(e)
	default:
		err = v.KeepCopyAs(e, path.Base(copyNode.Path))
	}
	switch {
	case err == nil:
		return Settled{}, nil
	case errors.Is(err, cryptomator.ErrSettleUnsupported):
		return Settled{}, alsoUnsupported{err}
	case errors.Is(err, syscall.ENOTEMPTY):
		return Settled{}, fmt.Errorf("%s: /%s: the directory it would delete holds entries; move or delete them first: %w", dir, copyNode.Path, err)
	case errors.Is(err, os.ErrExist):
		return Settled{}, fmt.Errorf("%s: /%s already exists: %w", dir, copyNode.Path, err)
	case errors.Is(err, ErrCorrupt):
		return Settled{}, fmt.Errorf("%s: /%s (%s) does not decrypt, so it was left as it is: %w", dir, copyNode.Path, copyNode.CipherPath, err)
	}
	return Settled{}, cryptomatorError(dir, err)
}

// Conflicts lists the vault's conflicts (a Cryptomator vault has no folders made twice: its
// directories are found by ID, not by a per-folder IV).
func (cv cryptomatorVolume) Conflicts(ctx context.Context) (out []ConflictEntry, err error) {
	err = listConflicts(ctx, cv, &out)
	return out, err
}

// PlanSettle: a Cryptomator conflict is settled in the vault's folder (Settle), which a
// mount sees as any change behind it.
func (cv cryptomatorVolume) PlanSettle(ctx context.Context, p string, keep Keep) (SettlePlan, error) {
	return SettlePlan{}, nil
}
