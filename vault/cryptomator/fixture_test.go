package cryptomator

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The fixture siv-gcm-a is a vault made by an independent Go implementation of the format
// (rclone's unmerged Cryptomator backend, PR 8302), with a manifest of every entry. It was
// copied from the project's shared fixtures so that a fresh clone tests it.
const fixtureDir = "testdata/siv-gcm-a"

// rcloneEncoded is the name rclone stores for a local name: its default encoding replaces
// control characters with their Unicode control pictures (a tab becomes U+2409 "␉"). The
// manifest lists the names rclone was given; the vault holds the encoded ones, and that is
// what Cryptomator (and vaultui) show.
func rcloneEncoded(name string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 {
			return 0x2400 + r
		}
		return r
	}, name)
}

type manifestEntry struct {
	Path   string `json:"path"`
	Type   string `json:"type"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

func fixtureManifest(t *testing.T) []manifestEntry {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Entries []manifestEntry }
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m.Entries
}

func fixturePassword(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, "password"))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.TrimRight(b, "\n")
}

// extractFixture unpacks the fixture's cipher.tar into a fresh directory and returns the
// vault's folder.
func extractFixture(t *testing.T) string {
	t.Helper()
	f, err := os.Open(filepath.Join(fixtureDir, "cipher.tar"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dst := t.TempDir()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(h.Name, "..") {
			t.Fatalf("tar entry %q", h.Name)
		}
		p := filepath.Join(dst, h.Name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("tar entry %q of type %c", h.Name, h.Typeflag)
		}
	}
	return filepath.Join(dst, "cipher")
}

// fixtureKey unlocks the fixture's master key once for all tests (scrypt N=2^15).
var fixtureKey = sync.OnceValues(func() (*Masterkey, error) {
	b, err := os.ReadFile(filepath.Join(fixtureDir, "password"))
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "cryptomator-fixture")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	f, err := os.Open(filepath.Join(fixtureDir, "cipher.tar"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err != nil {
			return nil, err
		}
		if h.Name == "cipher/"+MasterkeyFileName {
			mk, err := io.ReadAll(tr)
			if err != nil {
				return nil, err
			}
			return UnlockMasterkey(mk, bytes.TrimRight(b, "\n"))
		}
	}
})

func mustFixtureKey(t *testing.T) *Masterkey {
	t.Helper()
	k, err := fixtureKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}
