package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestReplaceLeavesOldOrNew: a write that stops half-way (a full disk) and a rename that
// fails (a crash before it) leave the old content and no temporary file; a clean run leaves
// the new content with the mode asked for.
func TestReplaceLeavesOldOrNew(t *testing.T) {
	dir := t.TempDir()
	path, tmp := filepath.Join(dir, "f"), filepath.Join(dir, ".f.tmp")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	injected := errors.New("injected")
	for _, at := range []string{"write", "rename"} {
		if err := Replace(Failing{At: at, Err: injected}, path, tmp, []byte("new content"), 0o600); !errors.Is(err, injected) {
			t.Fatalf("Replace failing at %s = %v, want the injected error", at, err)
		}
		if got, _ := os.ReadFile(path); string(got) != "old" {
			t.Errorf("after a failed %s the file holds %q, want the old content", at, got)
		}
		if _, err := os.Lstat(tmp); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("after a failed %s the temporary file is left: %v", at, err)
		}
	}
	if err := Replace(OS{}, path, tmp, []byte("new"), 0o400); err != nil {
		t.Fatal(err)
	}
	if err := SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if got, _ := os.ReadFile(path); err != nil || string(got) != "new" || fi.Mode().Perm() != 0o400 {
		t.Errorf("after Replace: %q, mode %v, %v; want \"new\", 0400", got, fi.Mode().Perm(), err)
	}
}
