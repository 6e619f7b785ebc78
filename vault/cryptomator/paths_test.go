package cryptomator

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/vault/layout"
)

// TestPaths: plaintext paths map to the stored entries of Cryptomator's layout and back, for
// files, directories, long names and names that do not exist yet; the format's own files and
// paths outside d/ are said to be so.
func TestPaths(t *testing.T) {
	v := openFixture(t, extractFixture(t))
	pm := v.Volume().Paths()
	for _, p := range walkPlain(t, v) {
		enc, err := pm.EncryptPath(p)
		if err != nil {
			t.Fatalf("encrypt %s: %v", p, err)
		}
		if !strings.HasPrefix(enc, DataDir+"/") || !(strings.HasSuffix(enc, suffixC9R) || strings.HasSuffix(enc, suffixC9S)) {
			t.Errorf("encrypt %s: %s is not a stored entry", p, enc)
		}
		// The entry, and a file in its folder (a sync tool's error names contents.c9r,
		// dir.c9r or symlink.c9r), map to the entry.
		for _, c := range []string{enc, "/" + enc + "/", enc + "/" + ContentsFile} {
			got, err := pm.DecryptPath(c)
			if err != nil || got != p {
				t.Errorf("decrypt %s: %q, %v; want %q", c, got, err, p)
			}
		}
	}
	// The last element need not exist; the directories above it must.
	if enc, err := pm.EncryptPath("not there yet"); err != nil || !strings.HasSuffix(enc, suffixC9R) {
		t.Errorf("a new name: %q, %v", enc, err)
	}
	if _, err := pm.EncryptPath("missing dir/x"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("below a missing directory: %v", err)
	}
	for _, own := range []string{ConfigFileName, MasterkeyFileName, v.names.DirPath(rootDirID)} {
		if _, err := pm.DecryptPath(own); !errors.Is(err, layout.ErrFormatFile) {
			t.Errorf("decrypt %s: %v, want the format's own file", own, err)
		}
	}
	if _, err := pm.DecryptPath("elsewhere/x"); !errors.Is(err, layout.ErrBadPath) {
		t.Errorf("outside d/: %v", err)
	}
	if _, err := pm.DecryptPath("d/AB/CDEFGHIJKLMNOPQRSTUVWXYZ234567"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a folder no directory has: %v", err)
	}
}

// walkPlain lists every plaintext path of v, depth first.
func walkPlain(t *testing.T, v *Vault) []string {
	t.Helper()
	var out []string
	var walk func(d Dir, prefix string)
	walk = func(d Dir, prefix string) {
		ents, err := v.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			out = append(out, prefix+e.Name)
			if e.Kind == KindDir {
				sub, err := v.OpenDir(e)
				if err != nil {
					t.Fatal(err)
				}
				walk(sub, prefix+e.Name+"/")
			}
		}
	}
	walk(v.Root(), "")
	if len(out) < 3 {
		t.Fatalf("the fixture holds only %v", out)
	}
	return out
}
