package vault

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/atomicfile"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

// TestMain serves a costly key derivation, which re-executes the running binary, this one
// (see crypto.KDFHelperArg).
func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == crypto.KDFHelperArg {
		if err := crypto.ServeKDFHelper(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestResealPreHKDF: a vault from before HKDF cannot become AEGIS or XChaCha20-Poly1305: its
// names would change. Its config is enough to tell; no password is asked.
func TestResealPreHKDF(t *testing.T) {
	old := t.TempDir()
	c := &gocryptfs.Config{Creator: "gocryptfs v1.2", EncryptedKey: make([]byte, 12+32+16), Version: 2,
		FeatureFlags: []string{gocryptfs.FlagGCMIV128, gocryptfs.FlagDirIV, gocryptfs.FlagEMENames, gocryptfs.FlagLongNames}}
	c.ScryptObject, _ = crypto.NewScryptKDF(10)
	if err := gocryptfs.WriteConfig(atomicfile.OS{}, old, c); err != nil {
		t.Fatal(err)
	}
	f, err := Open(old)
	if err != nil {
		t.Fatal(err)
	}
	for _, to := range []crypto.CipherID{crypto.AEGIS, crypto.XChaCha} {
		if _, err := f.PlanReseal(string(to), 4096); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "HKDF") {
			t.Errorf("pre-HKDF vault to %s: %v", to, err)
		}
	}
	if _, err := f.PlanReseal(string(crypto.AESSIV), 4096); err != nil {
		t.Errorf("pre-HKDF vault to AES-SIV keeps its names: %v", err)
	}
}

// cipherPaths maps the vault's plaintext paths to their cipher paths.
func cipherPaths(t *testing.T, v *gocryptfs.Vault) map[string]string {
	t.Helper()
	m := map[string]string{}
	if err := WalkVolume(context.Background(), v.Volume(), func(n Node) error {
		m[n.Path] = n.CipherPath
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	return m
}
