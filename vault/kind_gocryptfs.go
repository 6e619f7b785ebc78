package vault

import (
	"context"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/atomicfile"
	"github.com/vaultui/vaultui/vault/format"
	"github.com/vaultui/vaultui/vault/layout"
)

// gocryptfsOpensIn is who opens a gocryptfs vault with content cipher c.
func gocryptfsOpensIn(c crypto.CipherID) Compat {
	subject := "A vault with " + c.String()
	switch c {
	case crypto.AEGIS:
		return Compat{Subject: subject, Programs: []string{"vaultui"}, Short: "vaultui only",
			Others: `released gocryptfs says Unknown feature flag "AEGIS256X2", ` +
				`and cppcryptfs (Windows) and DroidFS (Android) cannot open it either`}
	case crypto.AESGCM:
		return Compat{Subject: subject, Programs: []string{"vaultui", "gocryptfs", "cppcryptfs (Windows)", "DroidFS (Android)", "SiriKali (via gocryptfs)"},
			Short: "vaultui, gocryptfs, cppcryptfs, DroidFS, SiriKali"}
	case crypto.XChaCha:
		return Compat{Subject: subject, Programs: []string{"vaultui", "gocryptfs 2.2 or later"}, Short: "vaultui, gocryptfs >= 2.2"}
	case crypto.AESSIV:
		return Compat{Subject: subject, Programs: []string{"vaultui", "gocryptfs (its reverse mode's cipher)"}, Short: "vaultui, gocryptfs"}
	}
	return Compat{Subject: subject, Short: "unknown cipher", Others: "no program knows this cipher"}
}

// gocryptfsKind is the gocryptfs format behind Folder: gocryptfs.conf and the rules of
// walk.go, crypto and vault/layout.
type gocryptfsKind struct{}

func (gocryptfsKind) info(dir string) (Info, error) {
	c, err := LoadConfig(dir)
	if err != nil {
		return Info{}, err
	}
	i := c.Info(dir)
	i.ConfigConflicts = configConflicts(dir)
	return i, nil
}

func (gocryptfsKind) unlock(ctx context.Context, dir string, password []byte) (Volume, error) {
	v, err := Unlock(ctx, dir, password)
	if err != nil {
		return nil, err
	}
	return gocryptfsVolume{v: v}, nil
}

func (gocryptfsKind) unlockWithKey(dir string, key []byte, unverified bool) (Volume, error) {
	open := UnlockWithMasterKey
	if unverified {
		open = OpenWithMasterKey
	}
	v, err := open(dir, key)
	if err != nil {
		return nil, err
	}
	return gocryptfsVolume{v: v}, nil
}

func (gocryptfsKind) changePassword(ctx context.Context, fsys atomicfile.FS, dir string, f *Format, pc PasswordChange) (string, error) {
	return resealConfig(ctx, fsys, dir, crypto.ConfName, f, pc, func(mk []byte) error {
		// Refuse a wrong master key rather than lock the vault for good.
		v, err := UnlockWithMasterKey(dir, mk)
		if err != nil {
			return err
		}
		v.Close()
		return nil
	})
}

// resealConfig reseals the master key in the gocryptfs config file name of dir (gocryptfs.conf,
// or a reverse folder's .gocryptfs.reverse.conf) under pc.NewPassword. verify checks a master
// key given instead of the old password, unless pc.Unverified.
func resealConfig(ctx context.Context, fsys atomicfile.FS, dir, name string, f *Format, pc PasswordChange, verify func(mk []byte) error) (string, error) {
	mk := pc.MasterKey
	if mk != nil && len(mk) != crypto.MasterKeyLen {
		return "", fmt.Errorf("%s: the master key is %d bytes; a gocryptfs vault's is %d", dir, len(mk), crypto.MasterKeyLen)
	}
	c, err := loadConfigNamed(dir, name)
	if err != nil {
		return "", err
	}
	if mk == nil {
		if mk, err = c.openMasterKey(ctx, dir, pc.OldPassword); err != nil {
			return "", err
		}
		defer crypto.Wipe(mk)
	} else if !pc.Unverified {
		if err := verify(mk); err != nil {
			return "", err
		}
	}
	kdf, err := crypto.NewScryptKDF(resealCost(pc.ScryptLogN, c.ScryptObject.LogN(), f.ScryptLogN.Default))
	if err != nil {
		return "", fmt.Errorf("%s: %w", dir, err)
	}
	kek, err := kdf.DeriveKey(ctx, pc.NewPassword)
	if err != nil {
		return "", kdfError(dir, err)
	}
	defer crypto.Wipe(kek)
	sealed, err := crypto.SealMasterKey(kek, mk, c.Has(FlagHKDF))
	if err != nil {
		return "", fmt.Errorf("%s: %w", dir, err)
	}
	nc := *c
	nc.ScryptObject = kdf
	nc.EncryptedKey = sealed
	data, err := nc.Marshal()
	if err != nil {
		return "", err
	}
	return replaceKeeping(fsys, dir, name, data, 0o400)
}

// Paths maps paths with the vault's name keys (layout.PathNames).
func (g gocryptfsVolume) Paths() format.PathMapper {
	return gocryptfsPaths{dir: g.v.Dir, pn: g.v.PathNames()}
}

