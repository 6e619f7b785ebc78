package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/registry"
	"github.com/vaultui/vaultui/vault"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

// The registry's use cases: create, add, edit and forget a vault, each with its defaults and
// checks written once.

// registryPath is the registry file of Options.Registry, or the user's.
func (a *App) registryPath() (string, error) {
	if a.opts.Registry != "" {
		return a.opts.Registry, nil
	}
	return registry.DefaultPath()
}

// updateRegistry is registry.Update of the registry file of Options.Registry, or the user's.
func (a *App) updateRegistry(change func(*registry.Registry) error) (*registry.Registry, error) {
	p, err := a.registryPath()
	if err != nil {
		return nil, err
	}
	return registry.Update(p, change)
}

// Registry loads the registry of known vaults.
func (a *App) Registry() (*registry.Registry, error) {
	p, err := a.registryPath()
	if err != nil {
		return nil, err
	}
	return registry.Load(p)
}

// Resolve turns a VAULT argument (a registered name or a cipherdir) into its entry. A
// cipherdir given by path still works when the registry cannot be read, so a corrupt
// registry locks no one out of a vault; regErr then says why it was ignored.
func (a *App) Resolve(arg string) (e registry.Entry, regErr, err error) {
	reg, rerr := a.Registry()
	if rerr != nil {
		e, err := (&registry.Registry{}).Resolve(arg)
		if err != nil {
			return registry.Entry{}, nil, rerr
		}
		return e, rerr, nil
	}
	e, err = reg.Resolve(arg)
	return e, nil, err
}

// VaultAt names the vault at cipherDir for the use cases, by its registered name when it has
// one (its keyring entry's label shows it).
func (a *App) VaultAt(cipherDir string) Vault {
	if reg, err := a.Registry(); err == nil {
		if e, err := reg.Resolve(cipherDir); err == nil && e.Name != "" {
			return VaultOf(e)
		}
	}
	return Vault{CipherDir: cipherDir}
}

// DefaultName is the name a vault in dir gets unless the user chooses one: the folder's
// name without its extension and leading dots ("~/Sync/work.enc" is "work").
func DefaultName(dir string) string {
	base := strings.TrimLeft(filepath.Base(dir), ".-")
	if ext := filepath.Ext(base); ext != base {
		base = strings.TrimSuffix(base, ext)
	}
	if base == "" || strings.ContainsAny(base, "/") {
		return "vault"
	}
	return base
}

// FreeName is DefaultName(dir), numbered (work2, work3, ...) past the names taken says are
// registered, so a suggested name is one that can be registered; DefaultName(dir) when the
// first hundred are all taken.
func FreeName(dir string, taken func(name string) bool) string {
	base := DefaultName(dir)
	if !taken(base) {
		return base
	}
	for i := 2; i <= maxSuggestions; i++ {
		if name := fmt.Sprintf("%s%d", base, i); !taken(name) {
			return name
		}
	}
	return base
}

// suggestedFolder is where a new vault is suggested, in the home folder; later ones are
// numbered (Private2.crypt, ...).
const suggestedFolder = "Private"

// maxSuggestions bounds the search for a free folder or name.
const maxSuggestions = 100

// FreeFolder suggests a folder a new vault can use, one free accepts (CheckNewCipherDir, or
// a test's stand-in): ~/Private.crypt, else ~/Private2.crypt and on, so the suggestion never
// leads to "directory is not empty". "" when there is no home folder or none of the first
// hundred is free. It reads the disk: a TUI calls it from a command.
func FreeFolder(free func(dir string) error) string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	for i := 1; i <= maxSuggestions; i++ {
		name := suggestedFolder + ".crypt"
		if i > 1 {
			name = fmt.Sprintf("%s%d.crypt", suggestedFolder, i)
		}
		if dir := filepath.Join(home, name); free(dir) == nil {
			return dir
		}
	}
	return ""
}

// DefaultMountPoint is where a vault called name mounts unless the user chooses another
// place (~/Vaults/NAME); "" when name cannot be one.
func DefaultMountPoint(name string) string {
	mp, err := registry.DefaultMountPoint(name)
	if err != nil {
		return ""
	}
	return mp
}

// LockPolicyWorks reports whether the lock policies other than never can work on this
// machine: nil, or why not (no logind).
func (a *App) LockPolicyWorks(ctx context.Context) error { return a.opts.LockPolicyWorks(ctx) }

// DefaultLock is the lock policy of a new vault given LockPolicyWorks's answer: sleep where
// it can work, never where it cannot, so no vault is promised a lock that will not happen.
func DefaultLock(works error) string { return mountmgr.DefaultLockPolicy(works) }

