package vault

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/vaulttest"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

func TestCreateReverseWritesGocryptfsReverseConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts CreateOptions
		want []string // gocryptfs 2.3 -init -reverse's flags for the same options
	}{
		{"default", CreateOptions{}, []string{"HKDF", "GCMIV128", "DirIV", "EMENames", "LongNames", "Raw64", "AESSIV"}},
		{"plaintextnames", CreateOptions{PlaintextNames: true}, []string{"HKDF", "GCMIV128", "PlaintextNames", "AESSIV"}},
		{"deterministic", CreateOptions{DeterministicNames: true, LongNameMax: 100},
			[]string{"HKDF", "GCMIV128", "LongNameMax", "EMENames", "LongNames", "Raw64", "AESSIV"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "data"), []byte("plain"), 0o600)
			tc.opts.ScryptLogN = crypto.MinScryptLogN
			mk, err := CreateReverse(context.Background(), dir, []byte("pw"), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(filepath.Join(dir, gocryptfs.ReverseConfName))
			if err != nil || fi.Mode().Perm() != 0o400 {
				t.Fatalf("config: %v, mode %v", err, fi.Mode())
			}
			if _, err := os.Stat(filepath.Join(dir, crypto.DirIVName)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("reverse init wrote a diriv into the plaintext folder: %v", err)
			}
			c, err := gocryptfs.LoadReverseConfig(dir)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(c.FeatureFlags, tc.want) {
				t.Errorf("flags %v, want %v", c.FeatureFlags, tc.want)
			}
			v, err := gocryptfs.UnlockReverse(context.Background(), dir, []byte("pw"))
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			if v.Content.Cipher() != crypto.AESSIV || v.Dir != dir {
				t.Errorf("unlocked %s at %s", v.Content.Cipher(), v.Dir)
			}
			crypto.Wipe(mk)
			if _, err := gocryptfs.UnlockReverse(context.Background(), dir, []byte("wrong")); !errors.Is(err, ErrWrongPassword) {
				t.Errorf("wrong password: %v", err)
			}
			if f, err := Identify(dir); err != nil || !f.Can.ReverseView {
				t.Error("IsReverse is false")
			}
			// Never replaced.
			if _, err := CreateReverse(context.Background(), dir, []byte("pw"), tc.opts); !errors.Is(err, os.ErrExist) {
				t.Errorf("second init: %v", err)
			}
		})
	}
}

func TestCreateReverseRefusesNonceMisuseCiphers(t *testing.T) {
	for _, c := range []crypto.CipherID{crypto.AESGCM, crypto.AEGIS, crypto.XChaCha} {
		dir := t.TempDir()
		_, err := CreateReverse(context.Background(), dir, []byte("pw"), CreateOptions{Cipher: c, ScryptLogN: crypto.MinScryptLogN})
		if !errors.Is(err, gocryptfs.ErrReverseCipher) || !strings.Contains(err.Error(), "incremental") {
			t.Errorf("%s: %v, want gocryptfs.ErrReverseCipher with the reason", c, err)
		}
		if names, _ := os.ReadDir(dir); len(names) != 0 {
			t.Errorf("%s: refused but wrote %v", c, names)
		}
	}
}

func TestLoadReverseConfigRefusesOtherCiphers(t *testing.T) {
	// A forward GCM config copied into place as a reverse config must not be served with
	// derived nonces.
	src := t.TempDir() + "/v"
	if _, err := Create(context.Background(), src, []byte("pw"), CreateOptions{ScryptLogN: crypto.MinScryptLogN}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	data, _ := os.ReadFile(filepath.Join(src, crypto.ConfName))
	os.WriteFile(filepath.Join(dir, gocryptfs.ReverseConfName), data, 0o400)
	if _, err := gocryptfs.UnlockReverse(context.Background(), dir, []byte("pw")); !errors.Is(err, gocryptfs.ErrReverseCipher) {
		t.Errorf("GCM reverse config: %v", err)
	}
	if _, err := gocryptfs.UnlockReverse(context.Background(), t.TempDir(), []byte("pw")); !errors.Is(err, ErrNotFound) {
		t.Errorf("no config: %v", err)
	}
}

func TestUnlockReverseOpensGocryptfsConfig(t *testing.T) {
	bin := vaulttest.Gocryptfs(t, false)
	dir := t.TempDir()
	pw := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(pw, []byte("secret\n"), 0o600)
	out, err := exec.Command(bin, "-init", "-reverse", "-q", "-scryptn", "10", "-passfile", pw, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("gocryptfs -init -reverse: %v\n%s", err, out)
	}
	v, err := gocryptfs.UnlockReverse(context.Background(), dir, []byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	v.Close()
}
