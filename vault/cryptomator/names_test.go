package cryptomator

import (
	"context"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/layout"
)

// The fixture's root is where DirPath("") says, and its names decrypt with the root's ID (the
// empty string) as associated data to the manifest's top-level names.
func TestFixtureRootNames(t *testing.T) {
	dir := extractFixture(t)
	names := NewNames(mustFixtureKey(t))
	root := names.DirPath(rootDirID)
	ents, err := os.ReadDir(filepath.Join(dir, root))
	if err != nil {
		t.Fatalf("root %s: %v", root, err)
	}
	var got []string
	for _, e := range ents {
		name, err := names.Decrypt(rootDirID, e.Name())
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, name)
	}
	var want []string
	for _, m := range fixtureManifest(t) {
		if !strings.Contains(m.Path, "/") {
			want = append(want, rcloneEncoded(m.Path))
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("root names %q, want %q", got, want)
	}
}

func TestNamesRoundTripAndBinding(t *testing.T) {
	k, _ := NewMasterkey()
	n := NewNames(k)
	for _, name := range []string{"a", "file.txt", "日本語のファイル.txt", strings.Repeat("x", 255), " leading space", "semi;colon&amp"} {
		stored := n.Encrypt("dir-A", name)
		if !strings.HasSuffix(stored, ".c9r") {
			t.Fatalf("%q stored as %q", name, stored)
		}
		got, err := n.Decrypt("dir-A", stored)
		if err != nil || got != name {
			t.Fatalf("Decrypt(Encrypt(%q)) = %q, %v", name, got, err)
		}
		if stored != n.Encrypt("dir-A", name) {
			t.Fatal("name encryption is not deterministic")
		}
		// Moved to another directory, the name no longer authenticates.
		if got, err := n.Decrypt("dir-B", stored); !errors.Is(err, crypto.ErrAuth) {
			t.Fatalf("in another directory: %q, %v", got, err)
		}
	}
}

// Names are encrypted in Normalization Form C: both spellings of "é" are one name.
func TestNamesAreNFC(t *testing.T) {
	k, _ := NewMasterkey()
	n := NewNames(k)
	if n.Encrypt("", "caf\u00e9") != n.Encrypt("", "cafe\u0301") {
		t.Fatal("NFC and NFD spellings encrypt differently")
	}
}

func TestNamesDecryptRejects(t *testing.T) {
	k, _ := NewMasterkey()
	n := NewNames(k)
	good := n.Encrypt("", "name")
	unpadded := strings.Replace(good, "=", "", -1)
	for _, c := range []struct{ name, stored string }{
		{"no .c9r", strings.TrimSuffix(good, ".c9r")},
		{"padding removed", unpadded},
		{"not base64", "!!!!.c9r"},
		{"too short for a SIV", "AAAA.c9r"},
		{"decrypts to ..", n.Encrypt("", "..")},
		{"decrypts to .", n.Encrypt("", ".")},
		{"decrypts to a path", n.Encrypt("", "a/b")},
		{"decrypts to NUL", n.Encrypt("", "a\x00b")},
		{"decrypts to nothing", n.Encrypt("", "")},
		{"decrypts to invalid UTF-8", n.Encrypt("", "\xff\xfe")},
		// Every Go base64 decoder skips line breaks: a second spelling of the same name,
		// which a directory holding both would list twice.
		{"a line break inside", good[:4] + "\n" + good[4:]},
		{"a CR LF before .c9r", strings.TrimSuffix(good, ".c9r") + "\r\n.c9r"},
	} {
		if c.stored == good {
			continue
		}
		if got, err := n.Decrypt("", c.stored); !errors.Is(err, layout.ErrCorrupt) {
			t.Errorf("%s: %q, %v; want ErrCorrupt", c.name, got, err)
		}
	}
}

// A name.c9s is read only where a writer puts one: for the .c9s folder its name hashes to,
// holding a name longer than the vault's threshold (a shorter one is stored as it is, and
// behind a .c9s would be a second entry of one name); a dir.c9r holds 1 to 36 bytes.
func TestNameFileAndDirIDRules(t *testing.T) {
	k, _ := NewMasterkey()
	n := NewNames(k)
	long := n.Encrypt("", strings.Repeat("x", 200))
	short := n.Encrypt("", "x")
	if got, err := ParseNameFile([]byte(long), Shorten(long), DefaultShorteningThreshold); err != nil || got != long {
		t.Fatalf("a long name's name.c9s: %q, %v", got, err)
	}
	for _, c := range []struct {
		what, content, stored string
	}{
		{"a short name behind a .c9s", short, Shorten(short)},
		{"another folder's name.c9s", long, Shorten(short)},
		{"a name.c9s over 10 KiB", strings.Repeat("A", maxNameFile+1), Shorten(strings.Repeat("A", maxNameFile+1))},
	} {
		if got, err := ParseNameFile([]byte(c.content), c.stored, DefaultShorteningThreshold); !errors.Is(err, layout.ErrCorrupt) {
			t.Errorf("%s: %q, %v; want ErrCorrupt", c.what, got, err)
		}
	}
	for _, b := range [][]byte{nil, make([]byte, MaxDirIDLen+1)} {
		if id, err := ParseDirID(b); !errors.Is(err, layout.ErrCorrupt) {
			t.Errorf("dir.c9r of %d bytes: %q, %v", len(b), id, err)
		}
	}
	if id, err := ParseDirID([]byte("8f76b3d1-5a9c-4f0e-8c1e-0d2b3a4c5d6e")); err != nil || len(id) != MaxDirIDLen {
		t.Errorf("a UUID: %q, %v", id, err)
	}
}