// gocryptfsPaths is layout.PathNames on the vault's folder, opened for each path.
type gocryptfsPaths struct {
	dir string
	pn  layout.PathNames
}

func (p gocryptfsPaths) EncryptPath(plain string) (string, error) {
	return p.at(func(rootfd int) (string, error) { return p.pn.EncryptPath(rootfd, plain) })
}

func (p gocryptfsPaths) DecryptPath(cipher string) (string, error) {
	return p.at(func(rootfd int) (string, error) { return p.pn.DecryptPath(rootfd, cipher) })
}

func (p gocryptfsPaths) at(fn func(rootfd int) (string, error)) (string, error) {
	rootfd, err := unix.Open(p.dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", &os.PathError{Op: "open", Path: p.dir, Err: err}
	}
	defer unix.Close(rootfd)
	return fn(rootfd)
}

// reverseKind is a plaintext folder prepared for a reverse view: its .gocryptfs.reverse.conf
// (ours or gocryptfs's). It has no encrypted files of its own to walk; the mount serves it.
type reverseKind struct{}

func (reverseKind) info(dir string) (Info, error) {
	c, err := LoadReverseConfig(dir)
	if err != nil {
		return Info{}, err
	}
	return c.Info(dir), nil
}

// errReversePlain: the offline jobs read encrypted files, which a reverse view's folder has
// none of.
func errReversePlain(dir string) error {
	return fmt.Errorf("%w: %s is a plaintext folder prepared for a reverse view (%s): it holds no encrypted files; mount its encrypted view with vaultui mount --reverse", ErrUnsupported, dir, ReverseConfName)
}

func (reverseKind) unlock(_ context.Context, dir string, _ []byte) (Volume, error) {
	return nil, errReversePlain(dir)
}

func (reverseKind) unlockWithKey(dir string, _ []byte, _ bool) (Volume, error) {
	return nil, errReversePlain(dir)
}

func (reverseKind) changePassword(ctx context.Context, fsys atomicfile.FS, dir string, f *Format, pc PasswordChange) (string, error) {
	// The folder is plaintext: nothing encrypted to try a master key on.
	return resealConfig(ctx, fsys, dir, ReverseConfName, f, pc, func([]byte) error {
		return fmt.Errorf("%s: %w: a reverse view's folder holds no encrypted files to check the master key on", dir, ErrKeyUnverifiable)
	})
}

func (g gocryptfsVolume) Conflicts(ctx context.Context) ([]ConflictEntry, error) {
	return g.v.Conflicts(ctx)
}

func (g gocryptfsVolume) Settle(ctx context.Context, p string, keep Keep) (Settled, error) {
	return g.v.SettleConflict(ctx, p, keep)
}

// PlanSettle: a gocryptfs conflict is settled through the mount, after CheckSettle's checks.
func (g gocryptfsVolume) PlanSettle(ctx context.Context, p string, keep Keep) (SettlePlan, error) {
	e, made, err := g.v.CheckSettle(ctx, p, keep)
	return SettlePlan{Mount: true, Entry: e, Made: made}, err
}

func (g gocryptfsVolume) Format() *Format                { return gocryptfsFormat }
func (g gocryptfsVolume) ContentCipher() crypto.CipherID { return g.v.Content.Cipher() }
func (g gocryptfsVolume) Keys() any                      { return g.v }

func (gocryptfsKind) variant(dir string) (string, error) {
	c, err := LoadConfig(dir)
	if err != nil {
		return "", err
	}
	return string(c.Cipher()), nil
}

func (gocryptfsKind) targetVariant(to crypto.CipherID) (string, error) {
	if to == "" {
		return string(gocryptfsFormat.Ciphers[0]), nil
	}
	if !to.Valid() {
		return "", fmt.Errorf("%w %q", crypto.ErrUnknownCipher, string(to))
	}
	return string(to), nil
}

// createFor makes a gocryptfs vault with the defaults of gocryptfs -init and the cipher
// variant. A gocryptfs vault keeps its master key through a change of cipher by resealing
// its files in place (reseal.go), never by a new vault: keep is refused.
func (gocryptfsKind) createFor(ctx context.Context, dir, variant string, password []byte, logN int, keep Volume) ([]byte, error) {
	if keep != nil {
		return nil, fmt.Errorf("%w: a gocryptfs vault is not rebuilt under its own key", ErrUnsupported)
	}
	return Create(ctx, dir, password, CreateOptions{Format: gocryptfsFormat.ID, Cipher: crypto.CipherID(variant), ScryptLogN: logN})
}

func (g gocryptfsVolume) Builder() format.Builder { return g.v.Builder() }

func (reverseKind) variant(dir string) (string, error) { return "", errReversePlain(dir) }
func (reverseKind) targetVariant(crypto.CipherID) (string, error) {
	return "", fmt.Errorf("%w: a reverse view's folder is not a conversion's result", ErrUnsupported)
}
func (reverseKind) createFor(_ context.Context, dir, _ string, _ []byte, _ int, _ Volume) ([]byte, error) {
	return nil, errReversePlain(dir)
}
