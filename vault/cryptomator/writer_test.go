package cryptomator

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
)

const testPassword = "correct horse battery staple"

// createTestVault makes a vault with a cheap scrypt cost (tests only).
func createTestVault(t *testing.T, combo CipherCombo) (*Vault, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "vault")
	v, err := Create(context.Background(), dir, []byte(testPassword), CreateOptions{Combo: combo, ScryptLogN: 10})
	if err != nil {
		t.Fatal(err)
	}
	return v, dir
}

func fileWalked(b []byte) walked {
	h := sha256.Sum256(b)
	return walked{kind: KindFile, size: int64(len(b)), sha256: hex.EncodeToString(h[:])}
}

// longName is a plaintext name whose encrypted name is longer than the shortening threshold
// (220): AES-SIV adds 16 bytes, base64 a third, ".c9r" 4.
var longName = strings.Repeat("long name ", 16) + ".txt"

// A vault written here reads back exactly after reopening with the password: files of every
// size around the chunk boundaries, nested and empty directories, names long enough to be
// shortened (file, directory, symlink), symlinks.
func TestWriteReadRoundTrip(t *testing.T) {
	for _, combo := range []CipherCombo{SIVGCM, SIVCTRMAC} {
		t.Run(string(combo), func(t *testing.T) {
			v, dir := createTestVault(t, combo)
			want := map[string]walked{}
			root := v.Root()
			for _, n := range []int{0, 1, ChunkSize - 1, ChunkSize, ChunkSize + 1, 100000} {
				b := make([]byte, n)
				rand.Read(b)
				name := fmt.Sprintf("size-%06d", n)
				if _, err := v.WriteFile(root, name, bytes.NewReader(b)); err != nil {
					t.Fatal(err)
				}
				want[name] = fileWalked(b)
			}
			sub, err := v.Mkdir(root, "sub")
			if err != nil {
				t.Fatal(err)
			}
			want["sub"] = walked{kind: KindDir}
			deeper, err := v.Mkdir(sub, "deeper ünïcödé")
			if err != nil {
				t.Fatal(err)
			}
			want["sub/deeper ünïcödé"] = walked{kind: KindDir}
			if _, err := v.Mkdir(root, "empty"); err != nil {
				t.Fatal(err)
			}
			want["empty"] = walked{kind: KindDir}
			content := []byte("in a long-named file")
			if _, err := v.WriteFile(deeper, longName, bytes.NewReader(content)); err != nil {
				t.Fatal(err)
			}
			want["sub/deeper ünïcödé/"+longName] = fileWalked(content)
			longDir, err := v.Mkdir(sub, longName+".d")
			if err != nil {
				t.Fatal(err)
			}
			want["sub/"+longName+".d"] = walked{kind: KindDir}
			if _, err := v.WriteFile(longDir, "inside", strings.NewReader("x")); err != nil {
				t.Fatal(err)
			}
			want["sub/"+longName+".d/inside"] = fileWalked([]byte("x"))
			for name, target := range map[string]string{"link": "sub/deeper ünïcödé", "abs": "/etc/hostname", longName + ".lnk": "../" + longName} {
				if _, err := v.Symlink(root, name, target); err != nil {
					t.Fatal(err)
				}
				want[name] = walked{kind: KindSymlink, target: target}
			}
			if _, err := v.WriteFile(root, "size-000001", strings.NewReader("again")); !errors.Is(err, unix.EEXIST) {
				t.Fatalf("writing an existing name: %v, want EEXIST", err)
			}
			v.Close()

			v, err = Open(context.Background(), dir, []byte(testPassword))
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			if v.Content().Combo() != combo {
				t.Fatalf("combo %s", v.Content().Combo())
			}
			got := walkAll(t, v)
			for p, w := range want {
				if got[p] != w {
					t.Errorf("%s: read %+v, wrote %+v", p, got[p], w)
				}
			}
			if len(got) != len(want) {
				t.Errorf("read %d entries, wrote %d", len(got), len(want))
			}
			// The on-disk shape: three .c9s folders in the right places, each with name.c9s;
			// dirid.c9r everywhere, the root's holding the empty ID (a header, no chunk).
			c9s, _ := filepath.Glob(filepath.Join(dir, "d", "*", "*", "*.c9s", NameFile))
			if len(c9s) != 3 {
				t.Errorf("%d .c9s folders with name.c9s, want 3", len(c9s))
			}
			contents, _ := filepath.Glob(filepath.Join(dir, "d", "*", "*", "*.c9s", ContentsFile))
			if len(contents) != 1 {
				t.Errorf("%d .c9s folders with contents.c9r, want 1", len(contents))
			}
			dirids, _ := filepath.Glob(filepath.Join(dir, "d", "*", "*", dirIDBackup))
			if len(dirids) != 5 {
				t.Errorf("%d dirid.c9r, want 5 (root, sub, deeper, empty, the long-named one)", len(dirids))
			}
			st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(v.Root().Path), dirIDBackup))
			if err != nil || st.Size() != int64(v.Content().Geometry().HeaderLen) {
				t.Errorf("root dirid.c9r: %v, %v", st, err)
			}
			leftovers, _ := filepath.Glob(filepath.Join(dir, "d", "*", "*", tempPrefix+"*"))
			if len(leftovers) != 0 {
				t.Errorf("temporary entries left: %q", leftovers)
			}
		})
	}
}