func TestDirPathShape(t *testing.T) {
	k, _ := NewMasterkey()
	n := NewNames(k)
	p := n.DirPath("8f76b3d1-5a9c-4f0e-8c1e-0d2b3a4c5d6e")
	parts := strings.Split(p, "/")
	if len(parts) != 3 || parts[0] != "d" || len(parts[1]) != 2 || len(parts[2]) != 30 || strings.ToUpper(parts[1]+parts[2]) != parts[1]+parts[2] {
		t.Fatalf("DirPath = %q, want d/XX/ and 30 base32 characters", p)
	}
	if n.DirPath("a") == n.DirPath("b") || n.DirPath("a") != n.DirPath("a") {
		t.Fatal("DirPath is not a function of the ID")
	}
}

// Shorten per the specification: base64url(SHA-1(the encrypted name with .c9r)) + ".c9s";
// the expected value is from Python's hashlib.
func TestShorten(t *testing.T) {
	if got := Shorten(strings.Repeat("A", 217) + ".c9r"); got != "nJVxya5ikDdUhPmexn39IA5kyOU=.c9s" {
		t.Fatalf("Shorten = %q", got)
	}
}

// The shortening rule from the specification, checked on disk with the standard library: an
// encrypted name with its ".c9r" longer than the vault's shorteningThreshold is stored as the
// folder base64url(SHA-1(that name)) + ".c9s", holding it in name.c9s; one of exactly the
// threshold stays as it is. An n-byte name encrypts to 4*ceil((16+n)/3) + 4 characters: 146
// bytes give 220, 147 give 224. A vault with threshold 219 shortens the 220-character one.
func TestShorteningThresholdOnDisk(t *testing.T) {
	encLen := func(n int) int { return 4*((16+n+2)/3) + 4 }
	for _, c := range []struct {
		threshold, nameLen int
		shortened          bool
	}{{220, 146, false}, {220, 147, true}, {219, 146, true}, {224, 147, false}} {
		t.Run(fmt.Sprintf("%d-byte name, threshold %d", c.nameLen, c.threshold), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "vault")
			v, err := Create(context.Background(), dir, []byte("pw"), CreateOptions{ScryptLogN: 10, ShorteningThreshold: c.threshold})
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			name := strings.Repeat("n", c.nameLen)
			if _, err := v.WriteFile(v.Root(), name, strings.NewReader("content")); err != nil {
				t.Fatal(err)
			}
			folder := filepath.Join(dir, filepath.FromSlash(v.Root().Path))
			ents, err := os.ReadDir(folder)
			if err != nil {
				t.Fatal(err)
			}
			var stored []os.DirEntry
			for _, e := range ents {
				if e.Name() != dirIDBackup {
					stored = append(stored, e)
				}
			}
			if len(stored) != 1 {
				t.Fatalf("%d entries in the root folder", len(stored))
			}
			s := stored[0]
			enc := s.Name()
			if c.shortened {
				long, err := os.ReadFile(filepath.Join(folder, s.Name(), "name.c9s"))
				if err != nil || !s.IsDir() {
					t.Fatalf("shortened entry %s: %v", s.Name(), err)
				}
				h := sha1.Sum(long)
				if want := base64.URLEncoding.EncodeToString(h[:]) + ".c9s"; s.Name() != want {
					t.Fatalf("folder %s, want base64url(SHA-1(name.c9s)) = %s", s.Name(), want)
				}
				if _, err := os.Stat(filepath.Join(folder, s.Name(), "contents.c9r")); err != nil {
					t.Fatal(err)
				}
				enc = string(long)
			} else if s.IsDir() || !strings.HasSuffix(enc, ".c9r") {
				t.Fatalf("entry %s (folder %v), want a .c9r file", enc, s.IsDir())
			}
			if len(enc) != encLen(c.nameLen) || len(enc) > c.threshold != c.shortened {
				t.Fatalf("encrypted name of %d characters, want %d", len(enc), encLen(c.nameLen))
			}
			if got, err := NewNames(v.key).Decrypt(rootDirID, enc); err != nil || got != name {
				t.Fatalf("the encrypted name decrypts to %q, %v", got, err)
			}
		})
	}
}
