package cryptomator

import "crypto/rand"

// What a mount (mountmgr/vfs) needs to work on a vault's cipher tree through descriptors of
// its own, beside the rules of an entry's folder (entries.go) it shares with Vault.

// Dir returns the vault's folder.
func (v *Vault) Dir() string { return v.dir }

// Names returns the vault's name encryption.
func (v *Vault) Names() *Names { return v.names }

// ShorteningThreshold is the longest encrypted name (with ".c9r") stored as it is.
func (v *Vault) ShorteningThreshold() int { return v.config.ShorteningThreshold }

// NewDirID returns a fresh directory ID: a random UUID, as Cryptomator makes them.
func NewDirID() (string, error) {
	var u [16]byte
	if _, err := rand.Read(u[:]); err != nil {
		return "", err
	}
	return uuidString(u), nil
}
