package cryptomator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// settleCase is an entry stored in a folder (a directory, a symlink, a shortened name) and a
// sync tool's conflict copy of it holding other data.
type settleCase struct {
	kind string
	// make makes the original under name and, under other, the entry whose payload the
	// copy gets.
	make func(t *testing.T, v *Vault, name, other string)
}

// shortenedName is a plaintext name whose encrypted name is shortened (.c9s).
var shortenedName = strings.Repeat("long name ", 20)

var settleCases = []settleCase{
	{"directory", func(t *testing.T, v *Vault, name, other string) {
		mkdirWith(t, v, name, "in the original")
		mkdirWith(t, v, other, "in the copy")
	}},
	{"empty directory", func(t *testing.T, v *Vault, name, other string) {
		mkdirWith(t, v, name, "")
		mkdirWith(t, v, other, "")
	}},
	{"symlink", func(t *testing.T, v *Vault, name, other string) {
		must(v.Symlink(v.Root(), name, "original target"))(t)
		must(v.Symlink(v.Root(), other, "copy's target"))(t)
	}},
	{"long file", func(t *testing.T, v *Vault, name, other string) {
		must(v.WriteFile(v.Root(), shortenedName+name, strings.NewReader("original data")))(t)
		must(v.WriteFile(v.Root(), other, strings.NewReader("copy's data")))(t)
	}},
	{"long directory", func(t *testing.T, v *Vault, name, other string) {
		mkdirWith(t, v, shortenedName+name, "")
		mkdirWith(t, v, other, "in the copy")
	}},
}

func must[T any](_ T, err error) func(*testing.T) {
	return func(t *testing.T) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// mkdirWith makes the directory name in the root, holding a file of that name if file is
// not "".
func mkdirWith(t *testing.T, v *Vault, name, file string) {
	t.Helper()
	d, err := v.Mkdir(v.Root(), name)
	if err != nil {
		t.Fatal(err)
	}
	if file != "" {
		must(v.WriteFile(d, file, strings.NewReader(file)))(t)
	}
}

// newSettleVault makes a vault holding c's original (named "x", or shortenedName+"x") and its
// conflict copy, and returns the vault, its folder and the copy.
func newSettleVault(t *testing.T, c settleCase) (*Vault, string, Entry) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "v")
	v, err := Create(context.Background(), dir, []byte("pw"), CreateOptions{ScryptLogN: 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	c.make(t, v, "x", "other")
	ents, err := v.ReadDir(v.Root())
	if err != nil || len(ents) != 2 {
		t.Fatalf("root: %v, %v", ents, err)
	}
	orig, other := ents[0], ents[1]
	if orig.Name == "other" {
		orig, other = other, orig
	}
	// The copy: the original's folder (with its name.c9s) copied under a tool's marker, with
	// the payload of other, which is then gone.
	at := func(e Entry) string { return filepath.Join(dir, filepath.FromSlash(e.node())) }
	suffix := filepath.Ext(orig.Stored)
	cp := strings.TrimSuffix(at(orig), suffix) + " (conflicted copy 2026-11-30)" + suffix
	if err := os.CopyFS(cp, os.DirFS(at(orig))); err != nil {
		t.Fatal(err)
	}
	payload := map[Kind]string{KindFile: ContentsFile, KindDir: DirFile, KindSymlink: SymlinkFile}[orig.Kind]
	from := at(other)
	if other.Kind != KindFile {
		from = filepath.Join(from, payload)
	}
	if err := os.Rename(from, filepath.Join(cp, payload)); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(at(other))
	for _, e := range must2(v.ReadDir(v.Root()))(t) {
		if e.Conflict != nil {
			return v, dir, e
		}
	}
	t.Fatalf("%s: the copy is not seen as one", c.kind)
	return nil, "", Entry{}
}

func must2[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// tree describes the root of v, name by name: what a file holds, where a symlink points, a
// directory's ID and files; a copy's name carries "(copy)". Every name in the root's folder must
// be an entry (no half-made folder, no temporary name left), and every d/ folder must be
// some directory's.
func tree(t *testing.T, v *Vault, dir string) map[string]string {
	t.Helper()
	ents, err := v.ReadDir(v.Root())
	if err != nil {
		t.Fatalf("root: %v", err)
	}
	raw, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(v.Root().Path)))
	if err != nil || len(raw) != len(ents)+1 {
		t.Fatalf("root's folder holds %d names beside dirid.c9r for %d entries (%v)", len(raw)-1, len(ents), err)
	}
	out := map[string]string{}
	folders := map[string]bool{v.Root().Path: true}
	for _, e := range ents {
		name := strings.TrimPrefix(e.Name, shortenedName)
		if e.Conflict != nil {
			name += " (copy)"
		}
		out[name] = describe(t, v, e)
		if e.Kind == KindDir {
			d, _ := v.OpenDir(e)
			folders[d.Path] = true
		}
	}
	xx, _ := filepath.Glob(filepath.Join(dir, DataDir, "*", "*"))
	if len(xx) != len(folders) {
		t.Errorf("%d directory folders for %d directories", len(xx), len(folders))
	}
	return out
}