// lockOf is the lock policy of a new vault: lock, checked, or when "" the default
// (DefaultLock) with, when that is never because the others cannot work here, a note saying so.
func (a *App) lockOf(ctx context.Context, lock string) (policy string, note, err error) {
	if lock != "" {
		return lock, nil, registry.ValidateLockPolicy(lock)
	}
	works := a.opts.LockPolicyWorks(ctx)
	if policy = DefaultLock(works); works != nil {
		note = fmt.Errorf("lock policy %s: %w", policy, works)
	}
	return policy, note, nil
}

// LockProblem says why policy does nothing here (works is LockPolicyWorks's answer), or nil.
func LockProblem(policy string, works error) error {
	if policy == "" || policy == registry.LockNever || works == nil {
		return nil
	}
	return fmt.Errorf("lock policy %s does nothing here: %w", policy, works)
}

// ErrNotAVault: add was given a folder that holds no vault.
var ErrNotAVault = errors.New("not a vault")

// CheckNewCipherDir reports whether dir can hold a new vault (missing in an existing parent,
// or empty). A folder that is already a vault wraps ErrIsVault as well as vault.ErrNotEmpty:
// the user meant to add it.
func CheckNewCipherDir(dir string) error {
	err := vault.CheckNewCipherDir(dir)
	if errors.Is(err, vault.ErrNotEmpty) {
		if _, cerr := vault.ReadInfo(dir); cerr == nil {
			return fmt.Errorf("%w (%w: add it rather than create one)", err, ErrIsVault)
		}
	}
	return err
}

// ErrIsVault: a new vault was asked for in a folder that holds one.
var ErrIsVault = errors.New("it is a vault already")

// NewVault is a vault to create. Empty Name, MountPoint and Lock take their defaults
// (DefaultName, DefaultMountPoint, DefaultLock).
type NewVault struct {
	Name, CipherDir, MountPoint string
	Lock                        string
	Options                     vault.CreateOptions
	// Reverse prepares an existing plaintext folder for reverse mode instead: only its
	// .gocryptfs.reverse.conf is written (vault.CreateReverse).
	Reverse bool
}

// CheckCreate checks everything about r that can be checked before a password is asked for,
// so a mistake costs nothing: the options (vault.CreateOptions.Validate: the one place of
// the rules about which go together), the folder, the name and the registry entry. It
// returns the entry as it will be registered (defaults filled, paths absolute) and, when the
// lock policy was defaulted to never, a note saying why (else nil).
func (a *App) CheckCreate(ctx context.Context, r NewVault) (registry.Entry, error, error) {
	if err := r.Options.Validate(); err != nil {
		return registry.Entry{}, nil, err
	}
	if f, _ := vault.FormatByID(r.Options.Format); r.Reverse && r.Options.Format != "" && !f.Can.ReverseView {
		return registry.Entry{}, nil, fmt.Errorf("%w: reverse mode is gocryptfs's; a %s vault has none", vault.ErrCreateOptions, f.Name)
	}
	if logN := r.Options.ScryptLogN; logN >= crypto.MinScryptLogN && logN <= crypto.MaxScryptLogN {
		// The bound every unlock applies, before the password is asked for.
		if err := crypto.CheckScryptCost(crypto.ScryptKDF{N: 1 << logN, R: crypto.ScryptR}, crypto.CostBoundOf(ctx)); err != nil {
			return registry.Entry{}, nil, err
		}
	}
	dir, err := filepath.Abs(r.CipherDir)
	if err != nil {
		return registry.Entry{}, nil, err
	}
	if r.Reverse {
		if err := gocryptfs.CheckReverseDir(dir); err != nil {
			return registry.Entry{}, nil, err
		}
	} else if err := CheckNewCipherDir(dir); err != nil {
		return registry.Entry{}, nil, err
	}
	name, mp, err := nameAndMountPoint(dir, r.Name, r.MountPoint)
	if err != nil {
		return registry.Entry{}, nil, err
	}
	if err := checkNewNesting(dir, mp); err != nil {
		return registry.Entry{}, nil, err
	}
	lock, lockNote, err := a.lockOf(ctx, r.Lock)
	if err != nil {
		return registry.Entry{}, nil, err
	}
	regPath, err := a.registryPath()
	if err != nil {
		return registry.Entry{}, nil, err
	}
	e, err := registry.CheckNewEntry(regPath, registry.Entry{Name: name, CipherDir: dir, MountPoint: mp, Lock: lock, Reverse: r.Reverse})
	return e, lockNote, err
}

