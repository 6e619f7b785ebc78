// Package cmfixture gives tests the Cryptomator fixtures in vault/cryptomator/testdata, vaults
// made by an independent Go implementation of the format (rclone's unmerged Cryptomator
// backend, PR 8302), each with its password and the manifest of every entry with its size and
// SHA-256: siv-gcm-a, the shared fixture, and rclone-b, a vault rclone created itself with
// more variety (sizes around the 32 KiB chunk, empty files and folders, deep nesting, a name in
// NFD, a name encrypting to exactly the shortening threshold). The format's own tests, the
// walker's and the CLI's use them, so that each checks the same vault against the same
// manifest. It holds no format code: it finds files by their sizes (format.Geometry), never by
// decrypting. The package functions are siv-gcm-a's.
package cmfixture

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/vault/format"
)

// Fixture is one fixture, by its folder's name in testdata.
type Fixture string

// The fixtures.
const (
	SIVGCMA Fixture = "siv-gcm-a"
	RcloneB Fixture = "rclone-b"
)

// Dir is the fixture's folder (cipher.tar, password, manifest.json).
func (f Fixture) Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", string(f))
}

// Dir is siv-gcm-a's folder.
func Dir() string { return SIVGCMA.Dir() }

// Geometry is the fixture's (SIV_GCM).
var Geometry = format.Geometry{HeaderLen: 68, BlockSize: 32 << 10, BlockOverhead: 28, EmptyHasHeader: true}

// Entry is one entry of the manifest: Path as rclone was given it (see Shown).
type Entry struct {
	Path   string `json:"path"`
	Type   string `json:"type"` // "file" or "dir"
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Manifest returns the manifest's entries.
func (f Fixture) Manifest() ([]Entry, error) {
	b, err := os.ReadFile(filepath.Join(f.Dir(), "manifest.json"))
	if err != nil {
		return nil, err
	}
	var m struct{ Entries []Entry }
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m.Entries, nil
}

// Password returns siv-gcm-a's password.
func Password() ([]byte, error) { return SIVGCMA.Password() }

// Password returns the vault's password.
func (f Fixture) Password() ([]byte, error) {
	b, err := os.ReadFile(f.PasswordFile())
	return bytes.TrimRight(b, "\n"), err
}

// PasswordFile is the file holding the password (with a trailing newline).
func (f Fixture) PasswordFile() string { return filepath.Join(f.Dir(), "password") }

// Shown is the name a manifest path has in the vault: rclone's default encoding replaces
// control characters with their Unicode control pictures (a tab becomes U+2409 "␉"), and
// that is what Cryptomator (and vaultui) show.
func Shown(name string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 {
			return 0x2400 + r
		}
		return r
	}, name)
}

// Extract unpacks cipher.tar into dst and returns the vault's folder.
func (f Fixture) Extract(dst string) (string, error) {
	tf, err := os.Open(filepath.Join(f.Dir(), "cipher.tar"))
	if err != nil {
		return "", err
	}
	defer tf.Close()
	tr := tar.NewReader(tf)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return filepath.Join(dst, "cipher"), nil
		}
		if err != nil {
			return "", err
		}
		if strings.Contains(h.Name, "..") {
			return "", fmt.Errorf("tar entry %q", h.Name)
		}
		p := filepath.Join(dst, h.Name)
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o755)
		case tar.TypeReg:
			var b []byte
			if b, err = io.ReadAll(tr); err == nil {
				err = os.WriteFile(p, b, 0o644)
			}
		default:
			err = fmt.Errorf("tar entry %q of type %c", h.Name, h.Typeflag)
		}
		if err != nil {
			return "", err
		}
	}
}

// Folder is siv-gcm-a's Folder.
func Folder(t testing.TB) string {
	t.Helper()
	return SIVGCMA.Folder(t)
}

// Folder is Extract into a directory of the test's, failing the test on an error.
func (f Fixture) Folder(t testing.TB) string {
	t.Helper()
	dir, err := f.Extract(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// CheckTree is siv-gcm-a's CheckTree.
func CheckTree(dir string) error { return SIVGCMA.CheckTree(dir) }

// CheckTree reports how the plaintext tree in dir differs from the manifest: every entry
// must be there with its type, size and SHA-256, and nothing else.
func (f Fixture) CheckTree(dir string) error {
	entries, err := f.Manifest()
	if err != nil {
		return err
	}
	want := map[string]Entry{}
	for _, e := range entries {
		want[Shown(e.Path)] = e
	}
	var diffs []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		e, ok := want[filepath.ToSlash(rel)]
		delete(want, filepath.ToSlash(rel))
		switch {
		case !ok:
			diffs = append(diffs, rel+": not in the manifest")
		case d.IsDir() != (e.Type == "dir") || !d.IsDir() && !d.Type().IsRegular():
			diffs = append(diffs, fmt.Sprintf("%s: a %v, the manifest says %s", rel, d.Type(), e.Type))
		case e.Type == "file":
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			if int64(len(b)) != e.Size || hex.EncodeToString(sum[:]) != e.SHA256 {
				diffs = append(diffs, fmt.Sprintf("%s: %d bytes, SHA-256 %x; the manifest says %d, %s", rel, len(b), sum, e.Size, e.SHA256))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for p := range want {
		diffs = append(diffs, p+": missing")
	}
	if len(diffs) > 0 {
		return fmt.Errorf("the tree differs from the manifest:\n%s", strings.Join(diffs, "\n"))
	}
	return nil
}

// FlipInChunk flips one byte inside chunk n of the cipher file of the only file of plainSize
// bytes in the vault in folder (found by its cipher size) and returns that file's path.
func FlipInChunk(folder string, plainSize, n int64) (string, error) {
	size := Geometry.CipherSize(plainSize)
	var found []string
	err := filepath.WalkDir(filepath.Join(folder, "d"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		if info, err := d.Info(); err == nil && info.Size() == size {
			found = append(found, p)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if len(found) != 1 {
		return "", fmt.Errorf("%d cipher files of %d bytes (a file of %d), want one", len(found), size, plainSize)
	}
	off := int64(Geometry.HeaderLen) + n*int64(Geometry.CipherBlockSize()) + 100
	f, err := os.OpenFile(found[0], os.O_RDWR, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		return "", err
	}
	b[0] ^= 0x01
	if _, err := f.WriteAt(b, off); err != nil {
		return "", err
	}
	return found[0], nil
}

// CopyAsConflict copies the .c9r file cipherFile as a sync tool would keep a second version
// of it: marker (e.g. " (conflicted copy 2026-11-30)") inserted before .c9r. It returns the
// copy's path.
func CopyAsConflict(cipherFile, marker string) (string, error) {
	b, err := os.ReadFile(cipherFile)
	if err != nil {
		return "", err
	}
	dst := strings.TrimSuffix(cipherFile, ".c9r") + marker + ".c9r"
	return dst, os.WriteFile(dst, b, 0o644)
}
