package vault

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/atomicfile"
	"github.com/vaultui/vaultui/vault/format"
	"github.com/vaultui/vaultui/vault/gocryptfs"
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

// gocryptfsKind is the gocryptfs format behind Folder (package vault/gocryptfs).
type gocryptfsKind struct{}

func (gocryptfsKind) info(dir string) (Info, error) {
	c, err := gocryptfs.LoadConfig(dir)
	if err != nil {
		return Info{}, err
	}
	i := configInfo(dir, c)
	i.ConfigConflicts = gocryptfs.ConfigConflicts(dir)
	return i, nil
}

// configInfo describes the gocryptfs config c (of the vault in dir).
func configInfo(dir string, c *gocryptfs.Config) Info {
	i := Info{
		Dir:                dir,
		Creator:            c.Creator,
		Version:            int(c.Version),
		Cipher:             c.Cipher(),
		CipherName:         c.Cipher().String(),
		FeatureFlags:       slices.Clone(c.FeatureFlags),
		HKDF:               c.Has(gocryptfs.FlagHKDF),
		PlaintextNames:     c.PlaintextNames(),
		DeterministicNames: c.DeterministicNames(),
		LongNames:          c.Has(gocryptfs.FlagLongNames),
		Raw64:              c.Has(gocryptfs.FlagRaw64),
		ScryptN:            c.ScryptObject.N,
		ScryptLogN:         c.ScryptObject.LogN(),
		ScryptR:            c.ScryptObject.R,
		ScryptP:            c.ScryptObject.P,
		ScryptKeyLen:       c.ScryptObject.KeyLen,
		ScryptSaltLen:      len(c.ScryptObject.Salt),
		EncryptedKeyLen:    len(c.EncryptedKey),
	}
	switch l := c.NameLimit(); {
	case l == 0:
		i.LongNameMax = crypto.DefaultLongNameMax
	case l > 0:
		i.LongNameMax = l
	}
	return i
}

// create makes a gocryptfs vault in cipherdir, made if it does not exist (and removed again
// on failure).
func (gocryptfsKind) create(ctx context.Context, fsys atomicfile.FS, cipherdir string, password []byte, opts CreateOptions) ([]byte, error) {
	undo, err := prepareEmptyDir(cipherdir)
	if err != nil {
		return nil, err
	}
	mk, err := gocryptfs.Create(ctx, fsys, cipherdir, password, opts.gocryptfsOptions())
	if err != nil {
		undo()
	}
	return mk, err
}

// gocryptfsOptions is what of o a gocryptfs vault uses.
func (o CreateOptions) gocryptfsOptions() gocryptfs.CreateOptions {
	return gocryptfs.CreateOptions{Cipher: o.Cipher, ScryptLogN: o.ScryptLogN, PlaintextNames: o.PlaintextNames,
		DeterministicNames: o.DeterministicNames, LongNameMax: o.LongNameMax, Creator: o.Creator}
}

func (gocryptfsKind) unlock(ctx context.Context, dir string, password []byte) (Volume, error) {
	v, err := gocryptfs.Unlock(ctx, dir, password)
	if err != nil {
		return nil, err
	}
	return gocryptfsVolume{v.Volume()}, nil
}

func (gocryptfsKind) unlockWithKey(dir string, key []byte, unverified bool) (Volume, error) {
	open := gocryptfs.UnlockWithMasterKey
	if unverified {
		open = gocryptfs.OpenWithMasterKey
	}
	v, err := open(dir, key)
	if err != nil {
		return nil, err
	}
	return gocryptfsVolume{v.Volume()}, nil
}

