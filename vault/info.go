package vault

import (
	"slices"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/layout"
)

// Info describes a vault from its config alone, without the password and
// without secrets (like gocryptfs -info).
type Info struct {
	Dir                string          `json:"cipherdir"`
	Creator            string          `json:"creator"`
	Version            int             `json:"version"`
	Cipher             crypto.CipherID `json:"cipher"`      // e.g. "aes-gcm"
	CipherName         string          `json:"cipher_name"` // e.g. "AES-256-GCM"
	FeatureFlags       []string        `json:"feature_flags"`
	HKDF               bool            `json:"hkdf"`
	PlaintextNames     bool            `json:"plaintext_names"`
	DeterministicNames bool            `json:"deterministic_names"`
	LongNames          bool            `json:"long_names"`
	LongNameMax        int             `json:"long_name_max"` // effective limit; 0 without long names
	Raw64              bool            `json:"raw64"`
	ScryptN            int             `json:"scrypt_n"`
	ScryptLogN         int             `json:"scrypt_logn"`
	ScryptR            int             `json:"scrypt_r"`
	ScryptP            int             `json:"scrypt_p"`
	ScryptKeyLen       int             `json:"scrypt_keylen"`
	ScryptSaltLen      int             `json:"scrypt_salt_len"`
	EncryptedKeyLen    int             `json:"encrypted_key_len"`
	// FormatID is the ID of its row in the table of formats (Format.ID).
	FormatID string `json:"format_id"`
	// Format names the format of a vault that is not a gocryptfs one ("Cryptomator vault
	// format 8, SIV_GCM"; Version is then its format number); "" for gocryptfs.
	Format string `json:"format,omitempty"`
	// ConfigConflicts lists sync tools' conflict copies of gocryptfs.conf beside it (after a
	// password change on two machines, say); the vault uses gocryptfs.conf.
	ConfigConflicts []string `json:"config_conflicts,omitempty"`
}

// ReadInfo describes the vault in cipherdir, of any format, from its files (Folder.Info).
func ReadInfo(cipherdir string) (Info, error) {
	f, err := Open(cipherdir)
	if err != nil {
		return Info{}, err
	}
	return f.Info()
}

// configConflicts lists the conflict copies of gocryptfs.conf in cipherdir.
func configConflicts(cipherdir string) []string {
	ents, err := layout.ReadDirPath(cipherdir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if _, ok := layout.ParseConflict(e.Name(), func(base string) bool { return base == crypto.ConfName }); ok {
			out = append(out, e.Name())
		}
	}
	return out
}

// Info describes c (for the vault in dir).
func (c *Config) Info(dir string) Info {
	i := Info{
		Dir:                dir,
		Creator:            c.Creator,
		Version:            int(c.Version),
		Cipher:             c.Cipher(),
		CipherName:         c.Cipher().String(),
		FeatureFlags:       slices.Clone(c.FeatureFlags),
		HKDF:               c.Has(FlagHKDF),
		PlaintextNames:     c.PlaintextNames(),
		DeterministicNames: c.DeterministicNames(),
		LongNames:          c.Has(FlagLongNames),
		Raw64:              c.Has(FlagRaw64),
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
