package vault

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/vaultui/vaultui/vault/cryptomator"
)

// SettleVolume settles the conflict listed at plaintext path p of a locked vault of either
// format, opened with UnlockVolume: a gocryptfs vault as SettleConflict does; a Cryptomator
// vault with one unlink or rename of the copy, synced (cryptomator.Vault.RemoveCopy,
// ReplaceWithCopy, KeepCopyAs), after the copy authenticated whole unless it is deleted. What
// the Cryptomator format cannot settle in one step is refused (ErrUnsupported).
func SettleVolume(ctx context.Context, vol Volume, p string, keep Keep) (Settled, error) {
	if g, ok := vol.(gocryptfsVolume); ok {
		return g.v.SettleConflict(ctx, p, keep)
	}
	cv, ok := vol.(*cryptomator.Volume)
	if !ok {
		return Settled{}, fmt.Errorf("settling conflicts of %s: %w", vol.FormatName(), ErrUnsupported)
	}
	p = strings.Trim(p, "/")
	var copyNode *Node
	err := WalkVolume(ctx, vol, func(n Node) error {
		if n.Path == p && n.Conflict != nil {
			copyNode = &n
			return errStop
		}
		return nil
	}, nil)
	if err != nil && err != errStop {
		return Settled{}, err
	}
	dir := vol.Folder()
	if copyNode == nil {
		return Settled{}, fmt.Errorf("%s: /%s: %w", dir, p, ErrNoConflict)
	}
	v, e := cv.Vault(), copyNode.Ref.(cryptomator.Entry)
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
		return Settled{}, also{err, []error{ErrUnsupported}}
	case errors.Is(err, os.ErrExist):
		return Settled{}, fmt.Errorf("%s: /%s already exists: %w", dir, copyNode.Path, err)
	case errors.Is(err, ErrCorrupt):
		return Settled{}, fmt.Errorf("%s: /%s (%s) does not decrypt, so it was left as it is: %w", dir, copyNode.Path, copyNode.CipherPath, err)
	}
	return Settled{}, cryptomatorError(dir, err)
}
