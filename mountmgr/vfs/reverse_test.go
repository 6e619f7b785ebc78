package vfs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/testdeps"
	"github.com/vaultui/vaultui/mountmgr/vfs/exclude"
	"github.com/vaultui/vaultui/vault"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

// gocryptfsForReverse returns the gocryptfs binary to compare with ($VAULTUI_GOCRYPTFS, for a
// by-hand run against master, else the installed one) or skips.
func gocryptfsForReverse(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("VAULTUI_GOCRYPTFS"); p != "" {
		return p
	}
	testdeps.Need(t, testdeps.Gocryptfs)
	p, err := exec.LookPath("gocryptfs")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// plainTree writes a plaintext folder with every case the view must get right: empty and
// block-boundary sizes, nested directories, symlinks, names just below and above the
// long-name limit, and a long-named directory with entries of its own.
func plainTree(t *testing.T, dir string) {
	t.Helper()
	content := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*7 + i/4096)
		}
		return b
	}
	files := map[string][]byte{
		"empty":                          nil,
		"small":                          []byte("hello"),
		"b4095":                          content(4095),
		"b4096":                          content(4096),
		"b4097":                          content(4097),
		"big":                            content(70001),
		"dir/sub/file":                   []byte("nested"),
		"dir/sub/deeper/x":               content(9000),
		strings.Repeat("s", 175):         []byte("short enough"),
		strings.Repeat("l", 176):         []byte("long name"),
		strings.Repeat("D", 190) + "/in": []byte("in a long-named dir"),
		strings.Repeat("D", 190) + "/" + strings.Repeat("n", 200): content(5000),
	}
	for p, b := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, b, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink("small", filepath.Join(dir, "link"))
	os.Symlink("/etc/some/absolute/target", filepath.Join(dir, "dir", "abslink"))
	os.Mkdir(filepath.Join(dir, "emptydir"), 0o700)
}

// treeEntry is what a tree comparison looks at: type and permissions, size, and the content's
// hash or the link target.
type treeEntry struct {
	mode fs.FileMode
	size int64
	data string
}

func treeSnapshot(t *testing.T, root string, skip ...string) map[string]treeEntry {
	t.Helper()
	out := map[string]treeEntry{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." || slices.Contains(skip, rel) {
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		e := treeEntry{mode: fi.Mode() & (fs.ModeType | fs.ModePerm), size: fi.Size()}
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if int64(len(b)) != fi.Size() {
				return fmt.Errorf("%s: stat says %d bytes, read %d", rel, fi.Size(), len(b))
			}
			h := sha256.Sum256(b)
			e.data = hex.EncodeToString(h[:])
		case fi.Mode()&fs.ModeSymlink != 0:
			if e.data, err = os.Readlink(p); err != nil {
				return err
			}
		case fi.IsDir():
			e.size = 0 // directory sizes are the file system's business
		}
		out[rel] = e
		return nil
	})
	if err != nil {
		t.Fatalf("walking %s: %v", root, err)
	}
	return out
}

func compareViews(t *testing.T, what string, got, want map[string]treeEntry) {
	t.Helper()
	for _, p := range slices.Sorted(maps.Keys(want)) {
		if g, ok := got[p]; !ok {
			t.Errorf("%s: %q missing", what, p)
		} else if g != want[p] {
			t.Errorf("%s: %q is %+v, want %+v", what, p, g, want[p])
		}
	}
	for _, p := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: %q should not be there", what, p)
		}
	}
}

// gocryptfsMount runs gocryptfs with args and MOUNTPOINT mp, and unmounts it when the test ends.
func gocryptfsMount(t *testing.T, bin, mp string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, append(append([]string{"-q"}, args...), mp)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", bin, args, err, out)
	}
	t.Cleanup(func() {
		if err := unmountFUSE(mp, false); err != nil {
			unmountFUSE(mp, true)
		}
	})
}

// mountReverseTest unlocks the reverse config of dir and mounts its view, unmounted at the end.
func mountReverseTest(t *testing.T, dir string, password string, rules []string) string {
	t.Helper()
	return mountReverseWith(t, dir, password, rules, Options{Logger: testLogger(t)})
}

