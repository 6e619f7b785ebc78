package vfs

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
)

// TestRenameWhiteout: renameat2's RENAME_WHITEOUT (overlayfs's, and fsstress's) leaves a
// whiteout, a character device 0/0, under the old name. Under a long name it must show in the
// listing like any entry, its .name file beside it, so that it can be removed: xfstests'
// generic/013 found "rm -rf" failing with ENOTEMPTY on a whiteout that the listing hid. A
// directory renamed with RENAME_WHITEOUT over an empty one replaces it (generic/078).
func TestRenameWhiteout(t *testing.T) {
	needRoot(t) // a whiteout is a device: CAP_MKNOD
	v := testVolume(t, crypto.AESGCM, true)
	mp, _ := mountTest(t, v, Options{})
	for _, name := range []string{"short", strings.Repeat("long name ", 20)} {
		t.Run(strings.Fields(name)[0], func(t *testing.T) {
			d := filepath.Join(mp, strings.Fields(name)[0])
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
			src := filepath.Join(d, name)
			if err := os.WriteFile(src, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := unix.Renameat2(unix.AT_FDCWD, src, unix.AT_FDCWD, filepath.Join(d, "dst"), unix.RENAME_WHITEOUT); err != nil {
				t.Fatalf("renameat2 RENAME_WHITEOUT: %v", err)
			}
			var st unix.Stat_t
			if err := unix.Lstat(src, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR || st.Rdev != 0 {
				t.Fatalf("the whiteout: %v, mode %o rdev %d", err, st.Mode, st.Rdev)
			}
			ents, err := os.ReadDir(d)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			if len(names) != 2 {
				t.Errorf("listing %q, want the whiteout and dst", names)
			}
			if err := os.RemoveAll(d); err != nil {
				t.Fatalf("rm -rf: %v", err)
			}
		})
	}
	t.Run("directory over an empty one", func(t *testing.T) {
		a, b := filepath.Join(mp, "a"), filepath.Join(mp, "b")
		for _, p := range []string{a, b} {
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(a, "in a"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_WHITEOUT); err != nil {
			t.Fatalf("renameat2 RENAME_WHITEOUT of a directory over an empty one: %v", err)
		}
		if _, err := os.Stat(filepath.Join(b, "in a")); err != nil {
			t.Errorf("the moved directory: %v", err)
		}
		var st unix.Stat_t
		if err := unix.Lstat(a, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
			t.Errorf("the whiteout: %v, mode %o", err, st.Mode)
		}
		// Not over one that holds something.
		if err := os.Mkdir(a+"2", 0o755); err != nil {
			t.Fatal(err)
		}
		err := unix.Renameat2(unix.AT_FDCWD, a+"2", unix.AT_FDCWD, b, unix.RENAME_WHITEOUT)
		if err != syscall.ENOTEMPTY && err != syscall.EEXIST {
			t.Errorf("over a directory that is not empty: %v, want ENOTEMPTY", err)
		}
	})
}

// TestRenameOverOpenDirectory: a directory renamed over an open empty one leaves the open one
// removed, and fstat on its descriptor says so (nlink 0) rather than failing, as for a file
// (xfstests generic/035).
func TestRenameOverOpenDirectory(t *testing.T) {
	v := testVolume(t, crypto.AESGCM, true)
	mp, _ := mountTest(t, v, Options{})
	for _, kind := range []string{"file", "directory"} {
		t.Run(kind, func(t *testing.T) {
			a, b := filepath.Join(mp, kind+"1"), filepath.Join(mp, kind+"2")
			for _, p := range []string{a, b} {
				var err error
				if kind == "file" {
					err = os.WriteFile(p, nil, 0o644)
				} else {
					err = os.Mkdir(p, 0o755)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			f, err := os.Open(b)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			// syscall.Rename: os.Rename refuses a directory as the target.
			if err := syscall.Rename(a, b); err != nil {
				t.Fatal(err)
			}
			var st unix.Stat_t
			if err := unix.Fstat(int(f.Fd()), &st); err != nil {
				t.Fatalf("fstat of the %s renamed over: %v", kind, err)
			}
			if st.Nlink != 0 {
				t.Errorf("nlink %d, want 0", st.Nlink)
			}
		})
	}
}
