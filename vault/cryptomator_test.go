package vault

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/vault/cryptomator"
	"github.com/vaultui/vaultui/vault/cryptomator/cmfixture"
	"github.com/vaultui/vaultui/vault/format"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

// unlockCryptomatorFixture extracts the shared Cryptomator fixture and opens it as any vault is opened.
func unlockCryptomatorFixture(t *testing.T) (string, Volume) {
	t.Helper()
	return unlockCryptomator(t, cmfixture.SIVGCMA)
}

// unlockCryptomator extracts the Cryptomator fixture fx and opens it as any vault is opened.
func unlockCryptomator(t *testing.T, fx cmfixture.Fixture) (string, Volume) {
	t.Helper()
	dir := fx.Folder(t)
	pw, err := fx.Password()
	if err != nil {
		t.Fatal(err)
	}
	vol, err := UnlockVolume(context.Background(), dir, pw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(vol.Close)
	return dir, vol
}

// The walker that exports gocryptfs vaults exports each Cryptomator fixture, every file
// exact, and its fsck finds nothing.
func TestCryptomatorExportAndFsck(t *testing.T) {
	for _, fx := range []cmfixture.Fixture{cmfixture.SIVGCMA, cmfixture.RcloneB} {
		t.Run(string(fx), func(t *testing.T) {
			_, vol := unlockCryptomator(t, fx)
			if got := vol.FormatName(); got != "Cryptomator vault format 8, SIV_GCM" {
				t.Errorf("format %q", got)
			}
			out := filepath.Join(t.TempDir(), "out")
			if err := ExportVolume(context.Background(), vol, out, ExportOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := fx.CheckTree(out); err != nil {
				t.Fatal(err)
			}
			problems, err := FsckVolume(context.Background(), vol, nil)
			if err != nil || len(problems) != 0 {
				t.Fatalf("fsck of the fixture: %v, %v", problems, err)
			}
		})
	}
}

// One flipped byte in chunk 5 of a file: fsck names the file and that chunk, and nothing
// else; export stops at it, and export --force writes the chunk as zeros and the rest exact.
func TestCryptomatorFsckNamesChunk(t *testing.T) {
	dir, vol := unlockCryptomatorFixture(t)
	const size, chunk = 1048579, 5
	if _, err := cmfixture.FlipInChunk(dir, size, chunk); err != nil {
		t.Fatal(err)
	}
	problems, err := FsckVolume(context.Background(), vol, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 1 {
		t.Fatalf("problems %v, want one", problems)
	}
	p := problems[0]
	if p.Path != "sizes/1048579.bin" || p.Kind != format.KindContent || p.FirstBlock != chunk || p.LastBlock != chunk {
		t.Fatalf("problem %+v, want sizes/1048579.bin's chunk %d", p, chunk)
	}
	if err := ExportVolume(context.Background(), vol, filepath.Join(t.TempDir(), "out"), ExportOptions{}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("export of the damaged vault: %v, want ErrCorrupt", err)
	}
	out := filepath.Join(t.TempDir(), "forced")
	err = ExportVolume(context.Background(), vol, out, ExportOptions{Force: true})
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("export --force: %v, want ErrCorrupt counting the damage", err)
	}
	b, err := os.ReadFile(filepath.Join(out, "sizes", "1048579.bin"))
	if err != nil || len(b) != size {
		t.Fatalf("forced export: %d bytes, %v", len(b), err)
	}
	const bs = 32 << 10
	for i, c := range b[chunk*bs : (chunk+1)*bs] {
		if c != 0 {
			t.Fatalf("byte %d of the damaged chunk is %#x, want zeros", chunk*bs+i, c)
		}
	}
}

// A wrong password is the same error for both formats.
func TestCryptomatorWrongPassword(t *testing.T) {
	dir := cmfixture.Folder(t)
	if _, err := UnlockVolume(context.Background(), dir, []byte("not the password")); !errors.Is(err, ErrWrongPassword) {
		t.Fatalf("wrong password: %v", err)
	}
}

// Damage of the cipher tree is reported with the walker's kinds, naming where it is: a name
// that does not decrypt, a missing dirid.c9r, a dir.c9r naming no folder; a file put there by
// hand is a note, not damage.
func TestCryptomatorTreeProblems(t *testing.T) {
	dir, vol := unlockCryptomatorFixture(t)
	root, err := vol.Root()
	if err != nil {
		t.Fatal(err)
	}
	rootFolder := filepath.Join(dir, filepath.FromSlash(root.CipherPath))
	nodes, err := vol.ReadDir(root, false, func(p Problem) { t.Errorf("clean root: %v", p) })
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]string{} // plaintext name -> stored name
	for _, n := range nodes {
		stored[n.Path] = filepath.Base(n.CipherPath)
	}
	// "one" gets the stored name of an entry of "sub": it no longer decrypts in the root.
	var sub Node
	for _, n := range nodes {
		if n.Path == "sub" {
			sub = n
		}
	}
	subDir, err := vol.OpenDir(root, sub)
	if err != nil {
		t.Fatal(err)
	}
	subNodes, err := vol.ReadDir(subDir, false, func(Problem) {})
	if err != nil || len(subNodes) == 0 {
		t.Fatalf("%s: %v, %v", sub.Path, subNodes, err)
	}
	moved := filepath.Base(subNodes[0].CipherPath)
	if err := os.Rename(filepath.Join(rootFolder, stored["one"]), filepath.Join(rootFolder, moved)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rootFolder, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	subFolder := filepath.Join(dir, filepath.FromSlash(subDir.CipherPath))
	if err := os.Remove(filepath.Join(subFolder, "dirid.c9r")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rootFolder, stored["empty-dir"], "dir.c9r"), []byte("00000000-0000-4000-8000-000000000000"), 0o644); err != nil {
		t.Fatal(err)
	}
	problems, err := FsckVolume(context.Background(), vol, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Problem{
		format.KindDirID + " dir.c9r": {Path: "empty-dir", CipherPath: root.CipherPath + "/" + stored["empty-dir"]},
		format.KindName:               {Path: "", CipherPath: root.CipherPath + "/" + moved},
		format.KindForeign:            {Path: "", CipherPath: root.CipherPath + "/notes.txt"},
		format.KindDirID:              {Path: sub.Path, CipherPath: subDir.CipherPath + "/dirid.c9r"},
	}
	for _, p := range problems {
		key := p.Kind
		if p.Path == "empty-dir" {
			key += " dir.c9r"
		}
		w, ok := want[key]
		if !ok || p.Path != w.Path || p.CipherPath != w.CipherPath {
			t.Errorf("unexpected problem %v", p)
			continue
		}
		if p.Kind == format.KindDirID && p.Path == "sub" && !strings.Contains(p.Detail, "missing") {
			t.Errorf("a missing dirid.c9r: %v", p)
		}
		if p.Kind == format.KindForeign && p.Damage() {
			t.Errorf("a foreign file is damage: %v", p)
		}
		delete(want, key)
	}
	if len(want) > 0 {
		t.Errorf("problems not reported: %v (got %v)", want, problems)
	}
}

// info describes a Cryptomator vault from its folder, without the password.
func TestCryptomatorInfo(t *testing.T) {
	dir := cmfixture.Folder(t)
	i, err := ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if i.Format != "Cryptomator vault format 8, SIV_GCM" || i.Version != 8 || i.LongNameMax != 220 || i.ScryptLogN != 15 || i.ScryptR != 8 {
		t.Fatalf("%+v", i)
	}
	if _, err := gocryptfs.LoadConfig(dir); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a Cryptomator vault opened as a gocryptfs one: %v", err)
	}
}

// A sync tool's copy of a Cryptomator entry (its marker in the stored name, before .c9r) is
// a conflict copy, as in gocryptfs vaults: fsck notes it, export writes it beside the
// original under a readable name.
func TestCryptomatorConflictCopy(t *testing.T) {
	dir, vol := unlockCryptomatorFixture(t)
	root, err := vol.Root()
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := vol.ReadDir(root, false, func(p Problem) { t.Errorf("clean root: %v", p) })
	if err != nil {
		t.Fatal(err)
	}
	var one Node
	for _, n := range nodes {
		if n.Path == "one" {
			one = n
		}
	}
	if _, err := cmfixture.CopyAsConflict(filepath.Join(dir, filepath.FromSlash(one.CipherPath)), " (Ann's conflicted copy 2026-11-30)"); err != nil {
		t.Fatal(err)
	}
	problems, err := FsckVolume(context.Background(), vol, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 1 || problems[0].Kind != format.KindConflict || problems[0].Damage() || !strings.Contains(problems[0].Detail, "Dropbox's conflict copy of /one") {
		t.Fatalf("problems %v, want the conflict copy noted", problems)
	}
	shown := problems[0].Path
	out := filepath.Join(t.TempDir(), "out")
	if err := ExportVolume(context.Background(), vol, out, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(out, shown))
	if err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(filepath.Join(out, "one"))
	if err != nil || string(got) != string(orig) {
		t.Fatalf("the copy %q exported as %q, the original as %q (%v)", shown, got, orig, err)
	}
}

// Both cipher combos and the format's other entries go through the walker: a SIV_CTRMAC vault
// (88-byte headers, AES-CTR + HMAC chunks) with a shortened (.c9s) name, a symlink, an empty
// file and a file of three chunks exports exactly, and a flipped byte in its chunk 1 is named.
func TestCryptomatorWalkerCombos(t *testing.T) {
	three := bytes.Repeat([]byte("0123456789abcdef"), 2*32<<10/16+5)
	long := strings.Repeat("l", 200) + ".txt"
	for _, combo := range []cryptomator.CipherCombo{cryptomator.SIVGCM, cryptomator.SIVCTRMAC} {
		t.Run(string(combo), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "v")
			cv, err := cryptomator.Create(context.Background(), dir, []byte("pw"), cryptomator.CreateOptions{Combo: combo, ScryptLogN: 10})
			if err != nil {
				t.Fatal(err)
			}
			root := cv.Root()
			sub, err := cv.Mkdir(root, "sub")
			if err != nil {
				t.Fatal(err)
			}
			for name, data := range map[string][]byte{"three": three, "empty": nil, long: []byte("long")} {
				if _, err := cv.WriteFile(sub, name, bytes.NewReader(data)); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := cv.Symlink(root, "link", "sub/three"); err != nil {
				t.Fatal(err)
			}
			threeEntry, err := cv.Lookup(sub, "three")
			if err != nil {
				t.Fatal(err)
			}
			cv.Close()

			vol, err := UnlockVolume(context.Background(), dir, []byte("pw"))
			if err != nil {
				t.Fatal(err)
			}
			defer vol.Close()
			out := filepath.Join(t.TempDir(), "out")
			if err := ExportVolume(context.Background(), vol, out, ExportOptions{}); err != nil {
				t.Fatal(err)
			}
			for name, want := range map[string][]byte{"sub/three": three, "sub/empty": {}, "sub/" + long: []byte("long")} {
				if got, err := os.ReadFile(filepath.Join(out, name)); err != nil || !bytes.Equal(got, want) {
					t.Errorf("%s: %d bytes, %v; want %d", name, len(got), err, len(want))
				}
			}
			if target, err := os.Readlink(filepath.Join(out, "link")); err != nil || target != "sub/three" {
				t.Errorf("link: %q, %v", target, err)
			}

			g := vol.Geometry()
			file := filepath.Join(dir, filepath.FromSlash(sub.Path), threeEntry.Stored)
			f, err := os.OpenFile(file, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			b := []byte{0}
			off := int64(g.HeaderLen + g.CipherBlockSize() + 50)
			f.ReadAt(b, off)
			b[0] ^= 0x80
			f.WriteAt(b, off)
			f.Close()
			problems, err := FsckVolume(context.Background(), vol, nil)
			if err != nil || len(problems) != 1 || problems[0].Path != "sub/three" || problems[0].FirstBlock != 1 || problems[0].LastBlock != 1 {
				t.Fatalf("fsck: %v, %v; want sub/three's chunk 1", problems, err)
			}
		})
	}
}

// A Cryptomator vault's copies of entries stored in folders (a directory, a symlink, a
// shortened name) are settled offline as its files' are: kept both, each shows under its own
// name, and the vault checks clean; a directory's copy holding entries is not deleted.
func TestCryptomatorSettleFolderCopies(t *testing.T) {
	ctx := context.Background()
	long := strings.Repeat("long name ", 20)
	for _, name := range []string{"dir", "link", long} {
		t.Run(strings.Fields(name)[0], func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "v")
			v, err := cryptomator.Create(ctx, dir, []byte("pw"), cryptomator.CreateOptions{ScryptLogN: 10})
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			root := v.Root()
			switch name {
			case "dir":
				_, err = v.Mkdir(root, name)
			case "link":
				_, err = v.Symlink(root, name, "target")
			default:
				_, err = v.WriteFile(root, name, strings.NewReader("data"))
			}
			if err != nil {
				t.Fatal(err)
			}
			e, err := v.Lookup(root, name)
			if err != nil {
				t.Fatal(err)
			}
			src := filepath.Join(dir, filepath.FromSlash(e.Parent.Path), e.Stored)
			ext := filepath.Ext(src)
			cp := strings.TrimSuffix(src, ext) + " (Ann's conflicted copy 2026-11-30)" + ext
			if err := os.CopyFS(cp, os.DirFS(src)); err != nil {
				t.Fatal(err)
			}
			if name == "dir" {
				// The copy names a directory of its own, holding a file, as a directory made
				// on another computer does.
				sub, err := v.Mkdir(root, "other")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := v.WriteFile(sub, "f", strings.NewReader("x")); err != nil {
					t.Fatal(err)
				}
				other, _ := v.Lookup(root, "other")
				otherPath := filepath.Join(dir, filepath.FromSlash(other.Parent.Path), other.Stored)
				if err := os.Rename(filepath.Join(otherPath, cryptomator.DirFile), filepath.Join(cp, cryptomator.DirFile)); err != nil {
					t.Fatal(err)
				}
				if err := os.Remove(otherPath); err != nil {
					t.Fatal(err)
				}
			}
			vol, err := UnlockVolume(ctx, dir, []byte("pw"))
			if err != nil {
				t.Fatal(err)
			}
			defer vol.Close()
			list, err := vol.Conflicts(ctx)
			if err != nil || len(list) != 1 {
				t.Fatalf("conflicts %+v, %v", list, err)
			}
			if name == "dir" {
				_, err := vol.Settle(ctx, list[0].Path, KeepOriginal)
				if err == nil || !strings.Contains(err.Error(), "holds entries") {
					t.Fatalf("deleting a directory's copy that holds a file: %v", err)
				}
			}
			if _, err := vol.Settle(ctx, list[0].Path, KeepBoth); err != nil {
				t.Fatalf("keep both: %v", err)
			}
			problems, err := FsckVolume(ctx, vol, nil)
			if err != nil || len(problems) != 0 {
				t.Fatalf("fsck after settling: %v, %v", problems, err)
			}
			var paths []string
			WalkVolume(ctx, vol, func(n Node) error { paths = append(paths, n.Path); return nil }, nil)
			want := []string{name, list[0].Path}
			if name == "dir" {
				want = append(want, list[0].Path+"/f")
			}
			for _, p := range want {
				if !slices.Contains(paths, p) {
					t.Errorf("after settling, %q is not in %q", p, paths)
				}
			}
			if left, err := vol.Conflicts(ctx); err != nil || len(left) != 0 {
				t.Fatalf("conflicts after settling: %+v, %v", left, err)
			}
		})
	}
}
