package vault

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

// dirIVCopyName is Syncthing's conflict copy of a gocryptfs.diriv.
const dirIVCopyName = crypto.DirIVName + ".sync-conflict-20260101-120000-ABCDEF7"

// longPlain is a name whose encrypted form needs a gocryptfs.longname entry.
var longPlain = strings.Repeat("long", 50) + ".txt"

// folderMadeTwice builds what a sync tool leaves when folder docs was made on two computers:
// machine 1's docs (a.txt, keep.txt) keeps its gocryptfs.diriv; machine 2's docs was made
// under another IV, which the tool kept as a conflict copy of the diriv, and the entries
// machine 2 made in it (its own a.txt, b.txt, a long name and a folder sub) are encrypted under
// that IV. Machine 2's folder is built as a second folder of the same vault, then its
// entries are moved into docs the way the sync tool delivers them.
func folderMadeTwice(t *testing.T) (*gocryptfs.Vault, string) {
	t.Helper()
	v, cipher := syncedVault(t, CreateOptions{}, map[string]string{
		"docs/a.txt":      "a from machine 1",
		"docs/keep.txt":   "keep",
		"m2/a.txt":        "a from machine 2",
		"m2/b.txt":        "b from machine 2",
		"m2/" + longPlain: "long from machine 2",
		"m2/sub/c.txt":    "c from machine 2",
	})
	docs := filepath.Join(v.Dir, filepath.FromSlash(cipher["docs"]))
	m2 := filepath.Join(v.Dir, filepath.FromSlash(cipher["m2"]))
	ents, err := os.ReadDir(m2)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		to := e.Name()
		if to == crypto.DirIVName {
			to = dirIVCopyName
		}
		if err := os.Rename(filepath.Join(m2, e.Name()), filepath.Join(docs, to)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(m2); err != nil {
		t.Fatal(err)
	}
	return v, docs
}

// vaultFiles reads every regular file of the vault through an export (path -> content) and
// fails the test if the export finds damage.
func vaultFiles(t *testing.T, v *gocryptfs.Vault) map[string]string {
	t.Helper()
	files, err := exportFiles(t, v)
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	return files
}

// exportFiles reads every regular file of the vault through an export; blocks that do not
// authenticate read as zeros.
func exportFiles(t *testing.T, v *gocryptfs.Vault) (map[string]string, error) {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "out")
	// Forced: a damaged file must not hide the others from the comparisons.
	err := ExportVolume(context.Background(), v.Volume(), dst, ExportOptions{Force: true})
	if err != nil && !errors.Is(err, ErrCorrupt) {
		t.Fatalf("export: %v", err)
	}
	out := map[string]string{}
	filepath.WalkDir(dst, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dst, p)
			out[filepath.ToSlash(rel)] = string(b)
		}
		return nil
	})
	return out, err
}

