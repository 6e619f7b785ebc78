package vault

import "github.com/vaultui/vaultui/crypto"

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
