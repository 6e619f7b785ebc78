package vfs

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/vaultui/vaultui/vault"
	"github.com/vaultui/vaultui/vault/cryptomator"
	"github.com/vaultui/vaultui/vault/cryptomator/cmfixture"
)

// cryptomatorVolume makes a fresh Cryptomator vault (format 8, SIV_GCM) and returns it as a
// volume, with the vault to read it offline.
func cryptomatorVolume(t testing.TB) (Volume, *cryptomator.Vault) {
	return cryptomatorVolumeOf(t, cryptomator.SIVGCM)
}

// cryptomatorVolumeOf is cryptomatorVolume with the content encryption combo.
func cryptomatorVolumeOf(t testing.TB, combo cryptomator.CipherCombo) (Volume, *cryptomator.Vault) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "vault")
	v, err := cryptomator.Create(context.Background(), dir, []byte("pw"), cryptomator.CreateOptions{ScryptLogN: 10, Combo: combo})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return CryptomatorVolume{v}, v
}

// mountFixture mounts a copy of the fixture read-only and returns the mount point.
func mountFixture(t *testing.T, fx cmfixture.Fixture) string {
	dir := fx.Folder(t)
	pw, err := fx.Password()
	if err != nil {
		t.Fatal(err)
	}
	v, err := cryptomator.Open(context.Background(), dir, pw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() }) // after the unmount, which mountTest registered later
	mp, _ := mountTest(t, CryptomatorVolume{v}, Options{ReadOnly: true})
	return mp
}

// The vault an independent implementation made (rclone's Cryptomator backend) reads through
// the mount exactly as its manifest says.
func TestCryptomatorFixtureMounted(t *testing.T) {
	if err := cmfixture.SIVGCMA.CheckTree(mountFixture(t, cmfixture.SIVGCMA)); err != nil {
		t.Fatal(err)
	}
}

// A vault rclone made with more variety (sizes around both block sizes, empty files and
// folders, deep nesting, a name it stored in NFD as given) reads exactly through the mount;
// the NFD name is found by a lookup before its directory was ever listed.
func TestCryptomatorRcloneFixtureMounted(t *testing.T) {
	mp := mountFixture(t, cmfixture.RcloneB)
	nfd := filepath.Join(mp, "unicode", "re\u0301sume\u0301-written-nfd.txt")
	if _, err := os.Stat(nfd); err != nil {
		t.Fatalf("the name rclone stored in NFD, looked up first: %v", err)
	}
	if err := cmfixture.RcloneB.CheckTree(mp); err != nil {
		t.Fatal(err)
	}
}

// offlineTree reads a Cryptomator vault without the mount, through vault/cryptomator's own
// reader: path -> "dir", "link:<target>" or the file's content.
func offlineTree(t *testing.T, v *cryptomator.Vault) map[string]string {
	t.Helper()
	out := map[string]string{}
	var walk func(d cryptomator.Dir, prefix string)
	walk = func(d cryptomator.Dir, prefix string) {
		ents, err := v.ReadDir(d)
		if err != nil {
			t.Fatalf("offline: listing %q: %v", prefix, err)
		}
		for _, e := range ents {
			p := path.Join(prefix, e.Name)
			switch e.Kind {
			case cryptomator.KindDir:
				out[p] = "dir"
				sub, err := v.OpenDir(e)
				if err != nil {
					t.Fatalf("offline: %s: %v", p, err)
				}
				walk(sub, p)
			case cryptomator.KindSymlink:
				target, err := v.ReadLink(e)
				if err != nil {
					t.Fatalf("offline: %s: %v", p, err)
				}
				out[p] = "link:" + target
			default:
				var b bytes.Buffer
				if _, err := v.ReadFile(e, &b); err != nil {
					t.Fatalf("offline: %s: %v", p, err)
				}
				out[p] = b.String()
			}
		}
	}
	walk(v.Root(), "")
	return out
}

