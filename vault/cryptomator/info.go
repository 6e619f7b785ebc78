package cryptomator

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"

	"github.com/vaultui/vaultui/vault/layout"
)

// Info is what a vault's folder says without its password, for `vaultui info`: the claims of
// vault.cryptomator, read before their signature is checked (that needs the master key),
// and the masterkey file's scrypt cost. Like gocryptfs -info for gocryptfs.conf, it
// describes the files; it proves nothing, and nothing opens a vault from it.
type Info struct {
	Format              int
	CipherCombo         CipherCombo
	ShorteningThreshold int
	MasterkeyFile       string // the kid's file in the vault's folder
	ScryptLogN, ScryptR int
	ScryptSaltLen       int
}

// Describe names a vault's format as every front end shows it.
func Describe(format int, combo CipherCombo) string {
	return fmt.Sprintf("Cryptomator vault format %d, %s", format, combo)
}

// ReadInfo describes the vault in dir from its files, without the password. The files are
// read as Open reads them (bounded, no symlinks); errors name the file.
func ReadInfo(dir string) (Info, error) {
	v := &Vault{dir: dir}
	var err error
	if v.root, err = os.OpenRoot(dir); err != nil {
		return Info{}, err
	}
	defer v.root.Close()
	token, err := v.readSmall(ConfigFileName, maxConfigFile)
	if err != nil {
		return Info{}, err
	}
	var i Info
	if i.MasterkeyFile, err = MasterkeyFileOf(token); err != nil {
		return Info{}, fmt.Errorf("%s: %w", v.path(ConfigFileName), err)
	}
	var c configClaims
	if err := json.Unmarshal(unverifiedClaims(token), &c); err != nil || c.Format == nil || c.ShorteningThreshold == nil {
		return Info{}, fmt.Errorf("%s: %w: claims are not those of a vault configuration", v.path(ConfigFileName), layout.ErrCorrupt)
	}
	i.Format, i.CipherCombo, i.ShorteningThreshold = *c.Format, CipherCombo(c.CipherCombo), *c.ShorteningThreshold
	mk, err := v.readSmall(i.MasterkeyFile, maxConfigFile)
	if err != nil {
		return Info{}, err
	}
	var f masterkeyFile
	if err := json.Unmarshal(mk, &f); err != nil {
		return Info{}, fmt.Errorf("%s: %w: not a masterkey file: %v", v.path(i.MasterkeyFile), layout.ErrCorrupt, err)
	}
	for n := f.ScryptCostParam; n > 1; n >>= 1 {
		i.ScryptLogN++
	}
	i.ScryptR, i.ScryptSaltLen = f.ScryptBlockSize, len(f.ScryptSalt)
	return i, nil
}

// unverifiedClaims is the claims part of a compact JWT, decoded but not verified (nil when it
// does not decode): for describing a vault only.
func unverifiedClaims(token []byte) []byte {
	parts := bytes.Split(bytes.TrimSpace(token), []byte("."))
	if len(parts) != 3 {
		return nil
	}
	b, err := base64.RawURLEncoding.DecodeString(string(parts[1]))
	if err != nil {
		return nil
	}
	return b
}