func (gocryptfsKind) changePassword(ctx context.Context, fsys atomicfile.FS, dir string, f *Format, pc PasswordChange) (string, error) {
	return resealConfig(ctx, fsys, dir, crypto.ConfName, f, pc, func(mk []byte) error {
		// Refuse a wrong master key rather than lock the vault for good.
		v, err := gocryptfs.UnlockWithMasterKey(dir, mk)
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
	c, err := gocryptfs.LoadConfigFile(dir, name)
	if err != nil {
		return "", err
	}
	if mk == nil {
		if mk, err = c.OpenMasterKey(ctx, dir, pc.OldPassword); err != nil {
			return "", err
		}
		defer crypto.Wipe(mk)
	} else if !pc.Unverified {
		if err := verify(mk); err != nil {
			return "", err
		}
	}
	data, err := c.Reseal(ctx, dir, mk, pc.NewPassword, resealCost(pc.ScryptLogN, c.ScryptObject.LogN(), f.ScryptLogN.Default))
	if err != nil {
		return "", err
	}
	return replaceKeeping(fsys, dir, name, data, 0o400)
}

// gocryptfsVolume is a gocryptfs vault as a Volume: the walker's volume of package gocryptfs,
// with what this package adds (conflicts: gcsettle.go).
type gocryptfsVolume struct{ *gocryptfs.Volume }

func (g gocryptfsVolume) Format() *Format                { return gocryptfsFormat }
func (g gocryptfsVolume) ContentCipher() crypto.CipherID { return g.Vault().Content.Cipher() }
func (g gocryptfsVolume) Keys() any                      { return g.Vault() }
func (g gocryptfsVolume) Builder() format.Builder        { return g.Vault().Builder() }

func (gocryptfsKind) variant(dir string) (string, error) {
	c, err := gocryptfs.LoadConfig(dir)
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
// its files in place (gocryptfs.Reseal), never by a new vault: keep is refused.
func (gocryptfsKind) createFor(ctx context.Context, dir, variant string, password []byte, logN int, keep Volume) ([]byte, error) {
	if keep != nil {
		return nil, fmt.Errorf("%w: a gocryptfs vault is not rebuilt under its own key", ErrUnsupported)
	}
	return Create(ctx, dir, password, CreateOptions{Format: gocryptfsFormat.ID, Cipher: crypto.CipherID(variant), ScryptLogN: logN})
}

func (gocryptfsKind) describe(i Info) []Fact { return describeGocryptfs(gocryptfsFormat, i) }
func (reverseKind) describe(i Info) []Fact   { return describeGocryptfs(reverseFormat, i) }

func describeGocryptfs(f *Format, i Info) []Fact {
	names := "encrypted (EME, per-directory IV)"
	switch {
	case i.PlaintextNames:
		names = "plaintext (not encrypted)"
	case i.DeterministicNames:
		names = "encrypted (EME, deterministic: no per-directory IV)"
	}
	longNames := "off"
	if i.LongNames {
		longNames = fmt.Sprintf("on: encrypted names over %d bytes are stored hashed", i.LongNameMax)
	}
	hkdf := "no"
	if i.HKDF {
		hkdf = "yes"
	}
	version := "gocryptfs v" + strconv.Itoa(i.Version)
	if f.Can.ReverseView {
		version += ", the config of a reverse view"
	}
	if i.Cipher == crypto.AEGIS {
		version += " with the " + gocryptfs.FlagAEGIS256X2 + " flag of gocryptfs's unreleased AEGIS branch: opens only in vaultui"
	}
	facts := []Fact{
		{"Cipher", i.CipherName},
		{"Opens in", f.OpensIn(i.Cipher).Detail()},
		{"Format", version},
		{"Creator", i.Creator},
		{"File names", names},
		{"Long names", longNames},
		{"HKDF", hkdf},
		scryptFact(i),
		{"Feature flags", strings.Join(i.FeatureFlags, " ")},
	}
	for _, c := range i.ConfigConflicts {
		facts = append(facts, Fact{"Config conflict", c + " (a sync tool's copy; this vault uses " + crypto.ConfName + ")"})
	}
	return facts
}

// reverseKind is a plaintext folder prepared for a reverse view: its .gocryptfs.reverse.conf
// (ours or gocryptfs's). It has no encrypted files of its own to walk; the mount serves it.
type reverseKind struct{}

func (reverseKind) info(dir string) (Info, error) {
	c, err := gocryptfs.LoadReverseConfig(dir)
	if err != nil {
		return Info{}, err
	}
	return configInfo(dir, c), nil
}

// CreateReverse prepares the existing folder dir for reverse mode (gocryptfs.CreateReverse):
// it writes dir/.gocryptfs.reverse.conf, as gocryptfs -init -reverse does, and returns the
// new master key (wipe it after showing it). The cipher must be AES-SIV (the zero value picks
// it); any other gives gocryptfs.ErrReverseCipher with the reason.
func CreateReverse(ctx context.Context, dir string, password []byte, opts CreateOptions) (masterKey []byte, err error) {
	if err := gocryptfs.CheckReverseCipher(opts.Cipher); err != nil {
		return nil, err
	}
	opts.Format = reverseFormat.ID
	return create(ctx, atomicfile.OS{}, dir, password, opts)
}

func (reverseKind) create(ctx context.Context, fsys atomicfile.FS, dir string, password []byte, opts CreateOptions) ([]byte, error) {
	return gocryptfs.CreateReverse(ctx, fsys, dir, password, opts.gocryptfsOptions())
}

// errReversePlain: the offline jobs read encrypted files, which a reverse view's folder has
// none of.
func errReversePlain(dir string) error {
	return fmt.Errorf("%w: %s is a plaintext folder prepared for a reverse view (%s): it holds no encrypted files; mount its encrypted view with vaultui mount --reverse", ErrUnsupported, dir, gocryptfs.ReverseConfName)
}

func (reverseKind) unlock(_ context.Context, dir string, _ []byte) (Volume, error) {
	return nil, errReversePlain(dir)
}

func (reverseKind) unlockWithKey(dir string, _ []byte, _ bool) (Volume, error) {
	return nil, errReversePlain(dir)
}

func (reverseKind) changePassword(ctx context.Context, fsys atomicfile.FS, dir string, f *Format, pc PasswordChange) (string, error) {
	// The folder is plaintext: nothing encrypted to try a master key on.
	return resealConfig(ctx, fsys, dir, gocryptfs.ReverseConfName, f, pc, func([]byte) error {
		return fmt.Errorf("%s: %w: a reverse view's folder holds no encrypted files to check the master key on", dir, ErrKeyUnverifiable)
	})
}

func (reverseKind) variant(dir string) (string, error) { return "", errReversePlain(dir) }
func (reverseKind) targetVariant(crypto.CipherID) (string, error) {
	return "", fmt.Errorf("%w: a reverse view's folder is not a conversion's result", ErrUnsupported)
}
func (reverseKind) createFor(_ context.Context, dir, _ string, _ []byte, _ int, _ Volume) ([]byte, error) {
	return nil, errReversePlain(dir)
}

// ConflictTally is what CountConflicts found (gocryptfs.ConflictTally).
type ConflictTally = gocryptfs.ConflictTally

// countConflicts: gocryptfs's encrypted names tell a sync tool's copy without the key.
func (gocryptfsKind) countConflicts(dir string) (ConflictTally, error) {
	return gocryptfs.CountConflicts(dir)
}

// resealer is a format that converts a vault to another of its content ciphers by resealing
// its files (Capabilities.Reseal; see Folder.PlanReseal and Folder.Reseal).
type resealer interface {
	planReseal(dir, to string, blockSize uint64) (Sizes, error)
	reseal(ctx context.Context, dir string, password []byte, newDir, to string, progress func(done int64)) (*Resealed, error)
}

// planReseal: gocryptfs.PlanReseal.
func (gocryptfsKind) planReseal(dir, to string, blockSize uint64) (Sizes, error) {
	plain, files, need, err := gocryptfs.PlanReseal(dir, crypto.CipherID(to), blockSize)
	return Sizes{PlainBytes: plain, Files: files, NeedBytes: need}, err
}

// reseal: gocryptfs.Reseal, the new vault as a Volume.
func (gocryptfsKind) reseal(ctx context.Context, dir string, password []byte, newDir, to string, progress func(done int64)) (*Resealed, error) {
	nv, r, err := gocryptfs.Reseal(ctx, dir, password, newDir, crypto.CipherID(to), progress)
	if err != nil {
		return nil, err
	}
	return &Resealed{gocryptfsVolume{nv.Volume()}, r}, nil
}
