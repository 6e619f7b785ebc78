package cryptomator

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/layout"
)

// Identify says whether dir is a Cryptomator vault this package opens, from its files and
// without the password. found is false when nothing in dir marks a Cryptomator vault. With
// found true, err is nil for a vault of format 8 with a known cipher combo and its key in a
// masterkey file; else it names what the folder is and what opens it: an error wrapping
// ErrUnsupported (format 7 or older, format 9, a Hub vault, an unknown cipher combo) or
// layout.ErrCorrupt (the vault's data without its vault.cryptomator).
func Identify(dir string) (found bool, err error) {
	token, err := readMarker(dir, ConfigFileName)
	switch {
	case err == nil:
		return true, checkToken(dir, token)
	case !errors.Is(err, os.ErrNotExist):
		return true, err
	}
	// No vault.cryptomator: format 7 and older kept everything in masterkey.cryptomator.
	mk, err := readMarker(dir, MasterkeyFileName)
	if errors.Is(err, os.ErrNotExist) {
		if looksLikeData(dir) {
			return true, fmt.Errorf("%s: %w: it holds a Cryptomator vault's data (d/) but neither %s nor %s", dir, layout.ErrCorrupt, ConfigFileName, MasterkeyFileName)
		}
		return false, nil
	}
	if err != nil {
		return true, err
	}
	var f struct {
		Version *int `json:"version"`
	}
	if json.Unmarshal(mk, &f) != nil || f.Version == nil {
		return true, fmt.Errorf("%s: %w: %s is not a masterkey file and %s is missing", dir, layout.ErrCorrupt, MasterkeyFileName, ConfigFileName)
	}
	if *f.Version <= 7 {
		return true, fmt.Errorf("%s: %w: a Cryptomator vault of format %d; Cryptomator 1.5 or later opens it and upgrades it to format %d, which vaultui opens", dir, ErrUnsupported, *f.Version, Format)
	}
	return true, fmt.Errorf("%s: %w: a Cryptomator vault whose %s is missing (its %s is there); restore it from a backup or another copy of the vault", dir, layout.ErrCorrupt, ConfigFileName, MasterkeyFileName)
}

// checkToken checks the unverified claims of vault.cryptomator for what this package opens.
func checkToken(dir string, token []byte) error {
	// A Hub vault's token is signed with a key pair (ES384), which ParseJWT refuses: its key
	// location is read first.
	var h struct {
		Kid string `json:"kid"`
	}
	if head, _, ok := strings.Cut(strings.TrimSpace(string(token)), "."); ok {
		if b, err := base64.RawURLEncoding.DecodeString(head); err == nil && json.Unmarshal(b, &h) == nil && strings.HasPrefix(h.Kid, "hub+") {
			return fmt.Errorf("%s: %w: a Cryptomator Hub vault (its key is held by Hub); the Cryptomator app opens it with Hub", dir, ErrUnsupported)
		}
	}
	if _, err := crypto.ParseJWT(strings.TrimSpace(string(token))); err != nil {
		return fmt.Errorf("%s: %w: %v", filepath.Join(dir, ConfigFileName), layout.ErrCorrupt, err)
	}
	var c configClaims
	if err := json.Unmarshal(unverifiedClaims(token), &c); err != nil || c.Format == nil {
		return fmt.Errorf("%s: %w: claims are not those of a vault configuration", filepath.Join(dir, ConfigFileName), layout.ErrCorrupt)
	}
	switch {
	case *c.Format > Format:
		return fmt.Errorf("%s: %w: a Cryptomator vault of format %d; a newer Cryptomator opens it (vaultui opens format %d)", dir, ErrUnsupported, *c.Format, Format)
	case *c.Format < Format:
		return fmt.Errorf("%s: %w: a Cryptomator vault of format %d; Cryptomator opens it (vaultui opens format %d)", dir, ErrUnsupported, *c.Format, Format)
	case c.CipherCombo != string(SIVGCM) && c.CipherCombo != string(SIVCTRMAC):
		return fmt.Errorf("%s: %w: a Cryptomator vault with cipher combo %q; Cryptomator may open it (vaultui knows %s and %s)", dir, ErrUnsupported, c.CipherCombo, SIVGCM, SIVCTRMAC)
	}
	if _, err := MasterkeyFileOf(token); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	return nil
}

// readMarker reads a small file of dir that marks a vault, through the one opener of
// cipherdir files (layout.OpenFile: no symlink followed, never blocked on a FIFO); a marker
// that is not a regular file is damage.
func readMarker(dir, name string) ([]byte, error) {
	p := filepath.Join(dir, name)
	fd, err := layout.OpenFile(unix.AT_FDCWD, p, unix.O_RDONLY, 0, nil)
	if err != nil {
		if layout.IsNotRegular(err) {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxConfigFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if len(b) > maxConfigFile {
		return nil, fmt.Errorf("%s: %w: larger than %d bytes", p, layout.ErrCorrupt, maxConfigFile)
	}
	return b, nil
}

// looksLikeData reports whether dir holds a d/ folder of two-character folders, as every
// Cryptomator vault's data is stored.
func looksLikeData(dir string) bool {
	ents, err := os.ReadDir(filepath.Join(dir, DataDir))
	return err == nil && len(ents) > 0 &&
		!slices.ContainsFunc(ents, func(e os.DirEntry) bool { return !e.IsDir() || len(e.Name()) != 2 })
}
