package layout

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
)

// makeEntry creates plain (a directory when dir) in the cipher directory cdir as a mount
// would, and returns its cipher path.
func makeEntry(t *testing.T, m PathNames, cdir, plain string, dir bool) string {
	t.Helper()
	fd := openDir(t, cdir)
	iv := make([]byte, crypto.DirIVLen)
	if m.PerDirIV {
		var err error
		if iv, err = ReadDirIV(fd); err != nil {
			t.Fatal(err)
		}
	}
	stored, encoded, long, err := m.Names.StoredName(plain, iv)
	if err != nil {
		t.Fatal(err)
	}
	if long {
		if _, err := WriteLongName(fd, stored, encoded); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(cdir, stored)
	if dir {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if m.PerDirIV {
			if _, err := WriteDirIV(openDir(t, p)); err != nil {
				t.Fatal(err)
			}
		}
	} else if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Paths map both ways through directories with their own IVs, long names and deterministic
// names; a leaf that does not exist encrypts (and decrypts) all the same; the format's own
// files and missing directories are clear errors.
func TestPathMapping(t *testing.T) {
	long := strings.Repeat("long name ", 25)
	for _, perDir := range []bool{true, false} {
		m := PathNames{Names: testNames(t), PerDirIV: perDir}
		root := t.TempDir()
		if perDir {
			if _, err := WriteDirIV(openDir(t, root)); err != nil {
				t.Fatal(err)
			}
		}
		docs := makeEntry(t, m, root, "docs", true)
		deep := makeEntry(t, m, docs, long, true)
		file := makeEntry(t, m, deep, "report.odt", false)
		rootfd := openDir(t, root)
		rel := func(p string) string { r, _ := filepath.Rel(root, p); return r }
		for plain, cipher := range map[string]string{
			"docs":                         rel(docs),
			"docs/" + long:                 rel(deep),
			"docs/" + long + "/report.odt": rel(file),
		} {
			got, err := m.EncryptPath(rootfd, "/"+plain)
			if err != nil || got != cipher {
				t.Errorf("perDirIV=%v: EncryptPath(%q) = %q, %v; want %q", perDir, plain, got, err, cipher)
			}
			back, err := m.DecryptPath(rootfd, cipher)
			if err != nil || back != plain {
				t.Errorf("perDirIV=%v: DecryptPath(%q) = %q, %v; want %q", perDir, cipher, back, err, plain)
			}
		}
		if !strings.Contains(rel(deep), crypto.LongNamePrefix) {
			t.Errorf("perDirIV=%v: %q is not a long name", perDir, rel(deep))
		}
		// A leaf that does not exist yet.
		newFile, err := m.EncryptPath(rootfd, "docs/not yet.txt")
		if err != nil {
			t.Fatal(err)
		}
		if back, err := m.DecryptPath(rootfd, newFile); err != nil || back != "docs/not yet.txt" {
			t.Errorf("perDirIV=%v: new leaf: %q -> %q, %v", perDir, newFile, back, err)
		}
		// A directory on the way that does not exist.
		if _, err := m.EncryptPath(rootfd, "nope/x"); !errors.Is(err, unix.ENOENT) {
			t.Errorf("perDirIV=%v: missing directory: %v, want ENOENT", perDir, err)
		}
		if perDir {
			_, err := m.DecryptPath(rootfd, rel(docs)+"/"+crypto.DirIVName)
			if !errors.Is(err, ErrFormatFile) {
				t.Errorf("diriv: %v, want ErrFormatFile", err)
			}
		}
		_, err = m.DecryptPath(rootfd, rel(deep)+crypto.LongNameSuffix)
		if !errors.Is(err, ErrFormatFile) || !strings.Contains(err.Error(), "the long-name file of docs/"+long) {
			t.Errorf(".name file: %v, want ErrFormatFile naming its entry", err)
		}
		if _, err := m.DecryptPath(rootfd, "AAAAAAAAAAAAAAAAAAAAAA"); err == nil {
			t.Errorf("a name that does not decrypt: %v", err)
		}
	}
	// Plaintext names map to themselves.
	if got, err := (PathNames{}).DecryptPath(-1, "/a/b/../c"); err != nil || got != "a/c" {
		t.Errorf("plaintext names: %q, %v", got, err)
	}
}

func TestCleanPath(t *testing.T) {
	for in, want := range map[string]string{"a": "a", "/a/b": "a/b", "//a/./b/": "a/b", "a/../b": "b", "..x": "..x", "": "", "/": "", ".": "", "..": "", "../a": "", "/../a": "", "a/../..": ""} {
		got, err := CleanPath(in)
		if want == "" {
			if !errors.Is(err, ErrBadPath) {
				t.Errorf("CleanPath(%q) = %q, %v; want ErrBadPath", in, got, err)
			}
		} else if got != want || err != nil {
			t.Errorf("CleanPath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
