package cryptomator

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/format"
	"github.com/vaultui/vaultui/vault/layout"
)

// mustName fails the test unless err wraps want and its message names file.
func mustName(t *testing.T, err error, want error, file string) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("error %v, want %v", err, want)
	}
	if !strings.Contains(err.Error(), file) {
		t.Fatalf("error %q does not name %s", err, file)
	}
}

func editJSON(t *testing.T, file string, f func(m map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestOpenRejectsTamperedFiles(t *testing.T) {
	pw := fixturePassword(t)
	pw0 := bytes.Clone(pw)
	defer func() {
		if !bytes.Equal(pw, pw0) {
			t.Error("Open changed the caller's password")
		}
	}()
	for _, c := range []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   error
		file   string
	}{
		{"vault.cryptomator claims changed", func(t *testing.T, dir string) {
			p := filepath.Join(dir, ConfigFileName)
			b, _ := os.ReadFile(p)
			parts := strings.Split(string(b), ".")
			claims, _ := base64.RawURLEncoding.DecodeString(parts[1])
			claims = bytes.Replace(claims, []byte("220"), []byte("221"), 1)
			parts[1] = base64.RawURLEncoding.EncodeToString(claims)
			os.WriteFile(p, []byte(strings.Join(parts, ".")), 0o600)
		}, crypto.ErrAuth, ConfigFileName},
		{"vault.cryptomator alg none", func(t *testing.T, dir string) {
			p := filepath.Join(dir, ConfigFileName)
			b, _ := os.ReadFile(p)
			parts := strings.Split(string(b), ".")
			parts[0] = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","kid":"masterkeyfile:masterkey.cryptomator"}`))
			os.WriteFile(p, []byte(parts[0]+"."+parts[1]+"."), 0o600)
		}, layout.ErrCorrupt, ConfigFileName},
		{"vault.cryptomator missing", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, ConfigFileName))
		}, layout.ErrCorrupt, ConfigFileName},
		{"versionMac changed", func(t *testing.T, dir string) {
			editJSON(t, filepath.Join(dir, MasterkeyFileName), func(m map[string]any) {
				b, _ := base64.StdEncoding.DecodeString(m["versionMac"].(string))
				b[0] ^= 1
				m["versionMac"] = base64.StdEncoding.EncodeToString(b)
			})
		}, layout.ErrCorrupt, MasterkeyFileName},
		{"masterkey file not JSON", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, MasterkeyFileName), []byte("{\"version\":"), 0o600)
		}, layout.ErrCorrupt, MasterkeyFileName},
		{"absurd scrypt cost", func(t *testing.T, dir string) {
			editJSON(t, filepath.Join(dir, MasterkeyFileName), func(m map[string]any) { m["scryptCostParam"] = 1 << 31 })
		}, crypto.ErrWeakKDF, MasterkeyFileName},
		{"absurd scrypt block size", func(t *testing.T, dir string) {
			editJSON(t, filepath.Join(dir, MasterkeyFileName), func(m map[string]any) { m["scryptBlockSize"] = 1 << 20 })
		}, crypto.ErrWeakKDF, MasterkeyFileName},
		{"masterkey file is a symlink", func(t *testing.T, dir string) {
			p := filepath.Join(dir, MasterkeyFileName)
			os.Rename(p, p+".real")
			os.Symlink(MasterkeyFileName+".real", p)
		}, layout.ErrCorrupt, MasterkeyFileName},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := extractFixture(t)
			c.damage(t, dir)
			v, err := Open(context.Background(), dir, pw)
			if v != nil {
				t.Fatal("opened")
			}
			mustName(t, err, c.want, filepath.Join(dir, c.file))
		})
	}
}

