package registry

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/internal/userfile"
)

// TestRegistryExtPass: the password program is kept as its argument vector, words with
// spaces included, and a registry naming one is refused when others may write in the file
// (its directory is checked for every registry: TestRegistryUnsafeDirectory).
func TestRegistryExtPass(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vaultui")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, FileName)
	argv := []string{"/usr/bin/secret-tool", "lookup", "vault", "my work"}
	_, err := Update(path, func(r *Registry) error {
		return r.Add(Entry{Name: "work", CipherDir: "/data/work", ExtPass: argv})
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Vaults[0].ExtPass; strings.Join(got, "|") != strings.Join(argv, "|") {
		t.Fatalf("extpass read back as %q", got)
	}
	if err := os.Chmod(path, 0o620); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); !errors.Is(err, userfile.ErrUnsafe) || !strings.Contains(err.Error(), "chmod go-w") {
		t.Fatalf("a group-writable registry naming a program: %v", err)
	}
	// Without a program in it, such a file is read as before.
	if err := os.WriteFile(path, []byte(`{"version":1,"vaults":[{"name":"a","cipherdir":"/a"}]}`), 0o620); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err != nil {
		t.Fatalf("a group-writable registry without programs: %v", err)
	}
	if err := os.WriteFile(path, []byte(`{"version":1,"vaults":[{"name":"a","cipherdir":"/a","extpass":[""]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("an extpass without a program: %v", err)
	}
}
