package registry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/vaultui/vaultui/vault"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

var testPassword = []byte("correct horse")

func TestCreateRegistered(t *testing.T) {
	base := t.TempDir()
	regPath := filepath.Join(base, "config", "vaults.json")
	e := Entry{Name: "v", CipherDir: filepath.Join(base, "v.crypt"), MountPoint: filepath.Join(base, "mnt", "v")}
	key, err := CreateRegistered(context.Background(), regPath, e, testPassword, vault.CreateOptions{ScryptLogN: 10})
	if err != nil || len(key) == 0 {
		t.Fatalf("CreateRegistered: %v", err)
	}
	if v, err := gocryptfs.Unlock(context.Background(), e.CipherDir, testPassword); err != nil {
		t.Errorf("the new vault does not open: %v", err)
	} else {
		v.Close()
	}
	if fi, err := os.Stat(e.MountPoint); err != nil || !fi.IsDir() {
		t.Errorf("mount point: %v", err)
	}
	reg, _ := Load(regPath)
	if got, ok := reg.Lookup("v"); !ok || got.Name != e.Name || got.CipherDir != e.CipherDir || got.MountPoint != e.MountPoint {
		t.Errorf("registered %+v, %v; want %+v", got, ok, e)
	}

	// A duplicate is refused before anything is written.
	dup := Entry{Name: "v", CipherDir: filepath.Join(base, "other.crypt"), MountPoint: filepath.Join(base, "mnt", "o")}
	if _, err := CreateRegistered(context.Background(), regPath, dup, testPassword, vault.CreateOptions{ScryptLogN: 10}); !errors.Is(err, ErrDuplicate) {
		t.Errorf("duplicate name: %v", err)
	}
	if _, err := os.Stat(dup.CipherDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused duplicate left %s behind", dup.CipherDir)
	}

	// A mount point that cannot be made: the vault exists and is registered, the key is
	// returned with the error that says what is missing.
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o600)
	e2 := Entry{Name: "w", CipherDir: filepath.Join(base, "w.crypt"), MountPoint: filepath.Join(file, "w")}
	key, err = CreateRegistered(context.Background(), regPath, e2, testPassword, vault.CreateOptions{ScryptLogN: 10})
	var inc *IncompleteError
	if !errors.As(err, &inc) || inc.MountPoint == nil || inc.Register != nil || len(key) == 0 {
		t.Fatalf("unmakeable mount point: key %d bytes, %v", len(key), err)
	}
	if reg, _ := Load(regPath); len(reg.Vaults) != 2 {
		t.Errorf("registry after the incomplete create: %+v", reg.Vaults)
	}
}
