package vault

import (
	"context"
	"fmt"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/atomicfile"
	"github.com/vaultui/vaultui/vault/cryptomator"
	"github.com/vaultui/vaultui/vault/format"
)

// cryptomatorKind is Cryptomator's vault format 8 behind Folder (package vault/cryptomator).
type cryptomatorKind struct{}

// create makes a Cryptomator vault of the default cipher combo in cipherdir (createFor).
func (k cryptomatorKind) create(ctx context.Context, _ atomicfile.FS, cipherdir string, password []byte, opts CreateOptions) ([]byte, error) {
	return k.createFor(ctx, cipherdir, "", password, opts.ScryptLogN, nil)
}

func (cryptomatorKind) info(dir string) (Info, error) {
	ci, err := cryptomator.ReadInfo(dir)
	if err != nil {
		return Info{}, cryptomatorError(dir, err)
	}
	content := map[cryptomator.CipherCombo]string{
		cryptomator.SIVGCM:    "AES-256-GCM content, AES-SIV names",
		cryptomator.SIVCTRMAC: "AES-256-CTR + HMAC-SHA256 content, AES-SIV names",
	}[ci.CipherCombo]
	if content == "" {
		content = "unknown (" + string(ci.CipherCombo) + ")"
	}
	return Info{
		Dir: dir, Format: cryptomator.Describe(ci.Format, ci.CipherCombo), Version: ci.Format,
		CipherName: content, LongNames: true, LongNameMax: ci.ShorteningThreshold,
		ScryptN: 1 << ci.ScryptLogN, ScryptLogN: ci.ScryptLogN, ScryptR: ci.ScryptR, ScryptP: 1,
		ScryptKeyLen: 32, ScryptSaltLen: ci.ScryptSaltLen,
	}, nil
}

func (cryptomatorKind) unlock(ctx context.Context, dir string, password []byte) (Volume, error) {
	v, err := cryptomator.Open(ctx, dir, password)
	if err != nil {
		return nil, cryptomatorError(dir, err)
	}
	return cryptomatorVolume{v.Volume()}, nil
}

// cryptomatorVolume is a Cryptomator vault as a Volume: the walker's volume of package
// cryptomator, with what this package adds (conflicts: cmsettle.go).
type cryptomatorVolume struct{ *cryptomator.Volume }

// unlockWithKey: the raw key (the 64 bytes of its encryption and MAC keys) must sign the
// vault's configuration, so it is always verified.
func (cryptomatorKind) unlockWithKey(dir string, raw []byte, _ bool) (Volume, error) {
	v, err := openCryptomatorWithKey(dir, raw)
	if err != nil {
		return nil, err
	}
	return cryptomatorVolume{v.Volume()}, nil
}

func openCryptomatorWithKey(dir string, raw []byte) (*cryptomator.Vault, error) {
	k, err := cryptomator.MasterkeyFromRaw(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	defer k.Wipe()
	v, err := cryptomator.OpenWithKey(dir, k)
	if err != nil {
		return nil, fmt.Errorf("%w: the master key does not open this vault: %w", ErrWrongPassword, cryptomatorError(dir, err))
	}
	return v, nil
}

// changePassword rewrites the masterkey file the vault's vault.cryptomator names under the new
// password, with a new salt, atomically. The key is opened with the old password or given
// raw; either way the vault's signed configuration must verify under it, so a wrong key is
// refused.
func (cryptomatorKind) changePassword(ctx context.Context, fsys atomicfile.FS, dir string, f *Format, pc PasswordChange) (string, error) {
	info, err := cryptomator.ReadInfo(dir)
	if err != nil {
		return "", cryptomatorError(dir, err)
	}
	var v *cryptomator.Vault
	if pc.MasterKey != nil {
		v, err = openCryptomatorWithKey(dir, pc.MasterKey)
	} else if v, err = cryptomator.Open(ctx, dir, pc.OldPassword); err != nil {
		err = cryptomatorError(dir, err)
	}
	if err != nil {
		return "", err
	}
	defer v.Close()
	data, err := v.LockKey(ctx, pc.NewPassword, resealCost(pc.ScryptLogN, info.ScryptLogN, f.ScryptLogN.Default))
	if err != nil {
		return "", cryptomatorError(dir, err)
	}
	return replaceKeeping(fsys, dir, info.MasterkeyFile, data, 0o600)
}

func (cv cryptomatorVolume) Format() *Format             { return cryptomatorFormat }
func (cryptomatorVolume) ContentCipher() crypto.CipherID { return "" }
func (cv cryptomatorVolume) Keys() any                   { return cv.Vault() }

func (cryptomatorKind) variant(dir string) (string, error) {
	i, err := cryptomator.ReadInfo(dir)
	if err != nil {
		return "", cryptomatorError(dir, err)
	}
	return string(i.CipherCombo), nil
}

// targetVariant: a conversion makes what Cryptomator creates, SIV_GCM (AES-GCM content);
// SIV_CTRMAC is only read, in vaults migrated from format 7.
func (cryptomatorKind) targetVariant(to crypto.CipherID) (string, error) {
	if to == "" || to == crypto.AESGCM {
		return string(cryptomator.SIVGCM), nil
	}
	return "", fmt.Errorf("%w: a Cryptomator vault's content is encrypted with AES-GCM (cipher combo %s), not %s",
		ErrUnsupported, cryptomator.SIVGCM, to)
}

// createFor makes a Cryptomator vault of the cipher combo variant ("": the default) in dir
// (cryptomator.Create, which writes vault.cryptomator last and removes what it wrote on
// failure) and returns its raw 64-byte master key, or nil with keep, whose key it uses. The
// folders it made are removed again on failure, as for a gocryptfs vault.
func (cryptomatorKind) createFor(ctx context.Context, dir, variant string, password []byte, logN int, keep Volume) ([]byte, error) {
	opts := cryptomator.CreateOptions{Combo: cryptomator.CipherCombo(variant), ScryptLogN: logN}
	if keep != nil {
		var ok bool
		if opts.Keep, ok = keep.Keys().(*cryptomator.Vault); !ok {
			return nil, fmt.Errorf("%w: the master key of a %s vault cannot make a Cryptomator vault", ErrUnsupported, keep.Format().Name)
		}
	}
	undo, err := prepareEmptyDir(dir)
	if err != nil {
		return nil, err
	}
	v, err := cryptomator.Create(ctx, dir, password, opts)
	if err != nil {
		undo()
		return nil, cryptomatorError(dir, err)
	}
	defer v.Close()
	if keep != nil {
		return nil, nil
	}
	return v.RawMasterkey(), nil
}

func (cv cryptomatorVolume) Builder() format.Builder { return cv.Vault().Builder() }

func (cryptomatorKind) describe(i Info) []Fact {
	return []Fact{
		{"Format", i.Format},
		{"Cipher", i.CipherName},
		{"Opens in", cryptomatorFormat.OpensIn("").Detail()},
		{"File names", "encrypted (AES-SIV, bound to the directory's ID)"},
		{"Long names", fmt.Sprintf("encrypted names over %d characters are stored shortened (.c9s)", i.LongNameMax)},
		scryptFact(i),
	}
}
