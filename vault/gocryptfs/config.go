package gocryptfs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/atomicfile"
	"github.com/vaultui/vaultui/vault/format"
	"github.com/vaultui/vaultui/vault/layout"
)

// Feature flags of gocryptfs.conf.
const (
	FlagGCMIV128          = "GCMIV128"
	FlagHKDF              = "HKDF"
	FlagDirIV             = "DirIV"
	FlagEMENames          = "EMENames"
	FlagLongNames         = "LongNames"
	FlagLongNameMax       = "LongNameMax"
	FlagRaw64             = "Raw64"
	FlagPlaintextNames    = "PlaintextNames"
	FlagAESSIV            = "AESSIV"
	FlagXChaCha20Poly1305 = "XChaCha20Poly1305"
	FlagFIDO2             = "FIDO2"
	FlagAEGIS256X2        = "AEGIS256X2"
)

// KnownFlags lists every feature flag vaultui understands.
var KnownFlags = []string{FlagGCMIV128, FlagHKDF, FlagDirIV, FlagEMENames, FlagLongNames, FlagLongNameMax,
	FlagRaw64, FlagPlaintextNames, FlagAESSIV, FlagXChaCha20Poly1305, FlagFIDO2, FlagAEGIS256X2}

// ConfigVersion is the only on-disk format version vaultui reads.
const ConfigVersion = 2

// configMax bounds what LoadConfig reads: real configs are under 1 KiB.
const configMax = 64 << 10

// FIDO2Params is gocryptfs's FIDO2 section; vaultui refuses such vaults but
// keeps the field so the JSON round-trips.
type FIDO2Params struct {
	CredentialID []byte
	HMACSalt     []byte
}

// Config is gocryptfs.conf. Field names, order and JSON encoding match
// gocryptfs exactly.
type Config struct {
	Creator      string
	EncryptedKey []byte
	ScryptObject crypto.ScryptKDF
	Version      uint16
	FeatureFlags []string
	FIDO2        *FIDO2Params `json:",omitempty"`
	LongNameMax  uint8        `json:",omitempty"`
}

// configError wraps layout.ErrCorrupt with a message naming the problem.
func configError(format string, args ...any) error {
	return fmt.Errorf("%w: gocryptfs.conf: %s", layout.ErrCorrupt, fmt.Sprintf(format, args...))
}

// ParseConfig parses and validates the content of gocryptfs.conf. It
// refuses, with an error wrapping layout.ErrCorrupt that names the problem: data
// that is not JSON or is truncated, a missing version, conflicting or
// missing flags, scrypt parameters outside gocryptfs's ranges, and a missing
// or malformed encrypted key. A version other than 2, unknown feature flags
// (named) and FIDO2 are refused with format.ErrUnsupported.
func ParseConfig(data []byte) (*Config, error) {
	var c Config
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, configError("file is empty")
	}
	if err := json.Unmarshal(data, &c); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF) || (errors.As(err, &syn) && syn.Offset >= int64(len(bytes.TrimRight(data, " \t\r\n")))):
			return nil, configError("truncated JSON (%v)", err)
		case errors.As(err, &syn):
			return nil, configError("not valid JSON at byte %d: %v", syn.Offset, err)
		case errors.As(err, &typ):
			return nil, configError("field %s has the wrong type: %v", typ.Field, err)
		}
		return nil, configError("not valid JSON: %v", err)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// LoadConfig reads and validates cipherdir/gocryptfs.conf. A missing file
// is format.ErrNotFound.
func LoadConfig(cipherdir string) (*Config, error) {
	return LoadConfigFile(cipherdir, crypto.ConfName)
}

// LoadConfigFile is LoadConfig for the config file name in dir: gocryptfs.conf (crypto.ConfName), or
// .gocryptfs.reverse.conf in a folder served in reverse mode.
func LoadConfigFile(cipherdir, name string) (*Config, error) {
	p := filepath.Join(cipherdir, name)
	f, err := openRegular(p)
	if errors.Is(err, os.ErrNotExist) {
		// The folder may hold gocryptfs's other config: a vault is not a reverse view's
		// folder, nor the other way round.
		for other, what := range map[string]string{crypto.ConfName: "gocryptfs", ReverseConfName: "gocryptfs reverse view"} {
			if _, err := os.Lstat(filepath.Join(cipherdir, other)); err == nil && other != name {
				return nil, fmt.Errorf("%s: %w: it is a %s vault (%s), not one with %s", cipherdir, format.ErrUnsupported, what, other, name)
			}
		}
		return nil, fmt.Errorf("%s: %w (no %s)", cipherdir, format.ErrNotFound, name)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, configMax+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	if len(data) > configMax {
		return nil, fmt.Errorf("%s: %w", p, configError("larger than %d bytes", configMax))
	}
	c, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cipherdir, err)
	}
	return c, nil
}