// damage is what fsck finds beyond notes.
func damage(t *testing.T, v *gocryptfs.Vault) []Problem {
	t.Helper()
	problems, err := FsckVolume(context.Background(), v.Volume(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []Problem
	for _, p := range problems {
		if p.Damage() {
			out = append(out, p)
		}
	}
	return out
}

// TestKeepCopyInFolderMadeTwiceKeepsTheFolder: settling an entry made under a diriv copy's IV
// with --keep copy used to rename it onto gocryptfs.diriv (the copy's base name), and every
// name in the folder was lost. Whatever is settled, the folder's diriv stays and every name
// still decrypts.
func TestKeepCopyInFolderMadeTwiceKeepsTheFolder(t *testing.T) {
	for _, keep := range []Keep{KeepCopy, KeepBoth, KeepOriginal} {
		v, docs := folderMadeTwice(t)
		iv, err := os.ReadFile(filepath.Join(docs, crypto.DirIVName))
		if err != nil {
			t.Fatal(err)
		}
		list, err := volOf(v).Conflicts(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var entry string
		for _, c := range list {
			if c.Of == "docs/b.txt" {
				entry = c.Path
			}
		}
		if entry == "" {
			t.Fatalf("machine 2's b.txt is not listed: %+v", list)
		}
		if err := resolveConflict(context.Background(), v, entry, keep); err != nil {
			t.Fatalf("keep %d: %v", keep, err)
		}
		if now, err := os.ReadFile(filepath.Join(docs, crypto.DirIVName)); err != nil || !bytes.Equal(now, iv) {
			t.Fatalf("keep %d: the folder's gocryptfs.diriv is now %x, %v; was %x", keep, now, err, iv)
		}
		if d := damage(t, v); len(d) > 0 {
			t.Fatalf("keep %d: fsck after settling: %v", keep, d)
		}
		files := vaultFiles(t, v)
		if files["docs/a.txt"] != "a from machine 1" || files["docs/keep.txt"] != "keep" {
			t.Fatalf("keep %d: machine 1's files: %v", keep, files)
		}
		if keep == KeepCopy && files["docs/b.txt"] != "b from machine 2" {
			t.Fatalf("keep copy: b.txt is not in place: %v", files)
		}
	}
}

// TestSettlingRefusesACopyThatDoesNotAuthenticate: a conflict copy that does not decrypt
// (random bytes, one flipped byte in its last block, a header of another file, a size no
// plaintext has) never replaces the original, nor gets a clean name with --keep both; the
// error names the copy and wraps ErrCorrupt (exit code 4), and nothing changes. --keep
// original still deletes it.
func TestSettlingRefusesACopyThatDoesNotAuthenticate(t *testing.T) {
	original := strings.Repeat("the original ", 1000) // three blocks
	const marker = ".sync-conflict-20261130-101010-ABCDEF7"
	random := make([]byte, 9000)
	rand.Read(random)
	for name, damage := range map[string]func(good []byte) []byte{
		"random bytes": func([]byte) []byte { return random },
		"last block flipped": func(good []byte) []byte {
			good[len(good)-20] ^= 1
			return good
		},
		"first block flipped": func(good []byte) []byte {
			good[crypto.HeaderLen+40] ^= 1
			return good
		},
		"other file ID": func(good []byte) []byte {
			good[5] ^= 1
			return good
		},
		"cut mid-block": func(good []byte) []byte { return good[:crypto.HeaderLen+10] },
	} {
		t.Run(name, func(t *testing.T) {
			v, cipher := syncedVault(t, CreateOptions{}, map[string]string{"report.odt": original, "v2": strings.Repeat("the copy ", 1200)})
			good, err := os.ReadFile(filepath.Join(v.Dir, cipher["v2"]))
			if err != nil {
				t.Fatal(err)
			}
			copyPath := filepath.Join(v.Dir, cipher["report.odt"]+marker)
			if err := os.WriteFile(copyPath, damage(good), 0o600); err != nil {
				t.Fatal(err)
			}
			os.Remove(filepath.Join(v.Dir, cipher["v2"]))
			const shown = "report (conflict 2026-11-30 Syncthing).odt"
			for _, keep := range []Keep{KeepCopy, KeepBoth} {
				err := resolveConflict(context.Background(), v, shown, keep)
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), shown) {
					t.Fatalf("keep %d of a copy that does not authenticate: %v; want an error naming it that wraps ErrCorrupt", keep, err)
				}
				files, _ := exportFiles(t, v)
				if files["report.odt"] != original {
					t.Fatalf("keep %d: the original is now %.40q", keep, files["report.odt"])
				}
				if _, err := os.Lstat(copyPath); err != nil {
					t.Fatalf("keep %d: the copy was moved: %v", keep, err)
				}
			}
			if err := resolveConflict(context.Background(), v, shown, KeepOriginal); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Lstat(copyPath); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("keep original left the copy: %v", err)
			}
			if files := vaultFiles(t, v); len(files) != 1 || files["report.odt"] != original {
				t.Fatalf("after keep original: %v", files)
			}
		})
	}
}

