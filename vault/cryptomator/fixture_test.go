package cryptomator

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/vaultui/vaultui/vault/cryptomator/cmfixture"
)

// The fixture siv-gcm-a is a vault made by an independent Go implementation of the format
// (rclone's unmerged Cryptomator backend, PR 8302), with a manifest of every entry. It was
// copied from the project's shared fixtures so that a fresh clone tests it; package cmfixture
// reads it for every package's tests.

// rcloneEncoded is the name rclone stores for a local name (cmfixture.Shown).
func rcloneEncoded(name string) string { return cmfixture.Shown(name) }

type manifestEntry = cmfixture.Entry

func fixtureManifest(t *testing.T) []manifestEntry {
	t.Helper()
	m, err := cmfixture.SIVGCMA.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func fixturePassword(t *testing.T) []byte {
	t.Helper()
	b, err := cmfixture.Password()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// extractFixture unpacks the fixture's cipher.tar into a fresh directory and returns the
// vault's folder.
func extractFixture(t *testing.T) string { return cmfixture.Folder(t) }

// fixtureKey unlocks the fixture's master key once for all tests (scrypt N=2^15).
var fixtureKey = sync.OnceValues(func() (*Masterkey, error) {
	pw, err := cmfixture.Password()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "cryptomator-fixture")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	dir, err := cmfixture.SIVGCMA.Extract(tmp)
	if err != nil {
		return nil, err
	}
	mk, err := os.ReadFile(filepath.Join(dir, MasterkeyFileName))
	if err != nil {
		return nil, err
	}
	return UnlockMasterkey(context.Background(), mk, pw)
})

func mustFixtureKey(t *testing.T) *Masterkey {
	t.Helper()
	k, err := fixtureKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}
