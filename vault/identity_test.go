package vault

import (
	"os"
	"path/filepath"
	"testing"
)

// TestInside: a path is inside a directory by identity: through symlinks, "..", missing
// tails and bind-mount-like second spellings alike; a sibling with a common prefix is not.
func TestInside(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "c")
	os.MkdirAll(filepath.Join(dir, "a", "b"), 0o700)
	os.WriteFile(filepath.Join(dir, "a", "f"), nil, 0o600)
	os.Mkdir(dir+"x", 0o700)
	os.Symlink(filepath.Join(dir, "a"), filepath.Join(tmp, "toA"))
	os.Symlink(tmp, filepath.Join(dir+"x", "up"))
	id, err := IDOf(dir)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{
		dir:                                  true,
		filepath.Join(dir, "a", "b"):         true,
		filepath.Join(dir, "a", "f"):         true,
		filepath.Join(dir, "missing", "x"):   true,
		filepath.Join(tmp, "toA", "b"):       true,
		filepath.Join(tmp, "toA", "new"):     true,
		filepath.Join(tmp, "toA", "f"):       true,
		dir + "x":                            false,
		filepath.Join(dir+"x", "up"):         false,
		filepath.Join(dir+"x", "up", "c"):    true,
		tmp:                                  false,
		"/":                                  false,
		filepath.Join(tmp, "nothere", "sub"): false,
	} {
		got, err := Inside(path, id)
		if err != nil {
			t.Errorf("Inside(%s): %v", path, err)
			continue
		}
		if got != want {
			t.Errorf("Inside(%s) = %v, want %v", path, got, want)
		}
	}
	if other, _ := IDOf(filepath.Join(tmp, "toA")); other == id || other.IsZero() {
		t.Errorf("IDOf through a symlink to a/ gave %v (the dir's is %v)", other, id)
	}
}