// nameAndMountPoint are the name and the mount point of the vault in dir: those given, or
// their defaults (DefaultName, ~/Vaults/NAME); the name valid, the mount point absolute.
func nameAndMountPoint(dir, name, mp string) (string, string, error) {
	name = cmp.Or(name, DefaultName(dir))
	if err := registry.ValidateName(name); err != nil {
		return "", "", err
	}
	var err error
	if mp == "" {
		if mp, err = registry.DefaultMountPoint(name); err != nil {
			return "", "", err
		}
	}
	mp, err = filepath.Abs(mp)
	return name, mp, err
}

// checkNewNesting is mountmgr.CheckNesting for a cipherdir that may not exist yet, which
// that check (by identity) lets pass: such a one is judged by its path.
func checkNewNesting(dir, mp string) error {
	if _, err := os.Lstat(dir); err == nil {
		return mountmgr.CheckNesting(dir, mp)
	}
	within := func(inner, outer string) bool {
		rel, err := filepath.Rel(outer, inner)
		return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
	}
	if within(mp, dir) || within(dir, mp) {
		return fmt.Errorf("mount point %s and the new vault's cipherdir %s are nested: %w", mp, dir, mountmgr.ErrNested)
	}
	return nil
}

// Created is a vault that was written. MasterKey is shown to the user once, then wiped
// (crypto.Wipe); it is returned whenever the vault exists, even when a later step failed.
type Created struct {
	Entry     registry.Entry
	MasterKey []byte
	// LockNote says why the lock policy was defaulted to never, else nil.
	LockNote error
	// MountPointErr: the mount point could not be made (mount makes it later).
	MountPointErr error
	// NotRegistered: the vault exists but the registry was not changed; add it later.
	NotRegistered error
}

// Create writes a new vault with password, makes its mount point and registers it, after
// CheckCreate's checks. An unset cipher is refused: the front end decides (the speed test's
// recommendation) before the password is typed, unless the format fixes its cipher (a
// Cryptomator vault, whose MasterKey is the raw 64-byte key).
func (a *App) Create(ctx context.Context, r NewVault, password []byte) (Created, error) {
	e, lockNote, err := a.CheckCreate(ctx, r)
	if err != nil {
		return Created{}, err
	}
	if f, _ := vault.FormatByID(r.Options.Format); r.Options.Cipher == "" && f.Ciphers != nil {
		return Created{}, fmt.Errorf("creating %s: no cipher chosen", e.CipherDir)
	}
	regPath, err := a.registryPath()
	if err != nil {
		return Created{}, err
	}
	key, err := registry.CreateRegistered(ctx, regPath, e, password, r.Options)
	if key == nil {
		return Created{}, err
	}
	out := Created{Entry: e, MasterKey: key, LockNote: lockNote}
	var inc *registry.IncompleteError
	if errors.As(err, &inc) {
		out.MountPointErr, out.NotRegistered = inc.MountPoint, inc.Register
	} else if err != nil {
		crypto.Wipe(key)
		return Created{}, err
	}
	return out, nil
}

// NewEntry is an existing vault to register; empty Name, MountPoint and Lock take their
// defaults as for a new vault.
type NewEntry struct {
	Name, CipherDir, MountPoint string
	Lock                        string
	Automount, ReadOnly         bool
	Idle                        time.Duration
	// Reverse: CipherDir is a plaintext folder with a .gocryptfs.reverse.conf, mounted as
	// its read-only encrypted view.
	Reverse bool
}

// Added is a vault that was registered, with its cipher and, when the lock policy cannot
// work here, why (a defaulted one became never; a chosen one is kept but does nothing).
type Added struct {
	Entry registry.Entry
	Kind
	LockNote error
}

// Add registers the vault in r.CipherDir, which must hold a vault's config; nothing in it
// changes and no password is needed.
func (a *App) Add(ctx context.Context, r NewEntry) (Added, error) {
	dir, err := filepath.Abs(r.CipherDir)
	if err != nil {
		return Added{}, err
	}
	kind, err := KindOf(registry.Entry{CipherDir: dir, Reverse: r.Reverse})
	if err != nil {
		return Added{}, fmt.Errorf("%s: %w: %w", dir, ErrNotAVault, err)
	}
	name, mp, err := nameAndMountPoint(dir, r.Name, r.MountPoint)
	if err != nil {
		return Added{}, err
	}
	lock, lockNote, err := a.lockOf(ctx, r.Lock)
	if err != nil {
		return Added{}, err
	}
	if r.Lock != "" {
		lockNote = LockProblem(lock, a.opts.LockPolicyWorks(ctx))
	}
	out := Added{Kind: kind, LockNote: lockNote}
	if err := mountmgr.CheckNesting(dir, mp); err != nil {
		return Added{}, err
	}
	reg, err := a.updateRegistry(func(reg *registry.Registry) error {
		return reg.Add(registry.Entry{Name: name, CipherDir: dir, MountPoint: mp, MountAtStart: r.Automount,
			ReadOnly: r.ReadOnly, Idle: r.Idle, Lock: lock, Reverse: r.Reverse, KDFCost: acceptedCost(ctx, dir)})
	})
	if err != nil {
		return Added{}, err
	}
	out.Entry = reg.Vaults[len(reg.Vaults)-1]
	return out, nil
}