// openFixture opens the extracted fixture with its key (no scrypt).
func openFixture(t *testing.T, dir string) *Vault {
	t.Helper()
	v, err := OpenWithKey(dir, mustFixtureKey(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v
}

// A flipped byte in a file's header or chunk: the read fails naming the file (and the chunk),
// and only the chunks before it come out.
func TestReadFileTampered(t *testing.T) {
	dir := extractFixture(t)
	v := openFixture(t, dir)
	e, err := v.Resolve("sizes/0100000.bin")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, filepath.FromSlash(e.contentPath()))
	orig, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	g := v.Content().Geometry()
	for _, c := range []struct {
		name    string
		at      int
		chunk   int64 // -1: header
		wantOut int
	}{
		{"header", 20, -1, 0},
		{"chunk 0", g.HeaderLen + 40, 0, 0},
		{"chunk 2", g.HeaderLen + 2*(g.BlockSize+g.BlockOverhead) + 5, 2, 2 * ChunkSize},
	} {
		t.Run(c.name, func(t *testing.T) {
			bad := bytes.Clone(orig)
			bad[c.at] ^= 0x01
			os.WriteFile(file, bad, 0o600)
			var out bytes.Buffer
			_, err := v.ReadFile(e, &out)
			mustName(t, err, crypto.ErrAuth, file)
			var be *crypto.BlockError
			if c.chunk >= 0 && (!errors.As(err, &be) || int64(be.Block) != c.chunk) {
				t.Fatalf("%v does not name chunk %d", err, c.chunk)
			}
			if out.Len() != c.wantOut {
				t.Fatalf("%d bytes came out, want %d", out.Len(), c.wantOut)
			}
		})
	}
	os.WriteFile(file, orig[:len(orig)-20], 0o600)
	_, err = v.ReadFile(e, &bytes.Buffer{})
	mustName(t, err, layout.ErrCorrupt, file)
}

// walkProblems collects the damage the walker's one walk (format.Walk) reports.
func walkProblems(v *Vault) []format.Problem {
	var out []format.Problem
	format.Walk(context.Background(), v.Volume(), func(format.Node) error { return nil }, func(p format.Problem) {
		if p.Damage() {
			out = append(out, p)
		}
	}, false)
	return out
}

// Damage to the tree: each is reported by the walk with its kind and the file named, and the
// rest still reads.
func TestWalkReportsTreeDamage(t *testing.T) {
	v0, dir0 := createTestVault(t, SIVGCM)
	root := v0.Root()
	sub, err := v0.Mkdir(root, "sub")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v0.WriteFile(sub, "a", strings.NewReader("a")); err != nil {
		t.Fatal(err)
	}
	long, err := v0.WriteFile(root, longName, strings.NewReader("long"))
	if err != nil {
		t.Fatal(err)
	}
	subEntry, err := v0.Lookup(root, "sub")
	if err != nil {
		t.Fatal(err)
	}
	v0.Close()
	copyVault := func(t *testing.T) (*Vault, string) {
		dir := filepath.Join(t.TempDir(), "v")
		if err := os.CopyFS(dir, os.DirFS(dir0)); err != nil {
			t.Fatal(err)
		}
		v, err := Open(context.Background(), dir, []byte(testPassword))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { v.Close() })
		return v, dir
	}
	at := func(dir, rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }
	for _, c := range []struct {
		name   string
		damage func(dir string) string // returns the file the problem must name
		want   string                  // its kind
	}{
		{"missing dirid.c9r", func(dir string) string {
			p := at(dir, sub.Path+"/"+dirIDBackup)
			os.Remove(p)
			return p
		}, format.KindDirID},
		{"dirid.c9r of another directory", func(dir string) string {
			p := at(dir, sub.Path+"/"+dirIDBackup)
			b, _ := os.ReadFile(at(dir, root.Path+"/"+dirIDBackup))
			os.WriteFile(p, b, 0o600)
			return p
		}, format.KindDirID},
		{".c9s whose name.c9s does not hash to its folder", func(dir string) string {
			p := at(dir, long.node()+"/"+NameFile)
			b, _ := os.ReadFile(p)
			b[10] ^= 1
			os.WriteFile(p, b, 0o600)
			return p
		}, format.KindLongName},
		{".c9s without name.c9s", func(dir string) string {
			p := at(dir, long.node()+"/"+NameFile)
			os.Remove(p)
			return p
		}, format.KindLongName},
		{"dir.c9r naming a missing directory", func(dir string) string {
			os.RemoveAll(at(dir, sub.Path))
			return at(dir, subEntry.node()+"/"+DirFile)
		}, format.KindDirID},
		{"dir.c9r too long", func(dir string) string {
			p := at(dir, subEntry.node()+"/"+DirFile)
			os.WriteFile(p, bytes.Repeat([]byte("x"), 37), 0o600)
			return p
		}, format.KindDirID},
		{"name that does not decrypt", func(dir string) string {
			b := make([]byte, 32)
			rand.Read(b)
			p := at(dir, root.Path+"/"+base64.URLEncoding.EncodeToString(b)+suffixC9R)
			os.WriteFile(p, nil, 0o600)
			return p
		}, format.KindName},
		{"entry moved to another directory", func(dir string) string {
			p := at(dir, sub.Path+"/"+long.Stored)
			os.Rename(at(dir, long.node()), p)
			return p
		}, format.KindName},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, dir := copyVault(t)
			file := c.damage(dir)
			problems := walkProblems(v)
			if len(problems) != 1 {
				t.Fatalf("%d problems: %v", len(problems), problems)
			}
			rel, _ := filepath.Rel(dir, file)
			if p := problems[0]; p.Kind != c.want || !strings.Contains(p.CipherPath+" "+p.Detail, filepath.ToSlash(rel)) {
				t.Fatalf("problem %v, want one of kind %s naming %s", p, c.want, rel)
			}
		})
	}
}