// TestFolderMadeTwiceIsListedAndMerged: the folder made twice is one conflict of its own kind
// that says how many entries were made under the diriv copy's IV; those entries are listed as
// made in the second folder, not as copies of files. --keep copy and --keep original are
// refused for the folder; --keep both moves each entry under the folder's IV (machine 2's
// a.txt, whose name the folder has, gets a conflict marker) and then removes the diriv copy,
// leaving a vault fsck finds clean, without even a note.
func TestFolderMadeTwiceIsListedAndMerged(t *testing.T) {
	ctx := context.Background()
	v, docs := folderMadeTwice(t)
	list, err := volOf(v).Conflicts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]ConflictKind{}
	for _, c := range list {
		kinds[c.Path+" <- "+c.Of] = c.Kind
		if c.Kind == ConflictFolderMadeTwice && (c.Entries != 4 || c.Tool != "Syncthing" || c.Date != "2026-01-01" || c.CipherPath != filepath.Base(docs)+"/"+dirIVCopyName) {
			t.Errorf("the folder: %+v", c)
		}
	}
	long := strings.TrimSuffix(longPlain, ".txt")
	want := map[string]ConflictKind{
		"docs <- docs": ConflictFolderMadeTwice,
		"docs/a (conflict 2026-01-01 Syncthing).txt <- docs/a.txt":                   ConflictMadeInSecondFolder,
		"docs/b (conflict 2026-01-01 Syncthing).txt <- docs/b.txt":                   ConflictMadeInSecondFolder,
		"docs/" + long + " (conflict 2026-01-01 Syncthing).txt <- docs/" + longPlain: ConflictMadeInSecondFolder,
		"docs/sub (conflict 2026-01-01 Syncthing) <- docs/sub":                       ConflictMadeInSecondFolder,
	}
	if len(kinds) != len(want) {
		t.Fatalf("listed %v, want %v", kinds, want)
	}
	for k, kind := range want {
		if kinds[k] != kind {
			t.Fatalf("listed %v, want %v", kinds, want)
		}
	}

	for _, keep := range []Keep{KeepCopy, KeepOriginal} {
		if err := resolveConflict(ctx, v, "docs", keep); !errors.Is(err, ErrFolderKeepsBoth) {
			t.Fatalf("keep %d of the folder: %v", keep, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(docs, dirIVCopyName)); err != nil {
		t.Fatalf("a refused settle removed the diriv copy: %v", err)
	}

	done, err := volOf(v).Settle(ctx, "/docs/", KeepBoth)
	if err != nil {
		t.Fatal(err)
	}
	if len(done.Moved) != 4 || len(done.DirIVCopies) != 1 {
		t.Fatalf("settled: %+v", done)
	}
	for _, m := range done.Moved {
		if m.Renamed != (m.To == "docs/a (conflict 2026-01-01 Syncthing).txt") {
			t.Errorf("moved: %+v", m)
		}
	}
	if problems, err := FsckVolume(ctx, v.Volume(), nil); err != nil || len(problems) > 0 {
		t.Fatalf("fsck after the merge: %v, %v", problems, err)
	}
	files := vaultFiles(t, v)
	wantFiles := map[string]string{
		"docs/a.txt": "a from machine 1", "docs/keep.txt": "keep",
		"docs/a (conflict 2026-01-01 Syncthing).txt": "a from machine 2",
		"docs/b.txt": "b from machine 2", "docs/" + longPlain: "long from machine 2",
		"docs/sub/c.txt": "c from machine 2",
	}
	if len(files) != len(wantFiles) {
		t.Fatalf("files after the merge: %v", files)
	}
	for p, data := range wantFiles {
		if files[p] != data {
			t.Fatalf("files after the merge: %v", files)
		}
	}
	// The long name's .name file under the old IV went with it.
	ents, _ := os.ReadDir(docs)
	if len(ents) != 1+6+1 { // diriv, 6 entries, 1 .name file
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("left in docs: %v", names)
	}
	if list, err := volOf(v).Conflicts(ctx); err != nil || len(list) != 0 {
		t.Fatalf("conflicts after the merge: %+v, %v", list, err)
	}
}

// TestFolderMergeFinishesAfterACrash: each step of the merge is one rename, so a crash leaves
// a folder still made twice, with some entries moved already, or all moved and the diriv copy
// still there. Settling again from either state finishes the merge.
func TestFolderMergeFinishesAfterACrash(t *testing.T) {
	ctx := context.Background()
	v, docs := folderMadeTwice(t)
	iv1, _ := os.ReadFile(filepath.Join(docs, crypto.DirIVName))
	iv2, _ := os.ReadFile(filepath.Join(docs, dirIVCopyName))
	// Crashed after moving b.txt: its name is encrypted under the folder's IV now.
	from, _ := v.Names.EncryptName("b.txt", iv2)
	to, _ := v.Names.EncryptName("b.txt", iv1)
	if err := os.Rename(filepath.Join(docs, from), filepath.Join(docs, to)); err != nil {
		t.Fatal(err)
	}
	list, err := volOf(v).Conflicts(ctx)
	if err != nil || len(list) == 0 || list[0].Kind != ConflictFolderMadeTwice || list[0].Entries != 3 {
		t.Fatalf("after a crash mid-merge: %+v, %v", list, err)
	}
	done, err := volOf(v).Settle(ctx, "docs", KeepBoth)
	if err != nil || len(done.Moved) != 3 {
		t.Fatalf("settling again: %+v, %v", done, err)
	}
	if files := vaultFiles(t, v); len(files) != 6 || files["docs/b.txt"] != "b from machine 2" {
		t.Fatalf("files: %v", files)
	}
	// Crashed before removing the diriv copy: nothing is under it; settling removes it.
	if err := os.WriteFile(filepath.Join(docs, dirIVCopyName), iv2, 0o400); err != nil {
		t.Fatal(err)
	}
	if list, err := volOf(v).Conflicts(ctx); err != nil || len(list) != 1 || list[0].Entries != 0 {
		t.Fatalf("a diriv copy with nothing under it: %+v, %v", list, err)
	}
	if done, err := volOf(v).Settle(ctx, "docs", KeepBoth); err != nil || len(done.Moved) != 0 || len(done.DirIVCopies) != 1 {
		t.Fatalf("settling an empty second folder: %+v, %v", done, err)
	}
	if problems, err := FsckVolume(ctx, v.Volume(), nil); err != nil || len(problems) > 0 {
		t.Fatalf("fsck: %v, %v", problems, err)
	}
}

// TestFolderMergeRefusesAnEntryThatDoesNotAuthenticate: the merge authenticates every entry
// before moving any: one that does not decrypt keeps the whole folder as it is, and the error
// names it; deleting it (keep original) lets the merge go on.
func TestFolderMergeRefusesAnEntryThatDoesNotAuthenticate(t *testing.T) {
	ctx := context.Background()
	v, docs := folderMadeTwice(t)
	iv2, _ := os.ReadFile(filepath.Join(docs, dirIVCopyName))
	b, _ := v.Names.EncryptName("b.txt", iv2)
	garbage := make([]byte, 100)
	rand.Read(garbage)
	if err := os.WriteFile(filepath.Join(docs, b), garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadDir(docs)
	_, err := volOf(v).Settle(ctx, "docs", KeepBoth)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "docs/b (conflict 2026-01-01 Syncthing).txt") {
		t.Fatalf("merging with a broken entry: %v", err)
	}
	if after, _ := os.ReadDir(docs); len(after) != len(before) {
		t.Fatalf("a refused merge changed the folder: %d entries, was %d", len(after), len(before))
	}
	if err := resolveConflict(ctx, v, "docs/b (conflict 2026-01-01 Syncthing).txt", KeepOriginal); err != nil {
		t.Fatal(err)
	}
	if done, err := volOf(v).Settle(ctx, "docs", KeepBoth); err != nil || len(done.Moved) != 3 {
		t.Fatalf("merging after deleting it: %+v, %v", done, err)
	}
	if d := damage(t, v); len(d) > 0 {
		t.Fatal(d)
	}
}

// TestNameThatDecryptsUnderBothIVs: under a wrong IV a name still decrypts about once in 300
// tries (its padding happens to check), to bytes that are not UTF-8. Such a name goes with the
// IV that gives a readable name, in both directions, so the merge neither leaves machine 2's
// entry with a garbled name nor moves one of machine 1's.
func TestNameThatDecryptsUnderBothIVs(t *testing.T) {
	ctx := context.Background()
	v, docs := folderMadeTwice(t)
	iv1, _ := os.ReadFile(filepath.Join(docs, crypto.DirIVName))
	iv2, _ := os.ReadFile(filepath.Join(docs, dirIVCopyName))
	// lucky finds a plaintext name whose encryption under iv also decrypts under other.
	lucky := func(prefix string, iv, other []byte) string {
		for i := 0; i < 100000; i++ {
			plain := fmt.Sprintf("%s%d", prefix, i)
			enc, _ := v.Names.EncryptName(plain, iv)
			if _, err := v.Names.DecryptName(enc, other); err == nil {
				if err := os.WriteFile(filepath.Join(docs, enc), nil, 0o600); err != nil {
					t.Fatal(err)
				}
				return plain
			}
		}
		t.Fatal("no name decrypts under both IVs")
		return ""
	}
	m1 := lucky("one", iv1, iv2)
	m2 := lucky("two", iv2, iv1)
	done, err := volOf(v).Settle(ctx, "docs", KeepBoth)
	if err != nil || len(done.Moved) != 5 {
		t.Fatalf("merge: %+v, %v", done, err)
	}
	files := vaultFiles(t, v)
	for _, p := range []string{m1, m2} {
		if _, ok := files["docs/"+p]; !ok {
			t.Fatalf("docs/%s is missing after the merge: %v", p, files)
		}
	}
}