// describe says what e holds: a file's content, a symlink's target, a directory's ID and
// the names in it.
func describe(t *testing.T, v *Vault, e Entry) string {
	t.Helper()
	var b bytes.Buffer
	var err error
	switch e.Kind {
	case KindFile:
		_, err = v.ReadFile(e, &b)
	case KindSymlink:
		var target string
		target, err = v.ReadLink(e)
		b.WriteString("-> " + target)
	case KindDir:
		var d Dir
		if d, err = v.OpenDir(e); err == nil {
			b.WriteString("directory " + d.ID)
			var in []Entry
			in, err = v.ReadDir(d)
			for _, f := range in {
				b.WriteString("[" + f.Name + "]")
			}
		}
	}
	if err != nil {
		t.Fatalf("%s: %v", e.Name, err)
	}
	return b.String()
}

// The conflict copy of an entry stored in a folder (a directory, a symlink, a shortened
// name) is settled offline each way as a file's is: keep the original (the copy goes), keep
// the copy (it takes the original's name and the original goes), keep both (the copy gets a
// name of its own, short or shortened). Nothing else changes and nothing is left behind.
func TestSettleFolderEntries(t *testing.T) {
	for _, c := range settleCases {
		// A directory holding files is not removed, as rmdir(2) does not remove it: the
		// user looks inside first.
		copyFull, origFull := c.kind != "empty directory" && strings.HasSuffix(c.kind, "directory"), c.kind == "directory"
		// setup makes the vault with the original and the copy (settleVault) and describes
		// both.
		setup := func(t *testing.T) (v *Vault, dir string, e Entry, orig, cp string) {
			v, dir, e = newSettleVault(t, c)
			m := tree(t, v, dir)
			return v, dir, e, m["x"], m["x (copy)"]
		}
		refused := func(t *testing.T, v *Vault, dir string, err error, orig, cp string) {
			t.Helper()
			if !errors.Is(err, unix.ENOTEMPTY) {
				t.Fatalf("%v, want ENOTEMPTY", err)
			}
			if got := tree(t, v, dir); got["x (copy)"] != cp || got["x"] != orig {
				t.Fatalf("after a refusal: %q", got)
			}
		}
		t.Run(c.kind, func(t *testing.T) {
			t.Run("keep original", func(t *testing.T) {
				v, dir, e, orig, cp := setup(t)
				err := v.RemoveCopy(e)
				if copyFull {
					refused(t, v, dir, err, orig, cp)
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if got := tree(t, v, dir); len(got) != 1 || got["x"] != orig {
					t.Fatalf("%q, want the original alone, %q", got, orig)
				}
			})
			t.Run("keep copy", func(t *testing.T) {
				v, dir, e, orig, cp := setup(t)
				err := v.ReplaceWithCopy(e)
				if origFull {
					refused(t, v, dir, err, orig, cp)
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if got := tree(t, v, dir); len(got) != 1 || got["x"] != cp {
					t.Fatalf("%q, want the copy alone, %q", got, cp)
				}
			})

			for _, name := range []string{"kept", shortenedName + "kept"} {
				t.Run(fmt.Sprintf("keep both as a name of %d", len(name)), func(t *testing.T) {
					v, dir, e, orig, cp := setup(t)
					if err := v.KeepCopyAs(e, name); err != nil {
						t.Fatal(err)
					}
					if got := tree(t, v, dir); len(got) != 2 || got["x"] != orig || got["kept"] != cp {
						t.Fatalf("%q, want x %q and kept %q", got, orig, cp)
					}
					// A name that is taken is refused.
					v2, _, e2 := newSettleVault(t, c)
					if err := v2.KeepCopyAs(e2, e2.Name); !errors.Is(err, os.ErrExist) {
						t.Fatalf("keeping the copy under its original's name: %v, want ErrExist", err)
					}
				})
			}
		})
	}
}

// A directory's copy that names the original's own directory (its dir.c9r copied as it is)
// shows the same files: keeping either removes the copy's entry alone, and keeping both is
// refused, since two entries would name one directory.
func TestSettleDirectoryCopyOfTheSameID(t *testing.T) {
	for _, keep := range []string{"original", "copy", "both"} {
		t.Run(keep, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "v")
			v, err := Create(context.Background(), dir, []byte("pw"), CreateOptions{ScryptLogN: 10})
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			mkdirWith(t, v, "x", "inside")
			orig, err := v.Lookup(v.Root(), "x")
			if err != nil {
				t.Fatal(err)
			}
			src := filepath.Join(dir, filepath.FromSlash(orig.node()))
			if err := os.CopyFS(strings.TrimSuffix(src, ".c9r")+".sync-conflict-20261130-101010-ABCDEF7.c9r", os.DirFS(src)); err != nil {
				t.Fatal(err)
			}
			var c Entry
			for _, e := range must2(v.ReadDir(v.Root()))(t) {
				if e.Conflict != nil {
					c = e
				}
			}
			switch keep {
			case "original":
				err = v.RemoveCopy(c)
			case "copy":
				err = v.ReplaceWithCopy(c)
			default:
				if err = v.KeepCopyAs(c, "y"); !errors.Is(err, ErrSettleUnsupported) {
					t.Fatalf("keep both: %v, want ErrSettleUnsupported", err)
				}
				if got := tree(t, v, dir); len(got) != 2 {
					t.Fatalf("after a refusal: %q", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := tree(t, v, dir); len(got) != 1 || !strings.HasSuffix(got["x"], "[inside]") {
				t.Fatalf("%q, want x holding its file", got)
			}
		})
	}
}

// Settling refuses an entry that is not a copy, and a copy that does not authenticate gets
// no name of its own.
func TestSettleRefusals(t *testing.T) {
	v, dir, e := newSettleVault(t, settleCases[2]) // a symlink
	x, err := v.Lookup(v.Root(), "x")
	if err != nil {
		t.Fatal(err)
	}
	if err := v.RemoveCopy(x); err == nil {
		t.Fatal("an entry that is not a copy was removed as one")
	}
	target := filepath.Join(dir, filepath.FromSlash(e.node()), SymlinkFile)
	b, err := os.ReadFile(target)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 1
	if err := os.WriteFile(target, b, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, settle := range []func(Entry) error{v.ReplaceWithCopy, func(e Entry) error { return v.KeepCopyAs(e, "kept") }} {
		if err := settle(e); err == nil {
			t.Fatal("a copy that does not authenticate was settled")
		}
	}
	ents, _ := v.ReadDir(v.Root())
	if !slices.ContainsFunc(ents, func(f Entry) bool { return f.Stored == e.Stored }) || len(ents) != 2 {
		t.Fatalf("after refusals: %v", ents)
	}
}