// A symlink.c9r longer than the longest target is refused, not read in part.
func TestReadLinkRefusesOversizedTarget(t *testing.T) {
	v, dir := createTestVault(t, SIVGCM)
	defer v.Close()
	e, err := v.Symlink(v.Root(), "l", "target")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, filepath.FromSlash(e.node()+"/"+SymlinkFile))
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Content().Encrypt(f, bytes.NewReader(bytes.Repeat([]byte("a"), MaxSymlinkLen+ChunkSize))); err != nil {
		t.Fatal(err)
	}
	f.Close()
	target, err := v.ReadLink(e)
	if target != "" {
		t.Fatalf("read %d bytes of target", len(target))
	}
	mustName(t, err, layout.ErrCorrupt, p)
}

// A dir.c9r is a reference: a hostile one can name its own ancestor's folder, or a folder
// another dir.c9r names. The walk ends, reports the entry as damage and walks the folder once.
func TestWalkRefusesDirectoryLoopsAndSharing(t *testing.T) {
	for _, loop := range []bool{true, false} {
		t.Run(map[bool]string{true: "a loop", false: "two entries of one folder"}[loop], func(t *testing.T) {
			v, dir := createTestVault(t, SIVGCM)
			a, err := v.Mkdir(v.Root(), "a")
			if err != nil {
				t.Fatal(err)
			}
			parent := a // the loop: b inside a names a
			if !loop {
				parent = v.Root() // sharing: b beside a names a
			}
			if _, err := v.Mkdir(parent, "b"); err != nil {
				t.Fatal(err)
			}
			if _, err := v.WriteFile(a, "f", strings.NewReader("f")); err != nil {
				t.Fatal(err)
			}
			e, err := v.Lookup(parent, "b")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(e.node()+"/"+DirFile)), []byte(a.ID), 0o600); err != nil {
				t.Fatal(err)
			}
			done := make(chan []format.Problem, 1)
			var files int
			go func() {
				var out []format.Problem
				format.Walk(context.Background(), v.Volume(), func(n format.Node) error {
					if !n.Info.IsDir() && n.Info.Mode().IsRegular() {
						files++
					}
					return nil
				}, func(p format.Problem) {
					if p.Damage() {
						out = append(out, p)
					}
				}, false)
				done <- out
			}()
			var problems []format.Problem
			select {
			case problems = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("the walk does not end")
			}
			// b's own folder is left without an entry naming it: not the walk's to see.
			if len(problems) != 1 || problems[0].Kind != format.KindDirTwice || path.Base(problems[0].Path) != "b" {
				t.Fatalf("problems %v, want one of kind %s for b", problems, format.KindDirTwice)
			}
			if files != 1 {
				t.Fatalf("walked %d files, want a's one file once", files)
			}
		})
	}
}

// A sync tool's conflict copy of a directory names the original's folder too: not damage. Its
// contents are walked under both names, whichever sorts first ("a.d (conflict…)" sorts after
// "a.d"; "b (conflict…).d" before "b.d").
func TestWalkConflictCopyOfDirectory(t *testing.T) {
	for _, name := range []string{"a", "b.d"} {
		t.Run(name, func(t *testing.T) {
			v, dir := createTestVault(t, SIVGCM)
			d, err := v.Mkdir(v.Root(), name)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := v.WriteFile(d, "f", strings.NewReader("f")); err != nil {
				t.Fatal(err)
			}
			e, err := v.Lookup(v.Root(), name)
			if err != nil {
				t.Fatal(err)
			}
			src := filepath.Join(dir, filepath.FromSlash(e.node()))
			dst := strings.TrimSuffix(src, suffixC9R) + " (Ann's conflicted copy 2026-11-30)" + suffixC9R
			if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
				t.Fatal(err)
			}
			var files []string
			var problems []format.Problem
			format.Walk(context.Background(), v.Volume(), func(n format.Node) error {
				if n.Info.Mode().IsRegular() {
					files = append(files, n.Path)
				}
				return nil
			}, func(p format.Problem) {
				if p.Damage() {
					problems = append(problems, p)
				}
			}, false)
			if len(problems) != 0 || len(files) != 2 {
				t.Fatalf("files %q, damage %v; want the file under both names and no damage", files, problems)
			}
		})
	}
}
