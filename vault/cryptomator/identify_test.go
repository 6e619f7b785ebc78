package cryptomator

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/vault/layout"
)

// token is an (unsigned) vault.cryptomator with the given header and claims: Identify reads
// them without the key.
func token(header, claims string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(header)) + "." + enc([]byte(claims)) + "." + enc([]byte("signature"))
}

// TestIdentify: what a folder holds, told from its files without a password, and for what
// vaultui cannot open, an error that says what it is and what opens it.
func TestIdentify(t *testing.T) {
	const fileKid = `{"kid":"masterkeyfile:masterkey.cryptomator","typ":"JWT","alg":"HS256"}`
	for _, c := range []struct {
		name  string
		files map[string]string
		found bool
		is    error    // nil: opens
		says  []string // in the error
	}{
		{"empty", nil, false, nil, nil},
		{"format 8", map[string]string{ConfigFileName: token(fileKid, `{"format":8,"shorteningThreshold":220,"cipherCombo":"SIV_GCM"}`)}, true, nil, nil},
		{"format 8 CTRMAC", map[string]string{ConfigFileName: token(fileKid, `{"format":8,"shorteningThreshold":220,"cipherCombo":"SIV_CTRMAC"}`)}, true, nil, nil},
		{"format 9", map[string]string{ConfigFileName: token(fileKid, `{"format":9,"shorteningThreshold":220,"cipherCombo":"SIV_GCM"}`)}, true, ErrUnsupported, []string{"format 9", "newer Cryptomator"}},
		{"format 7 claims", map[string]string{ConfigFileName: token(fileKid, `{"format":7,"cipherCombo":"SIV_GCM"}`)}, true, ErrUnsupported, []string{"format 7", "Cryptomator opens it"}},
		{"hub", map[string]string{ConfigFileName: token(`{"kid":"hub+https://hub.example/vaults/1","alg":"ES384"}`, `{"format":8,"shorteningThreshold":220,"cipherCombo":"SIV_GCM"}`)}, true, ErrUnsupported, []string{"Hub"}},
		{"other combo", map[string]string{ConfigFileName: token(fileKid, `{"format":8,"shorteningThreshold":220,"cipherCombo":"XYZ"}`)}, true, ErrUnsupported, []string{`"XYZ"`}},
		{"format 7 masterkey only", map[string]string{MasterkeyFileName: `{"version":7,"scryptSalt":"AAAA"}`}, true, ErrUnsupported, []string{"format 7", "upgrades it"}},
		{"config lost", map[string]string{MasterkeyFileName: `{"version":999}`}, true, layout.ErrCorrupt, []string{ConfigFileName + " is missing"}},
		{"data only", map[string]string{"d/AB/CDEFGHIJKLMNOPQRSTUVWXYZ234567/dirid.c9r": "x"}, true, layout.ErrCorrupt, []string{"d/"}},
		{"garbage config", map[string]string{ConfigFileName: "hello"}, true, layout.ErrCorrupt, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range c.files {
				p := filepath.Join(dir, name)
				os.MkdirAll(filepath.Dir(p), 0o700)
				if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			found, err := Identify(dir)
			if found != c.found {
				t.Errorf("found %v, want %v", found, c.found)
			}
			if c.is == nil && err != nil || c.is != nil && !errors.Is(err, c.is) {
				t.Fatalf("error %v, want %v", err, c.is)
			}
			for _, s := range c.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
		})
	}
	// A FIFO as vault.cryptomator is damage, told at once (never waited on).
	dir := t.TempDir()
	if err := unix.Mkfifo(filepath.Join(dir, ConfigFileName), 0o600); err != nil {
		t.Fatal(err)
	}
	if found, err := Identify(dir); !found || !errors.Is(err, layout.ErrCorrupt) {
		t.Errorf("FIFO config: %v %v", found, err)
	}
}
