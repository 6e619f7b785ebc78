package vfs

import (
	"fmt"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault"
	"github.com/vaultui/vaultui/vault/cryptomator"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

// GocryptfsVolume is an unlocked gocryptfs vault.
type GocryptfsVolume struct {
	// Dir is the cipherdir.
	Dir     string
	Content *crypto.ContentEnc
	// Names is nil with PlaintextNames.
	Names *crypto.NameTransform
	// PerDirIV: names are encrypted with per-directory IVs from gocryptfs.diriv files (feature
	// flag DirIV); false with deterministic names (all-zero IV, no diriv files).
	PerDirIV bool
	// XattrNames encrypts extended attribute names (with plaintext names too); nil turns
	// extended attributes off.
	XattrNames *crypto.NameTransform
}

func (v GocryptfsVolume) CipherDir() string { return v.Dir }

func (v GocryptfsVolume) serve(f *fsys) error {
	if v.Content == nil {
		return fmt.Errorf("vault is not unlocked")
	}
	f.enc, f.names, f.xattrNames = v.Content, v.Names, v.XattrNames
	f.perDirIV = v.Names != nil && v.PerDirIV
	f.plainNames = v.Names == nil
	f.tree, f.content = gocryptfsTree{f}, gocryptfsContent{v.Content}
	return nil
}

// CryptomatorVolume is an unlocked Cryptomator vault (format 8).
type CryptomatorVolume struct{ Vault *cryptomator.Vault }

func (v CryptomatorVolume) CipherDir() string { return v.Vault.Dir() }

func (v CryptomatorVolume) serve(f *fsys) error {
	c := v.Vault
	t := &cryptomatorTree{f: f, names: c.Names(), content: c.Content(), threshold: c.ShorteningThreshold()}
	rd, err := t.openByID([]byte{})
	if err != nil {
		return fmt.Errorf("the root directory's folder: %w", err)
	}
	f.rootDir = rd
	f.tree, f.content = t, cryptomatorContent{c.Content()}
	return nil
}

// VolumeOf is the mount's Volume of a vault unlocked by package vault, of any format.
func VolumeOf(v vault.Volume) (Volume, error) {
	switch k := v.Keys().(type) {
	case *gocryptfs.Vault:
		return GocryptfsVolume{Dir: k.Dir, Content: k.Content, Names: k.Names, PerDirIV: k.Config.Has(gocryptfs.FlagDirIV), XattrNames: k.XattrNames}, nil
	case *cryptomator.Vault:
		return CryptomatorVolume{k}, nil
	}
	return nil, fmt.Errorf("vfs: %s: no mount for %s vaults", v.Folder(), v.FormatName())
}

// Capabilities of the gocryptfs tree: it stores anything a local file system does.
func (gocryptfsTree) hardLinks() bool    { return true }
func (gocryptfsTree) specialFiles() bool { return true }

// configFile: gocryptfs.conf is in the root directory's folder, and not shown.
func (t gocryptfsTree) configFile(name string) bool { return name == crypto.ConfName }

// Capabilities of the Cryptomator tree: files, directories and symlinks only, as the format
// stores.
func (*cryptomatorTree) hardLinks() bool    { return false }
func (*cryptomatorTree) specialFiles() bool { return false }

// configFile: a Cryptomator vault's configuration is outside its root directory's folder.
func (*cryptomatorTree) configFile(string) bool { return false }

// makeEntry: a Cryptomator tree makes no hard links or special files (hardLinks,
// specialFiles are false), so it is never called.
func (*cryptomatorTree) makeEntry(int, storedEntry, func() error) error { return errNoSpecial }

var errNoSpecial = fmt.Errorf("vfs: the format stores no hard links or special files")