// acceptedCost is the key derivation cost of the vault in dir when it is above
// crypto.DefaultCostBound and ctx allows it (the user added it with --allow-costly-kdf): the
// registry records it, and later unlocks are allowed it. Otherwise 0, and those unlocks are
// held to the default bound (they say so, naming the option).
func acceptedCost(ctx context.Context, dir string) uint64 {
	info, err := vault.ReadInfo(dir)
	if err != nil || info.ScryptN <= 0 || info.ScryptR <= 0 {
		return 0
	}
	cost := crypto.ScryptKDF{N: info.ScryptN, R: info.ScryptR}.Cost()
	if crypto.DefaultCostBound.Allows(cost) || !crypto.CostBoundOf(ctx).Allows(cost) {
		return 0
	}
	return cost
}

// Edit changes a registered vault's options; nil fields stay as they are.
type Edit struct {
	Automount  *bool
	Lock       *string
	MountPoint *string
	ReadOnly   *bool
	Idle       *time.Duration
	// ExtPass sets the vault's password program (an argument vector; empty removes it).
	ExtPass *[]string
	// SharedStorage: the cipherdir is used by other machines at the same time.
	SharedStorage *bool
}

// Edited is the entry as it is now and, when its lock policy cannot work here, why.
type Edited struct {
	Entry    registry.Entry
	LockNote error
}

// Edit changes the options of the vault registered as name, under the registry's lock. A
// mount point is checked as mount checks it, now rather than at the first mount.
func (a *App) Edit(ctx context.Context, name string, ed Edit) (Edited, error) {
	if ed.Idle != nil && *ed.Idle < 0 {
		return Edited{}, fmt.Errorf("idle unmount %s: want 0 (never) or more", *ed.Idle)
	}
	var out Edited
	_, err := a.updateRegistry(func(reg *registry.Registry) (err error) {
		out.Entry, err = reg.Update(name, func(v *registry.Entry) error {
			setIf(&v.MountAtStart, ed.Automount)
			setIf(&v.Lock, ed.Lock) // checked by reg.Update
			setIf(&v.ReadOnly, ed.ReadOnly)
			setIf(&v.Idle, ed.Idle)
			setIf(&v.ExtPass, ed.ExtPass)
			if ed.MountPoint != nil {
				mp, err := filepath.Abs(*ed.MountPoint)
				if err != nil {
					return err
				}
				if err := mountmgr.CheckNesting(v.CipherDir, mp); err != nil {
					return err
				}
				v.MountPoint = mp
			}
			if ed.SharedStorage != nil {
				if *ed.SharedStorage && v.Reverse {
					return errors.New("shared storage is for vaults mounted from several machines, not for a reverse view")
				}
				v.SharedStorage = *ed.SharedStorage
			}
			return nil
		})
		return err
	})
	if err != nil {
		return Edited{}, err
	}
	if ed.Lock != nil {
		out.LockNote = LockProblem(out.Entry.LockPolicy(), a.opts.LockPolicyWorks(ctx))
	}
	return out, nil
}

// setIf sets *dst to *v when v is not nil.
func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// Forget removes the vault registered as name from the registry; its files are not touched.
// It returns the entry that was removed.
func (a *App) Forget(name string) (registry.Entry, error) {
	var entry registry.Entry
	_, err := a.updateRegistry(func(reg *registry.Registry) (err error) {
		entry, err = reg.Remove(name)
		return err
	})
	return entry, err
}

// Listed is a registered vault with what it is, read from its folder; Err says why that
// failed, and Missing that its folder is gone.
type Listed struct {
	registry.Entry
	Kind
	Missing bool
	Err     error
}

// List lists the registered vaults, each with its cipher; a vault whose config cannot be
// read is listed with the reason.
func (a *App) List() ([]Listed, error) {
	reg, err := a.Registry()
	if err != nil {
		return nil, err
	}
	out := make([]Listed, 0, len(reg.Vaults))
	for _, e := range reg.Vaults {
		l := Listed{Entry: e}
		if _, err := os.Stat(e.CipherDir); errors.Is(err, os.ErrNotExist) {
			l.Err, l.Missing = err, true
		} else {
			l.Kind, l.Err = KindOf(e)
		}
		out = append(out, l)
	}
	return out, nil
}