// mountReverseWith is mountReverseTest with the mount's options.
func mountReverseWith(t *testing.T, dir string, password string, rules []string, opts Options) string {
	t.Helper()
	testdeps.Need(t, testdeps.FUSE)
	v, err := gocryptfs.UnlockReverse(context.Background(), dir, []byte(password))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	ex, err := exclude.Compile(rules)
	if err != nil {
		t.Fatal(err)
	}
	mp := t.TempDir()
	m, err := MountReverse(mp, ReverseVolume{Dir: dir, Content: v.Content, Names: v.Names,
		PerDirIV: v.Config.Has(gocryptfs.FlagDirIV), Exclude: ex}, opts)
	if err != nil {
		t.Fatalf("mount on %s: %v", mp, err)
	}
	t.Cleanup(func() {
		if err := unmount(m); err != nil {
			t.Errorf("unmount %s: %v", mp, err)
			unmountFUSE(mp, true)
		}
	})
	return mp
}

// TestReverseViewIsGocryptfsView serves one plaintext folder in reverse with gocryptfs and with
// vaultui, with the config gocryptfs -init -reverse made, and compares the views entry by entry
// (names, types, permissions, sizes, content hashes, link targets). Then a copy of each view,
// as a backup would hold it, is mounted forward by the other program and gives back the
// plaintext.
func TestReverseViewIsGocryptfsView(t *testing.T) {
	bin := gocryptfsForReverse(t)
	testdeps.Need(t, testdeps.FUSE)
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"encrypted-names", nil},
		{"plaintextnames", []string{"-plaintextnames"}},
		{"deterministic-names", []string{"-deterministic-names"}},
		{"longnamemax", []string{"-longnamemax", "100"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			plainTree(t, dir)
			pw := filepath.Join(t.TempDir(), "pw")
			os.WriteFile(pw, []byte("reverse-test\n"), 0o600)
			args := append([]string{"-init", "-reverse", "-q", "-scryptn", "10", "-passfile", pw}, tc.flags...)
			if out, err := exec.Command(bin, append(args, dir)...).CombinedOutput(); err != nil {
				t.Fatalf("gocryptfs -init -reverse: %v\n%s", err, out)
			}
			plain := treeSnapshot(t, dir, gocryptfs.ReverseConfName)

			ours := mountReverseTest(t, dir, "reverse-test", nil)
			theirs := t.TempDir()
			gocryptfsMount(t, bin, theirs, "-reverse", "-passfile", pw, dir)
			want := treeSnapshot(t, theirs)
			got := treeSnapshot(t, ours)
			compareViews(t, "vaultui's reverse view against gocryptfs's", got, want)
			if len(want) < len(plain) {
				t.Fatalf("gocryptfs shows %d entries for %d plaintext ones", len(want), len(plain))
			}

			// Backups of each view, mounted forward by the other program.
			for _, c := range []struct{ from, to string }{{ours, "vaultui"}, {theirs, "gocryptfs"}} {
				backup := filepath.Join(t.TempDir(), "backup")
				if out, err := exec.Command("cp", "-a", c.from, backup).CombinedOutput(); err != nil {
					t.Fatalf("cp -a %s: %v\n%s", c.from, err, out)
				}
				if c.to == "vaultui" {
					// gocryptfs forward on vaultui's view.
					mp := t.TempDir()
					gocryptfsMount(t, bin, mp, "-ro", "-passfile", pw, backup)
					compareViews(t, "gocryptfs forward on a copy of vaultui's view", treeSnapshot(t, mp), plain)
				} else {
					v, err := gocryptfs.Unlock(context.Background(), backup, []byte("reverse-test"))
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(v.Close)
					mp, _ := mountTest(t, GocryptfsVolume{Dir: backup, Content: v.Content, Names: v.Names,
						PerDirIV: v.Config.Has(gocryptfs.FlagDirIV), XattrNames: v.XattrNames}, Options{ReadOnly: true})
					compareViews(t, "vaultui forward on a copy of gocryptfs's view", treeSnapshot(t, mp), plain)
				}
			}
		})
	}
}

// rewrite replaces the content of the file p and moves its mtime on by a second: a write within
// the same tick of the kernel's coarse clock could leave it as it was.
func rewrite(t *testing.T, p string, content []byte) {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, content, 0o640); err != nil {
		t.Fatal(err)
	}
	later := fi.ModTime().Add(time.Second)
	if err := os.Chtimes(p, later, later); err != nil {
		t.Fatal(err)
	}
}

