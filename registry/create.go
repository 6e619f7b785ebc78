package registry

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault"
)

// The whole of "create a vault" as the user sees it: the vault, its mount point and its entry
// in the registry. The command line and the terminal app both go through here.

// CheckNewEntry checks that e can be added to the registry at regPath (a valid name, paths,
// no duplicate) and returns it as it would be registered (absolute paths). Nothing is
// written; callers run it before asking for a password, so a mistake costs nothing.
func CheckNewEntry(regPath string, e Entry) (Entry, error) {
	reg, err := Load(regPath)
	if err != nil {
		return Entry{}, err
	}
	if err := reg.Add(e); err != nil {
		return Entry{}, err
	}
	return reg.Vaults[len(reg.Vaults)-1], nil
}

// CreateRegistered creates a vault in e.CipherDir (see Create; CreateReverse when e.Reverse,
// for a plaintext folder served as an encrypted view), makes its mount point
// e.MountPoint (mode 0700, with parents) and registers e in the registry at regPath. The entry
// is checked first (CheckNewEntry) and added under the registry's lock once the vault exists,
// so what other processes changed in the list meanwhile is kept.
//
// The master key is returned whenever the vault was created (wipe it with crypto.Wipe after
// showing it): when the mount point or the registration then fails, with an *IncompleteError.
//
// The key derivation stops when ctx ends and costs no more than ctx allows
// (crypto.WithCostBound); a cost above crypto.DefaultCostBound that ctx allowed is recorded in
// the entry (KDFCost), so that unlocking the vault later is allowed it too.
func CreateRegistered(ctx context.Context, regPath string, e Entry, password []byte, opts vault.CreateOptions) (masterKey []byte, err error) {
	if e, err = CheckNewEntry(regPath, e); err != nil {
		return nil, err
	}
	create := vault.Create
	if e.Reverse {
		create = vault.CreateReverse
	}
	if masterKey, err = create(ctx, e.CipherDir, password, opts); err != nil {
		return nil, err
	}
	if opts.ScryptLogN > 0 {
		cost := crypto.ScryptKDF{N: 1 << opts.ScryptLogN, R: crypto.ScryptR}.Cost()
		if !crypto.DefaultCostBound.Allows(cost) {
			e.KDFCost = cost
		}
	}
	inc := &IncompleteError{CipherDir: e.CipherDir}
	if err := os.MkdirAll(e.MountPoint, 0o700); err != nil {
		inc.MountPoint = err
	}
	if _, err := Update(regPath, func(r *Registry) error { return r.Add(e) }); err != nil {
		inc.Register = err
	}
	if inc.MountPoint != nil || inc.Register != nil {
		return masterKey, inc
	}
	return masterKey, nil
}

// An IncompleteError is what CreateRegistered returns when the vault was created but a step
// after it failed.
type IncompleteError struct {
	CipherDir  string
	MountPoint error // making the mount point failed
	Register   error // registering failed; the registry is unchanged
}

func (e *IncompleteError) Error() string {
	var parts []string
	if e.MountPoint != nil {
		parts = append(parts, fmt.Sprintf("its mount point was not made: %v", e.MountPoint))
	}
	if e.Register != nil {
		parts = append(parts, fmt.Sprintf("it was not registered: %v", e.Register))
	}
	return fmt.Sprintf("the vault %s was created, but %s", e.CipherDir, strings.Join(parts, "; and "))
}

func (e *IncompleteError) Unwrap() []error {
	return slices.DeleteFunc([]error{e.MountPoint, e.Register}, func(err error) bool { return err == nil })
}
