package cryptomator

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSettleRefusesWhatTakesSeveralSteps: a conflict copy of a directory or a symlink (a
// folder in the cipher tree) is refused with ErrSettleUnsupported, every way, and stays.
func TestSettleRefusesWhatTakesSeveralSteps(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "v")
	v, err := Create(context.Background(), dir, []byte("pw"), CreateOptions{ScryptLogN: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if _, err := v.Mkdir(v.Root(), "folder"); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Symlink(v.Root(), "link", "target"); err != nil {
		t.Fatal(err)
	}
	if _, err := v.WriteFile(v.Root(), "file", bytes.NewReader([]byte("x"))); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"folder", "link"} {
		e, err := v.Lookup(v.Root(), name)
		if err != nil {
			t.Fatal(err)
		}
		src := filepath.Join(dir, filepath.FromSlash(e.node()))
		dst := strings.TrimSuffix(src, ".c9r") + " (conflicted copy 2026-11-30 101010).c9r"
		if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
		c, ok := conflictCopyOf(t, v, v.Root(), filepath.Base(dst))
		if !ok {
			t.Fatalf("%s: the copy is not seen as one", name)
		}
		for _, settle := range []func(Entry) error{v.RemoveCopy, v.ReplaceWithCopy, func(e Entry) error { return v.KeepCopyAs(e, name+"2") }} {
			if err := settle(c); !errors.Is(err, ErrSettleUnsupported) {
				t.Errorf("%s: %v, want ErrSettleUnsupported", name, err)
			}
		}
		if _, err := os.Lstat(dst); err != nil {
			t.Fatalf("%s: the refused copy: %v", name, err)
		}
	}
	f, _ := v.Lookup(v.Root(), "file")
	if err := v.RemoveCopy(f); err == nil {
		t.Fatal("an entry that is not a copy was removed as one")
	}
}

// conflictCopyOf reads the stored name s of d as a conflict copy (Vault.entry).
func conflictCopyOf(t *testing.T, v *Vault, d Dir, s string) (Entry, bool) {
	t.Helper()
	f, err := v.openFolder(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	e, _, err := v.entry(int(f.Fd()), d, s)
	return e, err == nil && e.Conflict != nil
}