// mountedTree reads the same map through a mount.
func mountedTree(t *testing.T, mp string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(mp, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == mp {
			return err
		}
		rel, _ := filepath.Rel(mp, p)
		switch {
		case d.IsDir():
			out[rel] = "dir"
		case d.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "link:" + target
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func diffTrees(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for p, w := range want {
		g, ok := got[p]
		switch {
		case !ok:
			t.Errorf("%s: %s missing", what, p)
		case g != w:
			t.Errorf("%s: %s differs: %d bytes %.40q, want %d bytes %.40q", what, p, len(g), g, len(w), w)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: %s is there, not expected", what, p)
		}
	}
}

func randomBytes(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return string(b)
}

// Everything a mount writes into a Cryptomator vault reads back exactly through the format's
// offline reader, and fsck finds nothing wrong: files around the 32 KiB chunk size, names
// long enough to be shortened (.c9s), symlinks, renames between short and long names, a file
// replacing another, truncation both ways, writes past the end (no holes in this format).
// Both content encryptions: SIV_GCM, and SIV_CTRMAC of vaults migrated from format 7.
func TestCryptomatorWritesReadBack(t *testing.T) {
	for _, combo := range []cryptomator.CipherCombo{cryptomator.SIVGCM, cryptomator.SIVCTRMAC} {
		t.Run(string(combo), func(t *testing.T) { cryptomatorWritesReadBack(t, combo) })
	}
}

func cryptomatorWritesReadBack(t *testing.T, combo cryptomator.CipherCombo) {
	vol, v := cryptomatorVolumeOf(t, combo)
	mp, _ := mountTest(t, vol, Options{})
	long := strings.Repeat("long name ", 20) // 200 bytes: over the 220-character threshold once encrypted
	want := map[string]string{}
	write := func(p, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(mp, p), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		want[p] = content
	}
	mkdir := func(p string) {
		t.Helper()
		if err := os.Mkdir(filepath.Join(mp, p), 0o755); err != nil {
			t.Fatal(err)
		}
		want[p] = "dir"
	}
	rename := func(from, to string) {
		t.Helper()
		// syscall.Rename: os.Rename refuses to replace a directory, rename(2) does not.
		if err := syscall.Rename(filepath.Join(mp, from), filepath.Join(mp, to)); err != nil {
			t.Fatalf("rename %.30s… -> %.30s…: %v", from, to, err)
		}
		for p, c := range want {
			if p == from || strings.HasPrefix(p, from+"/") {
				delete(want, p)
				want[to+strings.TrimPrefix(p, from)] = c
			}
		}
	}
	for _, n := range []int{0, 1, 32767, 32768, 32769, 100000, 1<<20 + 3} {
		write("size-"+strconv.Itoa(n), randomBytes(n))
	}
	mkdir("a")
	mkdir("a/b")
	mkdir("a/" + long)
	write("a/b/deep", "deep file")
	write("a/"+long+"/inside", "in a directory with a long name")
	write(long, "a file with a long name")
	if err := os.Symlink("../size-1", filepath.Join(mp, "a/link")); err != nil {
		t.Fatal(err)
	}
	want["a/link"] = "link:../size-1"
	if err := os.Symlink("target of a long link", filepath.Join(mp, "a/"+long+"-link")); err != nil {
		t.Fatal(err)
	}
	want["a/"+long+"-link"] = "link:target of a long link"

	rename(long, "short now")            // long -> short, file
	rename("size-1", long+" 2")          // short -> long, file
	rename(long+" 2", long+" 3")         // long -> long, file
	rename("a/"+long, "a/dir short now") // long -> short, directory
	rename("a/b", "a/"+long+" dir")      // short -> long, directory
	rename("a/link", "a/"+long+" link")  // short -> long, symlink
	write("over", "old content")
	write("new", "new content")
	rename("new", "over") // a file replacing a file (an editor's save)
	write(long+" over", "old long")
	write("new2", "new for long")
	rename("new2", long+" over") // a file replacing a file with a long name
	mkdir("empty")
	mkdir("moved")
	rename("moved", "empty") // a directory replacing an empty one

	// Truncation and writes past the end: every chunk is sealed, zeros too.
	p := filepath.Join(mp, "size-100000")
	if err := os.Truncate(p, 70000); err != nil {
		t.Fatal(err)
	}
	want["size-100000"] = want["size-100000"][:70000]
	if err := os.Truncate(p, 200000); err != nil {
		t.Fatal(err)
	}
	want["size-100000"] += string(make([]byte, 130000))
	f, err := os.OpenFile(filepath.Join(mp, "size-32767"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("after a gap"), 100000); err != nil {
		t.Fatal(err)
	}
	f.Close()
	want["size-32767"] += string(make([]byte, 100000-32767)) + "after a gap"

	if err := os.Remove(filepath.Join(mp, "size-0")); err != nil {
		t.Fatal(err)
	}
	delete(want, "size-0")
	if err := os.Remove(filepath.Join(mp, "a/"+long+"-link")); err != nil {
		t.Fatal(err)
	}
	delete(want, "a/"+long+"-link")
	if err := os.Remove(filepath.Join(mp, "a")); !errors.Is(err, syscall.ENOTEMPTY) {
		t.Fatalf("rmdir of a directory that is not empty: %v, want ENOTEMPTY", err)
	}
	mkdir("gone")
	if err := os.Remove(filepath.Join(mp, "gone")); err != nil {
		t.Fatal(err)
	}
	delete(want, "gone")
	// Hard links and special files have no place in the format.
	if err := os.Link(filepath.Join(mp, "over"), filepath.Join(mp, "hard")); !errors.Is(err, syscall.EPERM) {
		t.Errorf("link: %v, want EPERM", err)
	}
	if err := syscall.Mkfifo(filepath.Join(mp, "fifo"), 0o644); !errors.Is(err, syscall.EPERM) {
		t.Errorf("mkfifo: %v, want EPERM", err)
	}

	diffTrees(t, "mounted", mountedTree(t, mp), want)
	diffTrees(t, "offline", offlineTree(t, v), want)
	problems, err := vault.FsckVolume(context.Background(), v.Volume(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("fsck: %v", p)
	}
	// Nothing is left in the vault's folders that is not an entry of the format.
	err = filepath.WalkDir(filepath.Join(vol.CipherDir(), "d"), func(p string, d os.DirEntry, err error) error {
		if err == nil && cryptomator.IsTemp(d.Name()) {
			t.Errorf("left behind: %s", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A sync tool's conflict copy of an entry shows in a Cryptomator mount beside its original,
// under the name a gocryptfs mount gives it, and goes away when removed through the mount.
func TestCryptomatorConflictCopyShown(t *testing.T) {
	vol, v := cryptomatorVolume(t)
	mp, _ := mountTest(t, vol, Options{})
	if err := os.WriteFile(filepath.Join(mp, "report.odt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(mp, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(vol.CipherDir(), v.Names().DirPath(""))
	stored := v.Names().Encrypt("", "report.odt")
	copyName := strings.TrimSuffix(stored, ".c9r") + ".sync-conflict-20261130-101010-ABCDEF7" + ".c9r"
	b, err := os.ReadFile(filepath.Join(root, stored))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, copyName), b, 0o600); err != nil {
		t.Fatal(err)
	}
	// A copy of a directory's entry, as Dropbox names it.
	dropboxCopyOfDir(t, root, v, "sub")

	ents, err := os.ReadDir(mp)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	shown := "report (conflict 2026-11-30 Syncthing).odt"
	if strings.Join(names, "|") != "report (conflict 2026-11-30 Syncthing).odt|report.odt|sub|sub (conflict 2026-11-30 Dropbox)" {
		t.Fatalf("listed %q", names)
	}
	if got, err := os.ReadFile(filepath.Join(mp, shown)); err != nil || string(got) != "mine" {
		t.Fatalf("the copy reads %q, %v", got, err)
	}
	if st, err := os.Stat(filepath.Join(mp, "sub (conflict 2026-11-30 Dropbox)")); err != nil || !st.IsDir() {
		t.Fatalf("the directory's copy: %v, %v", st, err)
	}
	if err := os.Remove(filepath.Join(mp, shown)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(root, copyName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the copy's cipher file after removing it: %v", err)
	}
}

// dropboxCopyOfDir copies the entry of directory name in the root folder root as Dropbox
// names a conflict copy, its dir.c9r as it is (so the copy names the same directory), and
// returns the copy's stored name and the directory's ID.
func dropboxCopyOfDir(t *testing.T, root string, v *cryptomator.Vault, name string) (string, []byte) {
	t.Helper()
	dirStored := v.Names().Encrypt("", name)
	dirCopy := strings.TrimSuffix(dirStored, ".c9r") + " (conflicted copy 2026-11-30)" + ".c9r"
	if err := os.Mkdir(filepath.Join(root, dirCopy), 0o700); err != nil {
		t.Fatal(err)
	}
	id, err := os.ReadFile(filepath.Join(root, dirStored, cryptomator.DirFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, dirCopy, cryptomator.DirFile), id, 0o600); err != nil {
		t.Fatal(err)
	}
	return dirCopy, id
}

// A sync tool's copy of a directory's entry names the original's own directory (its dir.c9r
// copied as it is): removing the copy through the mount takes its entry only. The directory
// is the original's; it used to be removed with the copy, leaving the original naming none.
// rmdir's rule still holds: while the directory has entries, the copy is not empty.
func TestCryptomatorRemoveCopyOfSameDirectory(t *testing.T) {
	vol, v := cryptomatorVolume(t)
	mp, _ := mountTest(t, vol, Options{})
	if err := os.Mkdir(filepath.Join(mp, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(vol.CipherDir(), v.Names().DirPath(""))
	dirCopy, id := dropboxCopyOfDir(t, root, v, "sub")
	copyPath := filepath.Join(mp, "sub (conflict 2026-11-30 Dropbox)")
	// The mount serves a directory under one name at a time (the other is "reached twice"):
	// the copy's, here.
	if err := os.WriteFile(filepath.Join(copyPath, "kept.txt"), []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(copyPath); !errors.Is(err, syscall.ENOTEMPTY) {
		t.Fatalf("rmdir of the copy while the directory has an entry: %v, want ENOTEMPTY", err)
	}
	if err := os.Remove(filepath.Join(copyPath, "kept.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(copyPath); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(root, dirCopy)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the copy's entry after removing it: %v", err)
	}
	if _, err := os.Stat(filepath.Join(vol.CipherDir(), v.Names().DirPath(string(id)))); err != nil {
		t.Fatalf("the original's directory folder after removing the copy: %v", err)
	}
	if err := os.WriteFile(filepath.Join(mp, "sub", "after.txt"), []byte("after"), 0o644); err != nil {
		t.Fatalf("writing into the original after removing the copy: %v", err)
	}
}

// Hostile or damaged entries in a Cryptomator vault's folders fail alone, with EIO or as
// hidden names, never by following a symlink out of the vault or by releasing content that
// did not authenticate; the rest of the mount keeps working.
func TestCryptomatorHostileEntries(t *testing.T) {
	vol, v := cryptomatorVolume(t)
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("outside the vault"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ok", "file-link", "chunk"} {
		if _, err := v.WriteFile(v.Root(), name, strings.NewReader(name+strings.Repeat("!", 40000))); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"dir-link", "id-elsewhere"} {
		if _, err := v.Mkdir(v.Root(), name); err != nil {
			t.Fatal(err)
		}
	}
	root := filepath.Join(vol.CipherDir(), v.Names().DirPath(""))
	at := func(name string) string { return filepath.Join(root, v.Names().Encrypt("", name)) }
	// A file's entry replaced by a symlink to a file outside.
	os.Remove(at("file-link"))
	if err := os.Symlink(secret, at("file-link")); err != nil {
		t.Fatal(err)
	}
	// A directory's dir.c9r replaced by a symlink.
	os.Remove(filepath.Join(at("dir-link"), cryptomator.DirFile))
	if err := os.Symlink(secret, filepath.Join(at("dir-link"), cryptomator.DirFile)); err != nil {
		t.Fatal(err)
	}
	// A directory ID whose folder is a symlink to a folder outside.
	id, err := os.ReadFile(filepath.Join(at("id-elsewhere"), cryptomator.DirFile))
	if err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(vol.CipherDir(), v.Names().DirPath(string(id)))
	if err := os.RemoveAll(folder); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(secret), folder); err != nil {
		t.Fatal(err)
	}
	// A flipped byte in the second chunk.
	f, err := os.OpenFile(at("chunk"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	f.ReadAt(b, 68+32796+100)
	b[0] ^= 1
	f.WriteAt(b, 68+32796+100)
	f.Close()
	// A .c9s folder whose name.c9s does not hash to it, and a file not of the format.
	if err := os.Mkdir(filepath.Join(root, "AAAA.c9s"), 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "AAAA.c9s", cryptomator.NameFile), []byte(v.Names().Encrypt("", "x")), 0o600)
	os.WriteFile(filepath.Join(root, "desktop.ini"), []byte("x"), 0o600)

	mp, _ := mountTest(t, vol, Options{})
	for _, name := range []string{"file-link", "dir-link/x", "id-elsewhere/secret"} {
		if b, err := os.ReadFile(filepath.Join(mp, name)); err == nil || strings.Contains(string(b), "outside") {
			t.Errorf("%s: read %q, %v; want an error", name, b, err)
		}
	}
	// The first chunk authenticates and may be read; nothing of the second is released.
	if b, err := os.ReadFile(filepath.Join(mp, "chunk")); !errors.Is(err, syscall.EIO) || len(b) > 32768 || string(b) != ("chunk" + strings.Repeat("!", 40000))[:len(b)] {
		t.Errorf("a file with a damaged second chunk read %d bytes, %v; want at most the first chunk, then EIO", len(b), err)
	}
	if b, err := os.ReadFile(filepath.Join(mp, "ok")); err != nil || string(b) != "ok"+strings.Repeat("!", 40000) {
		t.Errorf("the intact file: %v", err)
	}
	ents, err := os.ReadDir(mp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() == "desktop.ini" || strings.HasSuffix(e.Name(), ".c9s") || e.Name() == "x" {
			t.Errorf("listed %q", e.Name())
		}
	}
}

// Growing a file of a format without holes writes every block: a growth beyond the disk
// fails at once with ENOSPC, the file as it was, instead of filling the disk first.
func TestCryptomatorHugeTruncateFailsAtOnce(t *testing.T) {
	vol, _ := cryptomatorVolume(t)
	mp, _ := mountTest(t, vol, Options{})
	p := filepath.Join(mp, "f")
	if err := os.WriteFile(p, []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(vol.CipherDir(), &st); err != nil {
		t.Fatal(err)
	}
	beyond := int64(st.Bavail*uint64(st.Bsize)) + 1<<30
	if err := os.Truncate(p, beyond); !errors.Is(err, syscall.ENOSPC) && !errors.Is(err, syscall.EFBIG) {
		t.Fatalf("truncate to %d bytes, past the disk's free space: %v, want ENOSPC", beyond, err)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "kept" {
		t.Fatalf("after the refused truncate: %q, %v", b, err)
	}
	var after syscall.Statfs_t
	if err := syscall.Statfs(vol.CipherDir(), &after); err != nil {
		t.Fatal(err)
	}
	if after.Bavail+st.Bavail/100 < st.Bavail {
		t.Errorf("the refused truncate used the disk: %d blocks free before, %d after", st.Bavail, after.Bavail)
	}
}
