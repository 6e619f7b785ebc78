package vault

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/cryptomator"
	"github.com/vaultui/vaultui/vault/cryptomator/cmfixture"
)

// TestIdentify: a folder's kind is told once, from its files, for every entry point: a
// gocryptfs vault, a Cryptomator vault, a plaintext folder prepared for reverse mode (by
// vaultui or gocryptfs: the same file), and for what vaultui knows but cannot open, an error
// that says what it is and what opens it.
func TestIdentify(t *testing.T) {
	gocryptfsDir := loadFixture(t, "gcm-default").dir
	reverseDir := t.TempDir()
	if _, err := CreateReverse(context.Background(), reverseDir, []byte("pw"), CreateOptions{ScryptLogN: 10}); err != nil {
		t.Fatal(err)
	}
	format9 := t.TempDir()
	cm := cmfixture.Folder(t)
	token, err := os.ReadFile(filepath.Join(cm, cryptomator.ConfigFileName))
	if err != nil {
		t.Fatal(err)
	}
	// A vault.cryptomator whose claims say format 9 (the signature no longer matches, which
	// only the key could tell).
	parts := strings.Split(strings.TrimSpace(string(token)), ".")
	parts[1] = "eyJmb3JtYXQiOjksInNob3J0ZW5pbmdUaHJlc2hvbGQiOjIyMCwiY2lwaGVyQ29tYm8iOiJTSVZfR0NNIn0"
	os.WriteFile(filepath.Join(format9, cryptomator.ConfigFileName), []byte(strings.Join(parts, ".")), 0o600)
	lost := t.TempDir()
	os.WriteFile(filepath.Join(lost, cryptomator.MasterkeyFileName), []byte(`{"version":999}`), 0o600)

	for _, c := range []struct {
		name, dir, id string
		err           error
		says          string
	}{
		{"gocryptfs", gocryptfsDir, "gocryptfs", nil, ""},
		{"cryptomator", cm, "cryptomator", nil, ""},
		{"reverse", reverseDir, "gocryptfs-reverse", nil, ""},
		{"format 9", format9, "", ErrUnsupported, "format 9"},
		{"config lost", lost, "", ErrCorrupt, cryptomator.ConfigFileName + " is missing"},
		{"empty", t.TempDir(), "", ErrNotFound, "is not a vault (no gocryptfs.conf, vault.cryptomator or .gocryptfs.reverse.conf)"},
		{"missing", filepath.Join(t.TempDir(), "gone"), "", ErrNotFound, "is not a vault"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := Identify(c.dir)
			if c.err != nil {
				if !errors.Is(err, c.err) || !strings.Contains(err.Error(), c.says) {
					t.Fatalf("%v, want %v saying %q", err, c.err, c.says)
				}
				if _, ierr := ReadInfo(c.dir); !errors.Is(ierr, c.err) {
					t.Errorf("info: %v, want %v", ierr, c.err)
				}
				return
			}
			if err != nil || f.ID != c.id {
				t.Fatalf("%v %v, want %s", f, err, c.id)
			}
			i, err := ReadInfo(c.dir)
			if err != nil || i.FormatID != c.id {
				t.Fatalf("info: %+v %v", i, err)
			}
		})
	}
	// A reverse folder has nothing encrypted for the offline jobs: said so, with what to do.
	if _, err := UnlockVolume(context.Background(), reverseDir, []byte("pw")); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "--reverse") {
		t.Errorf("unlocking a reverse folder offline: %v", err)
	}
}

// TestFormatTable: the table's rules are the ones Create enforces, one place for both front
// ends: each format's default scrypt cost is what a vault created without one gets (the
// wizard and init both leave it to the table), and options a format has no place for are
// refused naming the format.
func TestFormatTable(t *testing.T) {
	for _, f := range Formats() {
		if !f.Can.Mount {
			continue
		}
		dir := filepath.Join(t.TempDir(), "v")
		if _, err := Create(context.Background(), dir, []byte("pw"), CreateOptions{Format: f.ID, ScryptLogN: f.ScryptLogN.Default}); err != nil {
			t.Fatal(err)
		}
		i, err := ReadInfo(dir)
		if err != nil || i.ScryptLogN != f.ScryptLogN.Default || i.FormatID != f.ID {
			t.Errorf("%s: %+v %v", f.ID, i, err)
		}
		if len(f.Ciphers) == 0 {
			err := CreateOptions{Format: f.ID, Cipher: crypto.AESGCM}.Validate()
			if !errors.Is(err, ErrCreateOptions) || !strings.Contains(err.Error(), f.Name) {
				t.Errorf("%s with a cipher: %v", f.ID, err)
			}
		}
	}
	if c, _ := FormatByID("cryptomator"); c.ScryptLogN.Default != cryptomator.DefaultScryptLogN {
		t.Errorf("Cryptomator's default cost %d", c.ScryptLogN.Default)
	}
	if _, err := FormatByID("veracrypt"); !errors.Is(err, ErrCreateOptions) || !strings.Contains(err.Error(), "cryptomator") {
		t.Errorf("unknown format: %v", err)
	}
}
