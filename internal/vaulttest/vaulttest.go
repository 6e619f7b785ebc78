// Package vaulttest has what the tests of package vault and of the packages built on it share:
// a plaintext tree covering what a vault must hold, its description for comparison, the
// gocryptfs program to check vaults against, and Import of a plaintext tree into a vault.
package vaulttest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/testdeps"
)

// Tree writes a plaintext tree covering what vaults must hold: nested
// and empty directories, block-boundary sizes, a sparse file, zero blocks,
// long and non-ASCII names, symlinks and modes.
func Tree(t testing.TB) string {
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

// Entry describes one entry of a plaintext tree: what ReadTree reads and CompareTrees
// compares (a symlink's mode is its type alone).
type Entry struct {
	Mode   fs.FileMode
	Size   int64
	Sum    string // SHA-256 of the content, in hex
	Target string
}

// ReadTree describes the plaintext tree at root for comparison, by slash-separated path.
func ReadTree(t testing.TB, root string) map[string]Entry {
	t.Helper()
	m := map[string]Entry{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		e := Entry{Mode: fi.Mode()}
		switch {
		case fi.Mode().IsRegular():
			e.Size = fi.Size()
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
			e.Sum = hex.EncodeToString(h.Sum(nil))
		case fi.Mode()&fs.ModeSymlink != 0:
			e.Target, _ = os.Readlink(p)
			e.Mode = fs.ModeSymlink // symlink permission bits are meaningless
		}
		m[filepath.ToSlash(rel)] = e
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// CompareTrees reports each entry of want that got lacks or has otherwise, and each entry of
// got that want lacks.
func CompareTrees(t testing.TB, want, got map[string]Entry) {
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

// Gocryptfs returns the gocryptfs program, or skips the test (testdeps.Need) if it
// needs more than is here: gocryptfs, and FUSE too if needFUSE (gocryptfs -fsck mounts).
func Gocryptfs(t testing.TB, needFUSE bool) string {
	t.Helper()
	testdeps.Need(t, testdeps.Gocryptfs)
	if needFUSE {
		testdeps.Need(t, testdeps.FUSE)
	}
	p, err := exec.LookPath("gocryptfs")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// WaitUnmounted waits until mnt is no longer a mount point.
func WaitUnmounted(t testing.TB, mnt string) {
	t.Helper()
	for range 50 {
		b, _ := os.ReadFile("/proc/self/mounts")
		if !strings.Contains(string(b), " "+mnt+" ") {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s is still mounted", mnt)
}
