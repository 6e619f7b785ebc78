package vault

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/vaulttest"
	"github.com/vaultui/vaultui/vault/format"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

// walkBound is how long a walk of a small hostile vault may take: a walk that loops runs
// into it (the walker honours its context between directories) and the test fails.
const walkBound = 5 * time.Second

// hostileCryptomator is the shared Cryptomator fixture after someone with write access to
// the synced folder rewrote two dir.c9r files, which nothing authenticates: sub/deeper/deepest
// names sub's ID (an ancestor: a loop), and empty-dir names sizes' ID (a folder elsewhere, so
// sizes is reached twice).
func hostileCryptomator(t *testing.T) Volume {
	t.Helper()
	dir, vol := unlockCryptomatorFixture(t)
	cpaths := map[string]string{}
	if err := WalkVolume(context.Background(), vol, func(n Node) error {
		cpaths[n.Path] = n.CipherPath
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	dirFile := func(p string) string { return filepath.Join(dir, filepath.FromSlash(cpaths[p]), "dir.c9r") }
	redirect := func(from, to string) {
		t.Helper()
		id, err := os.ReadFile(dirFile(to))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dirFile(from), id, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	redirect("sub/deeper/deepest", "sub")
	redirect("empty-dir", "sizes")
	return vol
}

// boundedCtx is a context that ends after walkBound.
func boundedCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), walkBound)
	t.Cleanup(cancel)
	return ctx
}

// wantReachedTwice checks that problems report, as damage, exactly the directories at the
// plaintext paths of twice (each naming the path it was first reached as).
func wantReachedTwice(t *testing.T, problems []Problem, twice map[string]string) {
	t.Helper()
	for _, p := range problems {
		if p.Kind != format.KindDirTwice {
			t.Errorf("unexpected problem %v", p)
			continue
		}
		first, ok := twice[p.Path]
		if !ok {
			t.Errorf("unexpected problem %v", p)
			continue
		}
		if !p.Damage() || !strings.Contains(p.Detail, strconv.Quote(FolderArg(first))) {
			t.Errorf("%v: want damage naming %q, where the directory was first reached", p, first)
		}
		delete(twice, p.Path)
	}
	if len(twice) > 0 {
		t.Errorf("not reported: %v (got %v)", twice, problems)
	}
}

// A dir.c9r naming an ancestor's ID or another folder's is damage fsck names, with both
// plaintext paths; the walk goes on and finishes.
func TestCryptomatorDirReachedTwiceFsck(t *testing.T) {
	vol := hostileCryptomator(t)
	problems, err := FsckVolume(boundedCtx(t), vol, nil)
	if err != nil {
		t.Fatalf("fsck: %v", err)
	}
	wantReachedTwice(t, problems, map[string]string{"sub/deeper/deepest": "sub", "sizes": "empty-dir"})
}

// Export stops at a directory reached twice with ErrCorrupt, having written no folder
// deeper than the vault's own tree; with --force it writes each directory once and still
// fails.
func TestCryptomatorDirReachedTwiceExport(t *testing.T) {
	vol := hostileCryptomator(t)
	for _, force := range []bool{false, true} {
		out := filepath.Join(t.TempDir(), "out")
		err := ExportVolume(boundedCtx(t), vol, out, ExportOptions{Force: force})
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), format.KindDirTwice) {
			t.Fatalf("export (force %v): %v, want ErrCorrupt for a directory reached twice", force, err)
		}
		deepest := 0
		filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
			deepest = max(deepest, strings.Count(p[len(out):], string(filepath.Separator)))
			return nil
		})
		if deepest > 4 { // sub/deeper/deepest/FILE
			t.Fatalf("export (force %v) wrote %d levels", force, deepest)
		}
	}
}

// Listing conflicts of a vault whose tree is not a tree is an error, not a loop.
func TestCryptomatorDirReachedTwiceConflicts(t *testing.T) {
	vol := hostileCryptomator(t)
	_, err := vol.Conflicts(boundedCtx(t))
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), format.KindDirTwice) {
		t.Fatalf("conflicts: %v, want ErrCorrupt naming the directory reached twice", err)
	}
}

// A gocryptfs directory is reached twice only through a bind mount (Linux has no hard-linked
// directories): the walker knows a directory by its device and inode, so fsck reports it
// (and convert refuses the vault: vault/convert's TestConvertDirReachedTwice).
func TestGocryptfsDirReachedTwice(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("bind mounts need root")
	}
	dir, _ := createTest(t, CreateOptions{Cipher: crypto.AESGCM})
	v, err := gocryptfs.Unlock(context.Background(), dir, testPassword)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	src := filepath.Join(t.TempDir(), "plain")
	for _, d := range []string{"a/inner", "b"} {
		if err := os.MkdirAll(filepath.Join(src, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(src, "a/inner/f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := vaulttest.Import(context.Background(), v, src); err != nil {
		t.Fatal(err)
	}
	paths := cipherPaths(t, v)
	inner, b := filepath.Join(dir, paths["a/inner"]), filepath.Join(dir, paths["b"])
	if err := unix.Mount(dir, inner, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("bind mount: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(inner, unix.MNT_DETACH) })
	if err := unix.Mount(filepath.Join(dir, paths["a"]), b, "", unix.MS_BIND, ""); err != nil {
		t.Fatalf("bind mount: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(b, unix.MNT_DETACH) })

	problems, err := FsckVolume(boundedCtx(t), v.Volume(), nil)
	if err != nil {
		t.Fatalf("fsck: %v", err)
	}
	wantReachedTwice(t, problems, map[string]string{"a/inner": "", "b": "a"})

}
