package vault

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/vaulttest"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

var roundTripOptions = map[string]CreateOptions{
	"gcm":            {},
	"xchacha":        {Cipher: crypto.XChaCha},
	"siv":            {Cipher: crypto.AESSIV},
	"aegis":          {Cipher: crypto.AEGIS},
	"plaintextnames": {PlaintextNames: true},
	"deterministic":  {DeterministicNames: true},
	"longnamemax":    {LongNameMax: 62},
	"xchacha-plain":  {Cipher: crypto.XChaCha, PlaintextNames: true},
}

// TestRoundTrip creates a vault with each cipher and option, imports a tree,
// checks it with Fsck and exports it back unchanged, sparse file included.
func TestRoundTrip(t *testing.T) {
	src := vaulttest.Tree(t)
	want := vaulttest.ReadTree(t, src)
	for name, opts := range roundTripOptions {
		t.Run(name, func(t *testing.T) {
			dir, _ := createTest(t, opts)
			v, err := gocryptfs.Unlock(context.Background(), dir, testPassword)
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			if err := vaulttest.Import(context.Background(), v, src); err != nil {
				t.Fatal(err)
			}
			checkCipherdirLayout(t, v)
			problems, err := FsckVolume(context.Background(), v.Volume(), nil)
			if err != nil || len(problems) != 0 {
				t.Fatalf("fsck: %v %v", problems, err)
			}
			out := filepath.Join(t.TempDir(), "out")
			if err := ExportVolume(context.Background(), v.Volume(), out, ExportOptions{}); err != nil {
				t.Fatal(err)
			}
			vaulttest.CompareTrees(t, want, vaulttest.ReadTree(t, out))
			var st = mustStatBlocks(t, filepath.Join(out, "sparse.bin"))
			if st > 64*1024 {
				t.Errorf("exported sparse file allocates %d bytes", st)
			}
		})
	}
}

// checkCipherdirLayout checks the on-disk rules of docs/FORMAT.md in a vault
// filled by Import: diriv files (16 bytes, 0440) exactly where names are
// per-directory encrypted, .name files beside long names, sizes that map to
// plaintext sizes.
func checkCipherdirLayout(t *testing.T, v *gocryptfs.Vault) {
	t.Helper()
	wantDirIV := v.Names != nil && !v.Config.DeterministicNames()
	filepath.WalkDir(v.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Lstat(p)
		name := d.Name()
		switch {
		case d.IsDir():
			_, err := os.Stat(filepath.Join(p, crypto.DirIVName))
			if (err == nil) != wantDirIV {
				t.Errorf("%s: diriv present=%v, want %v", p, err == nil, wantDirIV)
			}
		case name == crypto.DirIVName:
			if fi.Size() != 16 || fi.Mode().Perm() != 0o440 {
				t.Errorf("%s: %v, %d bytes", p, fi.Mode(), fi.Size())
			}
		case crypto.IsLongNameFile(name):
			if fi.Mode().Perm() != 0o400 {
				t.Errorf("%s: mode %v", p, fi.Mode())
			}
		case crypto.IsLongName(name):
			if _, err := os.Stat(p + crypto.LongNameSuffix); err != nil {
				t.Errorf("%s: %v", p, err)
			}
		case fi.Mode().IsRegular() && name != crypto.ConfName:
			if _, err := v.Content.PlainSize(uint64(fi.Size())); err != nil {
				t.Errorf("%s: %v", p, err)
			}
		}
		if v.Names != nil && len(name) > 255 {
			t.Errorf("%s: stored name longer than 255", p)
		}
		if lim := v.Names; lim != nil && !d.IsDir() && !crypto.IsLongName(name) && !crypto.IsLongNameFile(name) &&
			name != crypto.DirIVName && name != crypto.ConfName && len(name) > lim.LongNameMax() {
			t.Errorf("%s: %d-byte name over the limit %d", p, len(name), lim.LongNameMax())
		}
		return nil
	})
}

func mustStatBlocks(t *testing.T, p string) int64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return allocated(fi)
}

func TestImportRefusesNonEmptyVault(t *testing.T) {
	dir, _ := createTest(t, CreateOptions{})
	v, _ := gocryptfs.Unlock(context.Background(), dir, testPassword)
	defer v.Close()
	os.WriteFile(filepath.Join(dir, "x"), nil, 0o644)
	if err := vaulttest.Import(context.Background(), v, t.TempDir()); err == nil {
		t.Fatal("import into a non-empty vault")
	}
}
