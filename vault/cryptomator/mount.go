package cryptomator

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// What a mount (mountmgr/vfs) needs to work on a vault's cipher tree through descriptors of
// its own, rather than through Vault's path-based reader and writer.

// Names of the cipher tree, as a mount meets them.
const (
	SuffixC9R     = suffixC9R
	SuffixC9S     = suffixC9S
	NameFile      = nameFile
	ContentsFile  = contentsFile
	DirFile       = dirFile
	SymlinkFile   = symlinkFile
	DirIDBackup   = dirIDBackup
	MaxDirIDLen   = maxDirIDLen
	MaxNameFile   = maxNameFile
	MaxSymlinkLen = maxSymlinkLen
)

// TempName is a fresh temporary name, for an entry being built or taken apart: not an entry
// of the format, which readers skip.
func TempName() string {
	var b [8]byte
	rand.Read(b[:])
	return tempPrefix + hex.EncodeToString(b[:])
}

// IsTemp reports whether a stored name is a temporary one (TempName).
func IsTemp(name string) bool { return strings.HasPrefix(name, tempPrefix) }

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