func TestCreateRefusesAFolderWithSomethingInIt(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x"), nil, 0o600)
	if _, err := Create(context.Background(), dir, []byte("pw"), CreateOptions{ScryptLogN: 10}); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("%v, want ErrNotEmpty", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("Create left %d entries", len(ents))
	}
}

func TestLookupAndResolve(t *testing.T) {
	v, _ := createTestVault(t, SIVGCM)
	defer v.Close()
	sub, err := v.Mkdir(v.Root(), "sub")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.WriteFile(sub, longName, strings.NewReader("x")); err != nil {
		t.Fatal(err)
	}
	e, err := v.Resolve("sub/" + longName)
	if err != nil || e.Kind != KindFile || e.Name != longName || !e.shortened() {
		t.Fatalf("Resolve = %+v, %v", e, err)
	}
	if _, err := v.Resolve("sub/missing"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
	for _, bad := range []string{"", ".", "..", "a/b"} {
		if _, err := v.Lookup(sub, bad); err == nil {
			t.Errorf("Lookup(%q) succeeded", bad)
		}
	}
}

// A writer that does not normalize names (rclone's backend stores a name as it is given, so
// a name in NFD from a Linux or macOS folder stays NFD) leaves entries whose names are not in
// NFC. Each name ReadDir lists must be found by Lookup under that name, next to an entry of the
// NFC spelling, which Lookup finds under its own.
func TestLookupFindsNamesStoredWithoutNormalization(t *testing.T) {
	v, dir := createTestVault(t, SIVGCM)
	defer v.Close()
	nfc, nfd := "r\u00e9sum\u00e9.txt", "re\u0301sume\u0301.txt"
	root := v.Root()
	if _, err := v.WriteFile(root, nfc, strings.NewReader("written as NFC")); err != nil {
		t.Fatal(err)
	}
	// The NFD entry as rclone writes it: its name encrypted as is.
	tmp, err := v.WriteFile(root, "tmp", strings.NewReader("written as NFD"))
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := crypto.SIVSeal(v.names.key, []byte(nfd), []byte(root.ID))
	if err != nil {
		t.Fatal(err)
	}
	rawNFD := nameB64.EncodeToString(sealed) + suffixC9R
	if err := os.Rename(filepath.Join(dir, tmp.node()), filepath.Join(dir, root.Path, rawNFD)); err != nil {
		t.Fatal(err)
	}
	ents, err := v.ReadDir(root)
	if err != nil || len(ents) != 2 {
		t.Fatalf("ReadDir = %+v, %v", ents, err)
	}
	for _, want := range []struct{ name, content string }{{nfc, "written as NFC"}, {nfd, "written as NFD"}} {
		e, err := v.Lookup(root, want.name)
		if err != nil {
			t.Fatalf("Lookup(%+q): %v", want.name, err)
		}
		var b bytes.Buffer
		if _, err := v.ReadFile(e, &b); err != nil || e.Name != want.name || b.String() != want.content {
			t.Fatalf("Lookup(%+q) = %+q holding %q, %v", want.name, e.Name, b.String(), err)
		}
	}
}
