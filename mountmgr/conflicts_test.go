package mountmgr

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

// TestConflictWithNonUTF8NameThroughDaemon: a sync tool's conflict copy of a file whose
// name is not UTF-8 is listed by the daemon under its exact bytes, and settles through it.
func TestConflictWithNonUTF8NameThroughDaemon(t *testing.T) {
	base := daemonEnv(t)
	cipherdir, mp, pw := newVault(t, base, crypto.AESGCM)
	c := connect(t)
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw}); err != nil {
		t.Fatal(err)
	}
	defer c.Unmount(context.Background(), mp, true)
	const (
		name   = "r\xe9sum\xe9.txt"
		shown  = "r\xe9sum\xe9 (conflict 2026-11-30 Syncthing).txt"
		marker = ".sync-conflict-20261130-101010-ABCDEF7"
		copied = "the copy, 100 bytes: ......................................................................... end"
		later  = "the original, rewritten after the copy was made"
	)
	// conflict makes a Syncthing copy of name as it is (copied), then rewrites name.
	var copyPath string
	conflict := func() string {
		t.Helper()
		if err := os.WriteFile(filepath.Join(mp, name), []byte(copied), 0o640); err != nil {
			t.Fatal(err)
		}
		cipher := cipherOf(t, cipherdir, len(copied))
		b, err := os.ReadFile(cipher)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cipher+marker, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mp, name), []byte(later), 0o640); err != nil {
			t.Fatal(err)
		}
		return cipher + marker
	}
	list := func() []vault.ConflictEntry {
		t.Helper()
		got, err := c.Conflicts(ctx(t), mp)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Path != shown || got[0].Of != name {
			t.Fatalf("conflicts: %+v; want one, %q of %q", got, shown, name)
		}
		return got
	}
	read := func(n string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(mp, n))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	copyPath = conflict()
	if _, err := c.SettleConflict(ctx(t), mp, list()[0].Path, vault.KeepCopy); err != nil {
		t.Fatal(err)
	}
	if got := read(name); got != copied {
		t.Fatalf("after --keep copy %q holds %q", name, got)
	}
	// (Checked in the cipherdir: a lookup of the name through the mount now would be cached,
	// and hide the next copy, made behind the mount's back, for the cache's timeout.)
	if _, err := os.Lstat(copyPath); !os.IsNotExist(err) {
		t.Fatalf("after --keep copy the copy is still there: %v", err)
	}

	copyPath = conflict()
	if _, err := c.SettleConflict(ctx(t), mp, list()[0].Path, vault.KeepBoth); err != nil {
		t.Fatal(err)
	}
	if got, want := read(name), later; got != want {
		t.Fatalf("after --keep both %q holds %q", name, got)
	}
	if got := read(shown); got != copied {
		t.Fatalf("after --keep both %q holds %q", shown, got)
	}
	if got, err := c.Conflicts(ctx(t), mp); err != nil || len(got) != 0 {
		t.Fatalf("after settling: conflicts %+v, %v", got, err)
	}
}

// TestFolderMadeTwiceThroughDaemon: a folder made on two computers, with an entry whose name,
// made under the IV the sync tool set aside, also decrypts under the folder's own IV (names
// carry no authentication: about one in 256 does, to bytes no one named a file). The daemon
// lists it as made in the second folder and settles the folder through the mount by that
// name: the mount must show it under the same name, and nothing is lost.
func TestFolderMadeTwiceThroughDaemon(t *testing.T) {
	base := daemonEnv(t)
	cipherdir, mp, pw := newVault(t, base, crypto.AESGCM)
	v, err := gocryptfs.Unlock(context.Background(), cipherdir, pw)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	c := connect(t)
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw}); err != nil {
		t.Fatal(err)
	}
	defer c.Unmount(context.Background(), mp, true)
	shared := filepath.Join(mp, "shared")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	rootIV, err := os.ReadFile(filepath.Join(cipherdir, crypto.DirIVName))
	if err != nil {
		t.Fatal(err)
	}
	sharedC, _, _, err := v.Names.StoredName("shared", rootIV)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cipherdir, sharedC)
	made, err := os.ReadFile(filepath.Join(dir, crypto.DirIVName)) // this computer's IV
	if err != nil {
		t.Fatal(err)
	}
	kept := make([]byte, crypto.DirIVLen) // the other computer's, which the sync tool keeps
	kept[0] = 1
	var lucky string
	for i := 0; i < 100000 && lucky == ""; i++ {
		p := fmt.Sprintf("f%d.txt", i)
		enc, err := v.Names.EncryptName(p, made)
		if err != nil {
			t.Fatal(err)
		}
		if g, err := v.Names.DecryptName(enc, kept); err == nil && !utf8.ValidString(g) {
			lucky = p
		}
	}
	if lucky == "" {
		t.Fatal("no name decrypts under the other IV")
	}
	files := map[string]string{lucky: "made here, decrypts there by chance", "a.txt": "made here"}
	for n, data := range files {
		if err := os.WriteFile(filepath.Join(shared, n), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Unmount(ctx(t), mp, false); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, crypto.DirIVName), filepath.Join(dir, "gocryptfs.sync-conflict-20261130-101010-ABCDEF7.diriv")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, crypto.DirIVName), kept, 0o440); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shared, "b.txt"), []byte("made there"), 0o644); err != nil {
		t.Fatal(err)
	}
	files["b.txt"] = "made there"

	list, err := c.Conflicts(ctx(t), mp)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 || list[0].Kind != vault.ConflictFolderMadeTwice || list[0].Entries != 2 {
		t.Fatalf("conflicts: %+v; want the folder made twice, with two entries made in it", list)
	}
	done, err := c.SettleConflict(ctx(t), mp, list[0].Path, vault.KeepBoth)
	if err != nil {
		t.Fatalf("settling the folder: %v", err)
	}
	if len(done.Moved) != 2 || len(done.DirIVCopies) != 1 {
		t.Errorf("settled: %+v; want two entries moved and one copy of gocryptfs.diriv removed", done)
	}
	for n, data := range files {
		if b, err := os.ReadFile(filepath.Join(shared, n)); err != nil || string(b) != data {
			t.Errorf("after settling, %s: %q, %v; want %q", n, b, err, data)
		}
	}
	if got, err := c.Conflicts(ctx(t), mp); err != nil || len(got) != 0 {
		t.Errorf("after settling: conflicts %+v, %v", got, err)
	}
}
