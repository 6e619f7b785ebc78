package vfs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vaultui/vaultui/vault/cryptomator"
)

// linkState says whether the symlink p points to want yet, by its target and by its size
// (which the kernel caches with its attributes).
func linkState(p, want string) func() (string, bool) {
	return func() (string, bool) {
		got, err := os.Readlink(p)
		if err != nil {
			return err.Error(), false
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err.Error(), false
		}
		if got != want || fi.Size() != int64(len(want)) {
			return fmt.Sprintf("target %q, size %d", got, fi.Size()), false
		}
		return "", false
	}
}

// modeState says whether p shows the permission bits want yet.
func modeState(p string, want os.FileMode) func() (string, bool) {
	return func() (string, bool) {
		fi, err := os.Lstat(p)
		if err != nil {
			return err.Error(), false
		}
		if fi.Mode().Perm() != want {
			return fmt.Sprintf("mode %v", fi.Mode()), false
		}
		return "", false
	}
}

// TestCryptomatorOfflineChangesShow: what Cryptomator's own writer (vault/cryptomator, as
// Cryptomator or a sync tool would) changes in the vault's folders shows through a mount
// with the long caches on within the second, in the d/ folders (entries made, renamed and
// removed) and in entry folders: a symlink's symlink.c9r replaced, a directory's dir.c9r
// naming another directory now; and a directory's own folder's mode.
func TestCryptomatorOfflineChangesShow(t *testing.T) {
	vol, v := cryptomatorVolume(t)
	mp, m := mountTest(t, vol, Options{watchOwn: true})
	if !m.root.fsys.longCache {
		t.Fatal("a Cryptomator mount without the long caches")
	}
	at := func(rel string) string { return filepath.Join(mp, rel) }
	entryPath := func(rel string) string {
		t.Helper()
		e, err := v.Resolve(rel)
		if err != nil {
			t.Fatal(err)
		}
		return filepath.Join(v.Dir(), filepath.FromSlash(e.Parent.Path), e.Stored)
	}
	dirOf := func(rel string) cryptomator.Dir {
		t.Helper()
		if rel == "" {
			return v.Root()
		}
		e, err := v.Resolve(rel)
		if err != nil {
			t.Fatal(err)
		}
		d, err := v.OpenDir(e)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if err := os.Mkdir(at("a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(at("a/old"), []byte("in a"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The kernel holds what is there, and that the rest is not.
	for _, rel := range []string{"new", "newdir", "link", "a/inc", "renamed"} {
		if _, err := os.Lstat(at(rel)); !os.IsNotExist(err) {
			t.Fatalf("%s before it exists: %v", rel, err)
		}
	}
	if _, err := os.ReadDir(at("a")); err != nil {
		t.Fatal(err)
	}

	root := v.Root()
	if _, err := v.WriteFile(root, "new", strings.NewReader("offline")); err != nil {
		t.Fatal(err)
	}
	showsWithin(t, "file written offline", contentsState(at("new"), nil, []byte("offline")))
	if _, err := v.Mkdir(root, "newdir"); err != nil {
		t.Fatal(err)
	}
	showsWithin(t, "directory made offline", existsState(at("newdir"), true, true))
	if _, err := v.Symlink(root, "link", "t1"); err != nil {
		t.Fatal(err)
	}
	showsWithin(t, "symlink made offline", linkState(at("link"), "t1"))

	// A symlink's target replaced in its folder: symlink.c9r renamed over.
	if _, err := v.Symlink(root, "link2", "t2-longer"); err != nil {
		t.Fatal(err)
	}
	showsWithin(t, "second symlink", linkState(at("link2"), "t2-longer"))
	link2 := entryPath("link2")
	if err := os.Rename(filepath.Join(link2, cryptomator.SymlinkFile), filepath.Join(entryPath("link"), cryptomator.SymlinkFile)); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(link2); err != nil {
		t.Fatal(err)
	}
	showsWithin(t, "symlink retargeted", linkState(at("link"), "t2-longer"))
	showsWithin(t, "emptied symlink", existsState(at("link2"), false, false))

	// A directory's dir.c9r replaced by one naming another directory.
	c, err := v.Mkdir(root, "c")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.WriteFile(c, "inc", strings.NewReader("in c")); err != nil {
		t.Fatal(err)
	}
	cEntry := entryPath("c")
	if err := os.Rename(filepath.Join(cEntry, cryptomator.DirFile), filepath.Join(entryPath("a"), cryptomator.DirFile)); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(cEntry); err != nil {
		t.Fatal(err)
	}
	showsWithin(t, "directory repointed", contentsState(at("a/inc"), nil, []byte("in c")))
	showsWithin(t, "directory repointed, its old file", existsState(at("a/old"), false, false))

	// Renamed and removed offline.
	if err := os.Rename(entryPath("new"), cmCipherPath(t, v, "renamed")); err != nil {
		t.Fatal(err)
	}
	showsWithin(t, "old name", existsState(at("new"), false, false))
	showsWithin(t, "new name", contentsState(at("renamed"), nil, []byte("offline")))
	if err := os.Remove(entryPath("renamed")); err != nil {
		t.Fatal(err)
	}
	showsWithin(t, "removed", existsState(at("renamed"), false, false))

	// A directory's mode, which its own d/ folder holds.
	if _, err := os.ReadDir(at("newdir")); err != nil { // its folder is watched once used
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(v.Dir(), filepath.FromSlash(dirOf("newdir").Path)), 0o700); err != nil {
		t.Fatal(err)
	}
	showsWithin(t, "directory's mode", modeState(at("newdir"), 0o700))
}

// TestCryptomatorEntryMadeInSteps: a sync tool makes a long name's folder first (with its
// name.c9s) and brings its contents.c9r later. The entry shows through a mount with the long
// caches on as soon as its payload is there: the folder is watched while it is being made.
// Unwatched, the kernel kept its "no such file" for the cache timeout (a minute).
func TestCryptomatorEntryMadeInSteps(t *testing.T) {
	vol, v := cryptomatorVolume(t)
	mp, _ := mountTest(t, vol, Options{cacheTimeout: time.Hour, watchOwn: true})
	nameA, nameB := strings.Repeat("a", 200), strings.Repeat("b", 200)
	if _, err := v.WriteFile(v.Root(), nameA, strings.NewReader("brought in steps")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(mp, nameB)); !os.IsNotExist(err) {
		t.Fatalf("before it exists: %v", err)
	}
	root := filepath.Join(vol.CipherDir(), v.Names().DirPath(""))
	storedA, _ := cryptomator.StoredName(v.Names().Encrypt("", nameA), v.ShorteningThreshold())
	storedB, longB := cryptomator.StoredName(v.Names().Encrypt("", nameB), v.ShorteningThreshold())
	if longB == "" {
		t.Fatal("the name is not long")
	}
	if err := os.Mkdir(filepath.Join(root, storedB), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, storedB, cryptomator.NameFile), []byte(longB), 0o600); err != nil {
		t.Fatal(err)
	}
	// The watcher sees the folder without its payload (it acts within a tenth of a second).
	time.Sleep(300 * time.Millisecond)
	if err := os.Rename(filepath.Join(root, storedA, cryptomator.ContentsFile), filepath.Join(root, storedB, cryptomator.ContentsFile)); err != nil {
		t.Fatal(err)
	}
	showsWithin(t, "the entry made in steps", contentsState(filepath.Join(mp, nameB), nil, []byte("brought in steps")))
}
