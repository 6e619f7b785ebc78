package layout

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/crypto"
)

// fixtureFiles returns the small files of the gocryptfs fixtures (../testdata/fixtures/*/
// cipher.tar) whose base name keep accepts, by base name: seeds for the fuzzers.
func fixtureFiles(f *testing.F, keep func(name string) bool) map[string][]byte {
	f.Helper()
	tars, _ := filepath.Glob("../testdata/fixtures/*/cipher.tar")
	out := map[string][]byte{}
	for _, p := range tars {
		fh, err := os.Open(p)
		if err != nil {
			f.Fatal(err)
		}
		tr := tar.NewReader(fh)
		for {
			h, err := tr.Next()
			if err != nil {
				break
			}
			if h.Typeflag == tar.TypeReg && h.Size <= 4096 && keep(path.Base(h.Name)) {
				b, _ := io.ReadAll(tr)
				out[path.Base(h.Name)] = b
			}
		}
		fh.Close()
	}
	return out
}

// FuzzParseDirIV reads hostile gocryptfs.diriv contents: exactly 16 bytes, returned as they
// are; anything else an error wrapping ErrCorrupt.
func FuzzParseDirIV(f *testing.F) {
	for _, b := range fixtureFiles(f, func(n string) bool { return n == crypto.DirIVName }) {
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add(make([]byte, crypto.DirIVLen+1))
	f.Fuzz(func(t *testing.T, b []byte) {
		iv, err := ParseDirIV(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) || len(b) == crypto.DirIVLen {
				t.Fatalf("%d bytes: %v", len(b), err)
			}
			return
		}
		if len(b) != crypto.DirIVLen || !bytes.Equal(iv, b) {
			t.Fatalf("%d bytes read as the IV %x", len(b), iv)
		}
	})
}

// FuzzLongName reads hostile long names: the content of a .name file with the entry name it
// belongs to, and that entry name as a short name. No panic; a refusal wraps ErrCorrupt (the
// .name file) or crypto.ErrBadName (the name); and a name that decrypts is in the one form
// StoredName gives it, so a directory cannot list one name twice.
func FuzzLongName(f *testing.F) {
	// The longnamemax fixture's limit, so that its names are seeds of both forms.
	names, err := crypto.NewNameTransform(bytes.Repeat([]byte{3}, crypto.MasterKeyLen), true, true, crypto.MinLongNameMax)
	if err != nil {
		f.Fatal(err)
	}
	iv := bytes.Repeat([]byte{5}, crypto.DirIVLen)
	for n, b := range fixtureFiles(f, crypto.IsLongNameFile) {
		f.Add(b, strings.TrimSuffix(n, crypto.LongNameSuffix))
	}
	for _, plain := range []string{"short", strings.Repeat("x", 40), strings.Repeat("y", 255)} {
		stored, encoded, _, err := names.StoredName(plain, iv)
		if err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(encoded), stored)
		f.Add([]byte(encoded), names.HashLongName(encoded)) // a short name behind a hash
		f.Add([]byte(encoded+"\n"), names.HashLongName(encoded+"\n"))
	}
	f.Add([]byte{}, crypto.LongNamePrefix)
	f.Fuzz(func(t *testing.T, content []byte, stored string) {
		if len(content) > 1<<20 || len(stored) > 1<<20 {
			t.Skip("over 1 MiB")
		}
		check := func(stored, encoded string) {
			plain, err := names.DecryptEntry(stored, encoded, iv)
			if err != nil {
				if !errors.Is(err, crypto.ErrBadName) {
					t.Fatalf("%q: error without ErrBadName: %v", stored, err)
				}
				return
			}
			s, e, long, err := names.StoredName(plain, iv)
			if err != nil || s != stored || e != encoded || long != (stored != encoded) {
				t.Fatalf("entry %q (%q) decrypts to %q, stored as %q (%q, long %v, %v)", stored, encoded, plain, s, e, long, err)
			}
		}
		check(stored, stored)
		encoded, err := ParseLongName(content, stored, names)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error without ErrCorrupt: %v", err)
			}
			return
		}
		if encoded != string(content) || names.HashLongName(encoded) != stored || !crypto.IsLongName(stored) {
			t.Fatalf(".name content %q accepted for %q", content, stored)
		}
		check(stored, encoded)
	})
}

// FuzzConflictName reads hostile entry names as sync tools' conflict copies: no panic; the
// base is the name without a marker; and the name a copy shows under is a valid name within
// crypto.NameMax bytes, a different one when that is taken, whatever the marker holds.
func FuzzConflictName(f *testing.F) {
	for _, name := range []string{
		"report.sync-conflict-20261130-101010-ABCDEF7.odt",
		"report (conflicted copy 2026-11-30 101010).odt",
		"report (Ann's conflicted copy 2026-11-30).odt",
		"report_conflict-20261130-101010.odt",
		"report (1).odt",
		"gocryptfs.longname.abc-LAPTOP",
		"a-" + strings.Repeat("h", 250),
	} {
		f.Add(name, "report.odt")
	}
	f.Fuzz(func(t *testing.T, name, plain string) {
		if crypto.ValidName(name) != nil {
			return // not a directory entry
		}
		c, ok := ParseConflict(name, func(base string) bool { return crypto.ValidName(base) == nil })
		if !ok {
			return
		}
		if len(c.Base) >= len(name) || crypto.ValidName(c.Base) != nil {
			t.Fatalf("%q: base %q", name, c.Base)
		}
		if crypto.ValidName(plain) != nil {
			return // not a decrypted name
		}
		first := ConflictName(plain, c, func(string) bool { return false })
		second := ConflictName(plain, c, func(s string) bool { return s == first })
		for _, shown := range []string{first, second} {
			if err := crypto.ValidName(shown); err != nil {
				t.Fatalf("copy %q of %q shows as %q: %v", name, plain, shown, err)
			}
		}
		if first == second {
			t.Fatalf("a taken name %q given again", first)
		}
	})
}
