package vault

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/crypto"
)

// makeTree writes a plaintext tree covering what vaults must hold: nested
// and empty directories, block-boundary sizes, a sparse file, zero blocks,
// long and non-ASCII names, symlinks and modes.
func makeTree(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "plain")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	file := func(p string, data []byte, mode os.FileMode) {
		t.Helper()
		full := filepath.Join(root, p)
		must(os.MkdirAll(filepath.Dir(full), 0o755))
		must(os.WriteFile(full, data, mode))
		must(os.Chmod(full, mode))
	}
	random := func(n int) []byte {
		b := make([]byte, n)
		rand.Read(b)
		return b
	}
	must(os.MkdirAll(filepath.Join(root, "a/b/c"), 0o755))
	must(os.MkdirAll(filepath.Join(root, "empty-dir"), 0o700))
	for _, n := range []int{0, 1, 15, 16, 4095, 4096, 4097, 8192, 131089} {
		file(fmt.Sprintf("size-%d.bin", n), random(n), 0o644)
	}
	file("zeros-8192.bin", make([]byte, 8192), 0o644)
	file("zeros-then-data.bin", append(make([]byte, 3*crypto.BlockSize), random(100)...), 0o644)
	file("a/b/c/deep.txt", []byte("deep\n"), 0o600)
	file("run.sh", []byte("#!/bin/sh\necho hi\n"), 0o755)
	file("Ünïcødé ✓.txt", []byte("unicode"), 0o644)
	file(strings.Repeat("l", 200)+".txt", []byte("long 200"), 0o644)
	file(strings.Repeat("m", 255), []byte("long 255"), 0o644)
	must(os.MkdirAll(filepath.Join(root, "long-dir-"+strings.Repeat("z", 180)), 0o755))
	file("long-dir-"+strings.Repeat("z", 180)+"/inside.txt", []byte("inside"), 0o644)
	sparse, err := os.Create(filepath.Join(root, "sparse.bin"))
	must(err)
	_, err = sparse.WriteAt([]byte("hello"), 5<<20)
	must(err)
	must(sparse.Truncate(10 << 20))
	sparse.Close()
	must(os.Symlink("a/b/c/deep.txt", filepath.Join(root, "link-relative")))
	must(os.Symlink("/etc/some/absolute/target", filepath.Join(root, "link-absolute")))
	return root
}

type treeEntry struct {
	mode   fs.FileMode
	size   int64
	sum    string
	target string
}