// Has reports whether the feature flag is set.
func (c *Config) Has(flag string) bool { return slices.Contains(c.FeatureFlags, flag) }

// Cipher returns the content cipher the flags select.
func (c *Config) Cipher() crypto.CipherID {
	switch {
	case c.Has(FlagAEGIS256X2):
		return crypto.AEGIS
	case c.Has(FlagXChaCha20Poly1305):
		return crypto.XChaCha
	case c.Has(FlagAESSIV):
		return crypto.AESSIV
	}
	return crypto.AESGCM
}

// PlaintextNames reports whether names are stored unencrypted.
func (c *Config) PlaintextNames() bool { return c.Has(FlagPlaintextNames) }

// DeterministicNames reports whether names are encrypted without
// per-directory IVs (an all-zero IV everywhere, no gocryptfs.diriv files).
func (c *Config) DeterministicNames() bool { return !c.PlaintextNames() && !c.Has(FlagDirIV) }

// NameLimit returns the longest encoded name stored as is, for
// crypto.NewNameTransform: 0 (the default 255), LongNameMax, or -1 when long
// names are disabled.
func (c *Config) NameLimit() int {
	switch {
	case !c.Has(FlagLongNames):
		return -1
	case c.Has(FlagLongNameMax):
		return int(c.LongNameMax)
	}
	return 0
}

// Validate checks c the way ParseConfig does.
func (c *Config) Validate() error {
	// A version or flag vaultui does not know is a vault it cannot open, not a damaged one
	// (exit code 10, not 4); only a missing version is damage.
	if c.Version == 0 {
		return configError("Version is missing or 0")
	}
	if c.Version != ConfigVersion {
		return fmt.Errorf("%w: gocryptfs.conf: on-disk format version %d (vaultui reads version %d; gocryptfs 1.x/2.x and later versions may open it)", format.ErrUnsupported, c.Version, ConfigVersion)
	}
	for _, f := range c.FeatureFlags {
		if !slices.Contains(KnownFlags, f) {
			return fmt.Errorf("%w: gocryptfs.conf: unknown feature flag %q: this vault needs a newer program", format.ErrUnsupported, f)
		}
	}
	if c.Has(FlagFIDO2) || c.FIDO2 != nil {
		return fmt.Errorf("%w: FIDO2: this vault is unlocked with a FIDO2 security key, which vaultui does not support; use gocryptfs -fido2", format.ErrUnsupported)
	}
	if err := c.ScryptObject.Validate(); err != nil {
		return configError("%v", err)
	}
	// Content cipher: flag a conflicts with flag b, or needs it.
	has := c.Has
	for _, r := range []struct {
		a, b  string
		needs bool
	}{
		{FlagXChaCha20Poly1305, FlagAESSIV, false}, {FlagAEGIS256X2, FlagAESSIV, false}, {FlagAEGIS256X2, FlagGCMIV128, false},
		{FlagAEGIS256X2, FlagXChaCha20Poly1305, false}, {FlagAEGIS256X2, FlagHKDF, true},
		{FlagXChaCha20Poly1305, FlagGCMIV128, false}, {FlagXChaCha20Poly1305, FlagHKDF, true}, {FlagAESSIV, FlagGCMIV128, true},
	} {
		switch {
		case has(r.a) && !r.needs && has(r.b):
			return configError("conflicting feature flags %s and %s", r.a, r.b)
		case has(r.a) && r.needs && !has(r.b):
			return configError("feature flag %s requires %s", r.a, r.b)
		}
	}
	if !has(FlagAEGIS256X2) && !has(FlagXChaCha20Poly1305) && !has(FlagAESSIV) && !has(FlagGCMIV128) {
		return configError("AES-GCM requires feature flag GCMIV128 (vaults from gocryptfs before 1.0 are not supported)")
	}
	// Names.
	if has(FlagPlaintextNames) {
		for _, f := range []string{FlagEMENames, FlagDirIV, FlagLongNames, FlagRaw64, FlagLongNameMax} {
			if has(f) {
				return configError("conflicting feature flags PlaintextNames and %s", f)
			}
		}
	} else if !has(FlagEMENames) {
		return configError("names are encrypted but feature flag EMENames is missing (vaults from gocryptfs before 0.6 are not supported)")
	}
	switch {
	case c.LongNameMax != 0 && !has(FlagLongNameMax):
		return configError("LongNameMax is %d but feature flag LongNameMax is not set", c.LongNameMax)
	case c.LongNameMax == 0 && has(FlagLongNameMax):
		return configError("feature flag LongNameMax is set but LongNameMax is 0")
	case has(FlagLongNameMax) && !has(FlagLongNames):
		return configError("feature flag LongNameMax requires LongNames")
	case has(FlagLongNameMax) && c.LongNameMax < crypto.MinLongNameMax:
		return configError("LongNameMax %d is below the minimum %d", c.LongNameMax, crypto.MinLongNameMax)
	}
	// The sealed master key: nonce, 32-byte key, tag.
	nonce := 12
	if has(FlagHKDF) {
		nonce = 16
	}
	if want := nonce + crypto.MasterKeyLen + crypto.TagLen; len(c.EncryptedKey) != want {
		return configError("EncryptedKey is %d bytes, want %d", len(c.EncryptedKey), want)
	}
	return nil
}