// TestReverseViewIsStable: two mounts of one folder show the same bytes and inode numbers, and
// changing one file changes only that file's bytes.
func TestReverseViewIsStable(t *testing.T) {
	dir := t.TempDir()
	plainTree(t, dir)
	if _, err := vault.CreateReverse(context.Background(), dir, []byte("pw"), vault.CreateOptions{ScryptLogN: 10}); err != nil {
		t.Fatal(err)
	}
	first := mountReverseTest(t, dir, "pw", nil)
	a := treeSnapshot(t, first)
	inos := map[string]uint64{}
	filepath.WalkDir(first, func(p string, d fs.DirEntry, err error) error {
		fi, _ := os.Lstat(p)
		inos[p[len(first):]] = fi.Sys().(*syscall.Stat_t).Ino
		return nil
	})
	second := mountReverseTest(t, dir, "pw", nil)
	compareViews(t, "a second mount", treeSnapshot(t, second), a)
	seen := map[uint64]string{}
	filepath.WalkDir(second, func(p string, d fs.DirEntry, err error) error {
		fi, _ := os.Lstat(p)
		ino := fi.Sys().(*syscall.Stat_t).Ino
		if inos[p[len(second):]] != ino {
			t.Errorf("%s: inode %d, on the first mount %d", p, ino, inos[p[len(second):]])
		}
		if prev, dup := seen[ino]; dup {
			t.Errorf("%s and %s share inode %d", p, prev, ino)
		}
		seen[ino] = p
		return nil
	})

	// Change one file: only its view changes (a directory's mtime aside).
	rewrite(t, filepath.Join(dir, "b4096"), bytes.Repeat([]byte("x"), 4096))
	time.Sleep(cacheTimeout + 100*time.Millisecond) // the kernel's attribute cache
	b := treeSnapshot(t, second)
	var changed []string
	for p := range a {
		if a[p] != b[p] {
			changed = append(changed, p)
		}
	}
	if len(changed) != 1 {
		t.Errorf("after changing one file, %d entries changed: %q", len(changed), changed)
	}
}

// TestReverseExcludedEntriesAreInvisible: excluded entries are in no listing and no lookup
// finds them, under their encrypted names or their .name files; a "!" rule re-includes a file
// below an excluded folder, which then shows only that file (gocryptfs #927).
func TestReverseExcludedEntriesAreInvisible(t *testing.T) {
	dir := t.TempDir()
	plainTree(t, dir)
	os.MkdirAll(filepath.Join(dir, "private", "keep"), 0o700)
	os.WriteFile(filepath.Join(dir, "private", "secret"), []byte("s"), 0o600)
	os.WriteFile(filepath.Join(dir, "private", "keep", "this.txt"), []byte("k"), 0o600)
	os.WriteFile(filepath.Join(dir, "x.log"), []byte("l"), 0o600)
	if _, err := vault.CreateReverse(context.Background(), dir, []byte("pw"), vault.CreateOptions{ScryptLogN: 10, PlaintextNames: true}); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("l", 176)
	rules := []string{"/private", "!/private/keep/this.txt", "*.log", "/" + long, "/dir/sub/"}
	mp := mountReverseTest(t, dir, "pw", rules)
	got := treeSnapshot(t, mp)
	for _, p := range []string{"private", "private/keep", "private/keep/this.txt", "small", "dir", "dir/abslink", "gocryptfs.conf"} {
		if _, ok := got[p]; !ok {
			t.Errorf("%q is missing", p)
		}
	}
	for _, p := range []string{"private/secret", "x.log", long, "dir/sub", "dir/sub/file"} {
		if _, ok := got[p]; ok {
			t.Errorf("%q is listed", p)
		}
		if _, err := os.Lstat(filepath.Join(mp, p)); !os.IsNotExist(err) {
			t.Errorf("lookup of %q: %v, want ENOENT", p, err)
		}
	}

	// With encrypted names: an excluded long name leaves no .name file behind.
	dir2 := t.TempDir()
	os.WriteFile(filepath.Join(dir2, long), []byte("x"), 0o600)
	os.WriteFile(filepath.Join(dir2, "kept"), []byte("x"), 0o600)
	if _, err := vault.CreateReverse(context.Background(), dir2, []byte("pw"), vault.CreateOptions{ScryptLogN: 10}); err != nil {
		t.Fatal(err)
	}
	all := treeSnapshot(t, mountReverseTest(t, dir2, "pw", nil))
	mp2 := mountReverseTest(t, dir2, "pw", []string{"/" + long})
	some := treeSnapshot(t, mp2)
	var gone []string
	for p := range all {
		if _, ok := some[p]; !ok {
			gone = append(gone, p)
			if _, err := os.Lstat(filepath.Join(mp2, p)); !os.IsNotExist(err) {
				t.Errorf("lookup of excluded %q: %v, want ENOENT", p, err)
			}
		}
	}
	slices.Sort(gone)
	if len(gone) != 2 || !strings.HasPrefix(gone[0], "gocryptfs.longname.") || gone[1] != gone[0]+".name" {
		t.Errorf("excluding the long name removed %q, want its entry and its .name file", gone)
	}
}