// readTree describes a plaintext tree for comparison.
func readTree(t *testing.T, root string) map[string]treeEntry {
	t.Helper()
	m := map[string]treeEntry{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		e := treeEntry{mode: fi.Mode()}
		switch {
		case fi.Mode().IsRegular():
			e.size = fi.Size()
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			h := sha256.New()
			_, err = io.Copy(h, f)
			f.Close()
			if err != nil {
				return err
			}
			e.sum = hex.EncodeToString(h.Sum(nil))
		case fi.Mode()&fs.ModeSymlink != 0:
			e.target, _ = os.Readlink(p)
			e.mode = fs.ModeSymlink // symlink permission bits are meaningless
		}
		m[filepath.ToSlash(rel)] = e
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func compareTrees(t *testing.T, want, got map[string]treeEntry) {
	t.Helper()
	for p, w := range want {
		g, ok := got[p]
		if !ok {
			t.Errorf("missing %s", p)
			continue
		}
		if g != w {
			t.Errorf("%s: got %+v, want %+v", p, g, w)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("unexpected %s", p)
		}
	}
}

var roundTripOptions = map[string]CreateOptions{
	"gcm":            {},
	"xchacha":        {Cipher: crypto.XChaCha},
	"siv":            {Cipher: crypto.AESSIV},
	"aegis":          {Cipher: crypto.AEGIS},
	"plaintextnames": {PlaintextNames: true},
	"deterministic":  {DeterministicNames: true},
	"longnamemax":    {LongNameMax: 62},
	"xchacha-plain":  {Cipher: crypto.XChaCha, PlaintextNames: true},
}

// TestRoundTrip creates a vault with each cipher and option, imports a tree,
// checks it with Fsck and exports it back unchanged, sparse file included.
func TestRoundTrip(t *testing.T) {
	src := makeTree(t)
	want := readTree(t, src)
	for name, opts := range roundTripOptions {
		t.Run(name, func(t *testing.T) {
			dir, _ := createTest(t, opts)
			v, err := Unlock(context.Background(), dir, testPassword)
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			if err := v.Import(context.Background(), src, nil); err != nil {
				t.Fatal(err)
			}
			checkCipherdirLayout(t, v)
			problems, err := v.Fsck(context.Background(), nil)
			if err != nil || len(problems) != 0 {
				t.Fatalf("fsck: %v %v", problems, err)
			}
			out := filepath.Join(t.TempDir(), "out")
			if err := v.Export(context.Background(), out, nil); err != nil {
				t.Fatal(err)
			}
			compareTrees(t, want, readTree(t, out))
			var st = mustStatBlocks(t, filepath.Join(out, "sparse.bin"))
			if st > 64*1024 {
				t.Errorf("exported sparse file allocates %d bytes", st)
			}
		})
	}
}

// checkCipherdirLayout checks the on-disk rules of docs/FORMAT.md in a vault
// filled by Import: diriv files (16 bytes, 0440) exactly where names are
// per-directory encrypted, .name files beside long names, sizes that map to
// plaintext sizes.
func checkCipherdirLayout(t *testing.T, v *Vault) {
	t.Helper()
	wantDirIV := v.Names != nil && !v.Config.DeterministicNames()
	filepath.WalkDir(v.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Lstat(p)
		name := d.Name()
		switch {
		case d.IsDir():
			_, err := os.Stat(filepath.Join(p, crypto.DirIVName))
			if (err == nil) != wantDirIV {
				t.Errorf("%s: diriv present=%v, want %v", p, err == nil, wantDirIV)
			}
		case name == crypto.DirIVName:
			if fi.Size() != 16 || fi.Mode().Perm() != 0o440 {
				t.Errorf("%s: %v, %d bytes", p, fi.Mode(), fi.Size())
			}
		case crypto.IsLongNameFile(name):
			if fi.Mode().Perm() != 0o400 {
				t.Errorf("%s: mode %v", p, fi.Mode())
			}
		case crypto.IsLongName(name):
			if _, err := os.Stat(p + crypto.LongNameSuffix); err != nil {
				t.Errorf("%s: %v", p, err)
			}
		case fi.Mode().IsRegular() && name != crypto.ConfName:
			if _, err := v.Content.PlainSize(uint64(fi.Size())); err != nil {
				t.Errorf("%s: %v", p, err)
			}
		}
		if v.Names != nil && len(name) > 255 {
			t.Errorf("%s: stored name longer than 255", p)
		}
		if lim := v.Names; lim != nil && !d.IsDir() && !crypto.IsLongName(name) && !crypto.IsLongNameFile(name) &&
			name != crypto.DirIVName && name != crypto.ConfName && len(name) > lim.LongNameMax() {
			t.Errorf("%s: %d-byte name over the limit %d", p, len(name), lim.LongNameMax())
		}
		return nil
	})
}

func mustStatBlocks(t *testing.T, p string) int64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return allocated(fi)
}

func TestImportRefusesNonEmptyVault(t *testing.T) {
	dir, _ := createTest(t, CreateOptions{})
	v, _ := Unlock(context.Background(), dir, testPassword)
	defer v.Close()
	os.WriteFile(filepath.Join(dir, "x"), nil, 0o644)
	if err := v.Import(context.Background(), t.TempDir(), nil); err == nil {
		t.Fatal("import into a non-empty vault")
	}
}