// Marshal returns the file content gocryptfs writes: tab-indented JSON and a
// final newline.
func (c *Config) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(c, "", "\t")
	if err != nil {
		return nil, fmt.Errorf("encoding config: %w", err)
	}
	return append(b, '\n'), nil
}

// ConfigConflicts lists the sync tools' conflict copies of gocryptfs.conf in cipherdir (after
// a password change on two machines, say); the vault uses gocryptfs.conf.
func ConfigConflicts(cipherdir string) []string {
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

// WriteConfig replaces cipherdir/gocryptfs.conf atomically (see atomicfile.Replace) through
// gocryptfs.conf.tmp, mode 0400, as gocryptfs does.
func WriteConfig(fsys atomicfile.FS, cipherdir string, c *Config) error {
	return writeConfigNamed(fsys, cipherdir, crypto.ConfName, c)
}

// writeConfigNamed is WriteConfig for the config file name in dir.
func writeConfigNamed(fsys atomicfile.FS, cipherdir, name string, c *Config) error {
	data, err := c.Marshal()
	if err != nil {
		return err
	}
	final := filepath.Join(cipherdir, name)
	if err := atomicfile.Replace(fsys, final, final+".tmp", data, 0o400); err != nil {
		return err
	}
	return fsys.SyncDir(cipherdir)
}

// openRegular opens a small file of the vault's own format (gocryptfs.conf, gocryptfs.diriv)
// for reading. The cipherdir may be written by someone else, so the file is opened as every
// file of the cipherdir is (layout.OpenFile): without following a symbolic link and without
// blocking (a FIFO would otherwise hang the open and the read forever, in the CLI and in the
// daemon), and anything but a regular file is refused with an error wrapping layout.ErrCorrupt that
// says what it is. A missing file is returned as the *fs.PathError wrapping fs.ErrNotExist.
func openRegular(p string) (*os.File, error) {
	fd, err := layout.OpenFile(unix.AT_FDCWD, p, unix.O_RDONLY, 0, nil)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			// O_NOFOLLOW fails with ELOOP on a symbolic link as the last component; a loop
			// further up the path is reported by Lstat's own error.
			if fi, lerr := os.Lstat(p); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
				return nil, fmt.Errorf("%s: %w: it is a symbolic link, not a regular file", p, layout.ErrCorrupt)
			}
			return nil, fmt.Errorf("%s: %w: a symbolic link loop in its path", p, layout.ErrCorrupt)
		}
		if layout.IsNotRegular(err) {
			return nil, err
		}
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	return os.NewFile(uintptr(fd), p), nil
}