// TestReverseRsyncIsIncremental backs a reverse view up with rsync, changes one file, and
// checks that the second rsync transfers that file only: everything else encrypts to the same
// bytes with the same size and time, so rsync skips it.
func TestReverseRsyncIsIncremental(t *testing.T) {
	rsync, err := exec.LookPath("rsync")
	if err != nil {
		t.Skip("rsync is not installed (apt-get install rsync)")
	}
	dir := t.TempDir()
	plainTree(t, dir)
	if _, err := vault.CreateReverse(context.Background(), dir, []byte("pw"), vault.CreateOptions{ScryptLogN: 10}); err != nil {
		t.Fatal(err)
	}
	view := mountReverseTest(t, dir, "pw", nil)
	backup := t.TempDir()
	run := func() string {
		out, err := exec.Command(rsync, "-a", "--delete", "--stats", "--itemize-changes", view+"/", backup+"/").CombinedOutput()
		if err != nil {
			t.Fatalf("rsync: %v\n%s", err, out)
		}
		return string(out)
	}
	run()
	rewrite(t, filepath.Join(dir, "dir", "sub", "file"), []byte("changed"))
	time.Sleep(cacheTimeout + 100*time.Millisecond) // the kernel's attribute cache
	out := run()
	if !strings.Contains(out, "Number of regular files transferred: 1\n") {
		t.Errorf("the second rsync did not transfer exactly one file:\n%s", out)
	}
	var sent []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, ">f") {
			sent = append(sent, l)
		}
	}
	if len(sent) != 1 {
		t.Errorf("files sent: %q, want the changed one only", sent)
	}
	// The backup is the view: it mounts forward and holds the change.
	v, err := gocryptfs.Unlock(context.Background(), backup, []byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	mp, _ := mountTest(t, GocryptfsVolume{Dir: backup, Content: v.Content, Names: v.Names, PerDirIV: true}, Options{ReadOnly: true})
	compareViews(t, "the backup mounted forward", treeSnapshot(t, mp), treeSnapshot(t, dir, gocryptfs.ReverseConfName))
}

// TestMountFlags: the forward mount and the reverse view get their mount flags from Options
// alike (noexec when asked), and the reverse view is read-only whatever Options says.
func TestMountFlags(t *testing.T) {
	fwd, _ := mountTest(t, testVolume(t, crypto.AESSIV, true), Options{NoExec: true})
	dir := t.TempDir()
	if _, err := vault.CreateReverse(context.Background(), dir, []byte("pw"), vault.CreateOptions{ScryptLogN: 10}); err != nil {
		t.Fatal(err)
	}
	rev := mountReverseWith(t, dir, "pw", nil, Options{NoExec: true, Logger: testLogger(t)})
	for _, c := range []struct {
		mp         string
		want, deny int64
	}{
		{fwd, unix.ST_NOEXEC, unix.ST_RDONLY},
		{rev, unix.ST_NOEXEC | unix.ST_RDONLY, 0},
	} {
		var st unix.Statfs_t
		if err := unix.Statfs(c.mp, &st); err != nil {
			t.Fatal(err)
		}
		if st.Flags&c.want != c.want || st.Flags&c.deny != 0 {
			t.Errorf("%s: mount flags %#x, want %#x set and %#x clear", c.mp, st.Flags, c.want, c.deny)
		}
	}
}
