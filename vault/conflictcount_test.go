package vault

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/vaulttest"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

// syncedVault makes a vault holding the plaintext files given (path → content) and returns it
// unlocked with the cipher path of each file.
func syncedVault(t *testing.T, opts CreateOptions, files map[string]string) (*gocryptfs.Vault, map[string]string) {
	t.Helper()
	src := t.TempDir()
	for p, data := range files {
		if err := os.MkdirAll(filepath.Join(src, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, p), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(t.TempDir(), "v.crypt")
	opts.ScryptLogN = 10
	if _, err := Create(context.Background(), dir, []byte("pw"), opts); err != nil {
		t.Fatal(err)
	}
	v, err := gocryptfs.Unlock(context.Background(), dir, []byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	if err := vaulttest.Import(context.Background(), v, src); err != nil {
		t.Fatal(err)
	}
	cipher := map[string]string{}
	if err := WalkVolume(context.Background(), v.Volume(), func(n Node) error { cipher[n.Path] = n.CipherPath; return nil }, nil); err != nil {
		t.Fatal(err)
	}
	return v, cipher
}

func copyCipherFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestCountConflictsKeyless(t *testing.T) {
	long := strings.Repeat("long", 50) + ".txt"
	v, cipher := syncedVault(t, CreateOptions{}, map[string]string{
		"report.odt": "original", "notes": "notes", long: "long", "d/x.txt": "x", "d/y.txt": "y",
	})
	root := v.Dir
	at := func(p string) string { return filepath.Join(root, filepath.FromSlash(cipher[p])) }

	tally, err := CountConflicts(root)
	if err != nil || tally.Count != 0 || !tally.Complete {
		t.Fatalf("a vault without copies: %+v, %v", tally, err)
	}

	syncthing := at("report.odt") + ".sync-conflict-20261130-101010-ABCDEF7"
	copyCipherFile(t, at("report.odt"), syncthing)
	copyCipherFile(t, at("d/x.txt"), at("d/x.txt")+" (Ann's conflicted copy 2026-11-30)")
	hash := strings.TrimPrefix(filepath.Base(cipher[long]), crypto.LongNamePrefix)
	copyCipherFile(t, at(long), filepath.Join(root, crypto.LongNamePrefix+"sync-conflict-20261201-090000-ZZZZZZZ."+hash))
	// Not counted: OneDrive's form (not told from base64url without the key), copies of the
	// format's own files (a diriv copy counts as a split directory), a tool's copy of a .name
	// file, foreign files.
	copyCipherFile(t, at("d/y.txt"), at("d/y.txt")+"-LAPTOP")
	copyCipherFile(t, filepath.Join(root, crypto.DirIVName), filepath.Join(root, "gocryptfs.sync-conflict-20261130-101010-ABCDEF7.diriv"))
	copyCipherFile(t, at(long)+crypto.LongNameSuffix, at(long)+".sync-conflict-20261201-090000-ZZZZZZZ"+crypto.LongNameSuffix)
	copyCipherFile(t, filepath.Join(root, crypto.ConfName), filepath.Join(root, "gocryptfs (conflicted copy 2026-11-30).conf"))
	for _, foreign := range []string{"desktop.ini", ".DS_Store", "photo (1).jpg", "notes.sync-conflict-20261130-101010-ABCDEF7.txt"} {
		os.WriteFile(filepath.Join(root, foreign), nil, 0o600)
	}

	tally, err = CountConflicts(root)
	if err != nil {
		t.Fatal(err)
	}
	if tally.Count != 3 || !tally.Complete {
		t.Fatalf("CountConflicts = %+v, want 3 copies, complete", tally)
	}
	if tally.SplitDirs != 1 || len(tally.SplitDirInodes) != 1 {
		t.Fatalf("the root's diriv copy: %+v", tally)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(root, &st); err != nil || !tally.SplitDirInodes[st.Ino] {
		t.Fatalf("split directories %v lack the root's inode (%v)", tally.SplitDirInodes, err)
	}
	if err := syscall.Lstat(syncthing, &st); err != nil {
		t.Fatal(err)
	}
	if !tally.Inodes[st.Ino] || len(tally.Inodes) != 3 {
		t.Fatalf("inodes %v lack the Syncthing copy's %d", tally.Inodes, st.Ino)
	}
	// The keyless count agrees with the decrypting listing but for OneDrive's form.
	list, err := volOf(v).Conflicts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	oneDrive, folders := 0, 0
	for _, c := range list {
		switch {
		case c.Kind == ConflictFolderMadeTwice:
			folders++
		case c.Tool == "OneDrive":
			oneDrive++
		}
	}
	if len(list)-oneDrive-folders != tally.Count || oneDrive != 1 || folders != tally.SplitDirs {
		t.Fatalf("Conflicts lists %d (%d OneDrive, %d folders made twice), the keyless count %+v: %+v", len(list), oneDrive, folders, tally, list)
	}
	if list[0].Kind != ConflictFolderMadeTwice || list[0].Path != "" {
		t.Fatalf("the root made twice is not listed first: %+v", list[0])
	}

	// Settled copies are no longer counted.
	if err := resolveConflict(context.Background(), v, list[1].Path, KeepBoth); err != nil {
		t.Fatal(err)
	}
	if tally, _ := CountConflicts(root); tally.Count != 2 {
		t.Fatalf("after settling one: %+v", tally)
	}
}

func TestCountConflictsStopsAtLimit(t *testing.T) {
	v, cipher := syncedVault(t, CreateOptions{}, map[string]string{"a": "a"})
	big := filepath.Join(v.Dir, "big")
	os.Mkdir(big, 0o700)
	for i := range gocryptfs.ConflictScanLimit {
		f, err := os.Create(filepath.Join(big, "f"+strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	// The copy sits where a breadth-first scan reaches it before the limit.
	copyCipherFile(t, filepath.Join(v.Dir, cipher["a"]), filepath.Join(v.Dir, cipher["a"]+" (conflicted copy 2026-11-30)"))
	tally, err := CountConflicts(v.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if tally.Complete || tally.Count != 1 {
		t.Fatalf("over the limit: %+v, want an incomplete count of 1", tally)
	}
}

func TestCountConflictsPlaintextNames(t *testing.T) {
	v, _ := syncedVault(t, CreateOptions{PlaintextNames: true}, map[string]string{"report.odt": "x"})
	// With plaintext names a tool's copy is an ordinary file, even if the rest looks encrypted.
	copyCipherFile(t, filepath.Join(v.Dir, "report.odt"), filepath.Join(v.Dir, "AAAAAAAAAAAAAAAAAAAAAA.sync-conflict-20261130-101010-ABCDEF7"))
	if tally, err := CountConflicts(v.Dir); err != nil || tally.Count != 0 || !tally.Complete {
		t.Fatalf("plaintext names: %+v, %v", tally, err)
	}
	if _, err := CountConflicts(t.TempDir()); err == nil {
		t.Fatal("a folder without a config was counted")
	}
}

// BenchmarkCountConflicts measures a scan that reaches the entry limit, the worst case of
// the terminal app's recount on every registry refresh.
func BenchmarkCountConflicts(b *testing.B) {
	dir := b.TempDir()
	if _, err := Create(context.Background(), dir, []byte("pw"), CreateOptions{ScryptLogN: 10}); err != nil {
		b.Fatal(err)
	}
	for d := range 10 {
		sub := filepath.Join(dir, "AAAAAAAAAAAAAAAAAAAAA"+strconv.Itoa(d))
		os.Mkdir(sub, 0o700)
		for i := range gocryptfs.ConflictScanLimit / 10 {
			f, err := os.Create(filepath.Join(sub, "BBBBBBBBBBBBBBBBBBBBB"+strconv.Itoa(i)))
			if err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	}
	b.ResetTimer()
	for range b.N {
		if _, err := CountConflicts(dir); err != nil {
			b.Fatal(err)
		}
	}
}
