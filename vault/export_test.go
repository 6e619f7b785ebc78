package vault

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

func unlockFixture(t *testing.T, name string) (*fixture, *gocryptfs.Vault) {
	t.Helper()
	f := loadFixture(t, name)
	v, err := gocryptfs.Unlock(context.Background(), f.dir, f.password)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(v.Close)
	return f, v
}

// TestFixturesExport exports every fixture and compares the tree with its
// manifest: paths, types, sizes, sha256, symlink targets, permission bits,
// sparse files staying sparse; and the cipher paths the walk decrypted.
func TestFixturesExport(t *testing.T) {
	for _, name := range fixtureNames(t) {
		t.Run(name, func(t *testing.T) {
			f, v := unlockFixture(t, name)
			// The walk decrypts every cipher path in the manifest.
			cpaths := map[string]string{}
			if err := WalkVolume(context.Background(), v.Volume(), func(n Node) error {
				cpaths[n.Path] = n.CipherPath
				return nil
			}, func(p Problem) { t.Errorf("walk problem: %v", p) }); err != nil {
				t.Fatal(err)
			}
			dest := filepath.Join(t.TempDir(), "out")
			var last FsckProgress
			if err := ExportVolume(context.Background(), v.Volume(), dest, ExportOptions{Progress: func(p FsckProgress) { last = p }}); err != nil {
				t.Fatal(err)
			}
			if last.Done != len(f.manifest.Entries) || last.Total != last.Done {
				t.Errorf("progress ended at %+v, want %d entries", last, len(f.manifest.Entries))
			}
			got := map[string]bool{}
			filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
				if p != dest {
					rel, _ := filepath.Rel(dest, p)
					got[filepath.ToSlash(rel)] = true
				}
				return err
			})
			for _, e := range f.manifest.Entries {
				delete(got, e.Path)
				if cpaths[e.Path] != e.CipherPath {
					t.Errorf("%s: cipher path %q, gocryptfs %q", e.Path, cpaths[e.Path], e.CipherPath)
				}
				checkExported(t, filepath.Join(dest, filepath.FromSlash(e.Path)), e)
			}
			for p := range got {
				t.Errorf("exported %s, which is not in the manifest", p)
			}
			problems, err := FsckVolume(context.Background(), v.Volume(), nil)
			if err != nil || len(problems) != 0 {
				t.Errorf("fsck of a clean fixture: %v %v", problems, err)
			}
		})
	}
}

func checkExported(t *testing.T, p string, e manifestEntry) {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Errorf("%s: %v", e.Path, err)
		return
	}
	wantMode, _ := strconv.ParseUint(e.Mode, 8, 32)
	gotMode := uint64(fi.Mode().Perm())
	if fi.Mode()&fs.ModeSetuid != 0 {
		gotMode |= 0o4000
	}
	if fi.Mode()&fs.ModeSetgid != 0 {
		gotMode |= 0o2000
	}
	if fi.Mode()&fs.ModeSticky != 0 {
		gotMode |= 0o1000
	}
	if gotMode != wantMode {
		t.Errorf("%s: mode %o, want %s", e.Path, gotMode, e.Mode)
	}
	switch e.Type {
	case "dir":
		if !fi.IsDir() {
			t.Errorf("%s: not a directory", e.Path)
		}
	case "symlink":
		target, err := os.Readlink(p)
		if err != nil || target != e.Target {
			t.Errorf("%s: target %q, %v; want %q", e.Path, target, err, e.Target)
		}
	case "file":
		if !fi.Mode().IsRegular() || fi.Size() != e.Size {
			t.Errorf("%s: %v size %d, want %d", e.Path, fi.Mode(), fi.Size(), e.Size)
			return
		}
		fh, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		h := sha256.New()
		io.Copy(h, fh)
		if hex.EncodeToString(h.Sum(nil)) != e.Sha256 {
			t.Errorf("%s: sha256 mismatch", e.Path)
		}
		if e.SparseDataRanges != nil {
			checkSparse(t, fh, e)
		}
	default:
		t.Errorf("%s: manifest type %q", e.Path, e.Type)
	}
}

// checkSparse asserts that every data region of the exported file lies
// within the manifest's data ranges rounded out to 4 KiB blocks.
func checkSparse(t *testing.T, fh *os.File, e manifestEntry) {
	t.Helper()
	fd := int(fh.Fd())
	inRange := func(a, b int64) bool {
		for _, r := range e.SparseDataRanges {
			lo, hi := r[0]/crypto.BlockSize*crypto.BlockSize, (r[1]+crypto.BlockSize-1)/crypto.BlockSize*crypto.BlockSize
			if a >= lo && b <= hi {
				return true
			}
		}
		return false
	}
	var data int64
	for off := int64(0); off < e.Size; {
		start, err := unix.Seek(fd, off, unix.SEEK_DATA)
		if err != nil { // ENXIO: no more data
			break
		}
		end, err := unix.Seek(fd, start, unix.SEEK_HOLE)
		if err != nil {
			t.Fatal(err)
		}
		if !inRange(start, end) {
			t.Errorf("%s: data at [%d,%d) outside the sparse data ranges %v", e.Path, start, end, e.SparseDataRanges)
		}
		data += end - start
		off = end
	}
	var st unix.Stat_t
	unix.Fstat(fd, &st)
	if st.Blocks*512 > 64*1024 {
		t.Errorf("%s: %d bytes allocated, the file is not sparse", e.Path, st.Blocks*512)
	}
	if data == 0 {
		t.Errorf("%s: no data found", e.Path)
	}
}

func TestExportRefusesNonEmpty(t *testing.T) {
	_, v := unlockFixture(t, "gcm-default")
	dest := t.TempDir()
	os.WriteFile(filepath.Join(dest, "x"), nil, 0o644)
	if err := ExportVolume(context.Background(), v.Volume(), dest, ExportOptions{}); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("non-empty destination: %v", err)
	}
}

func TestExportCancelled(t *testing.T) {
	_, v := unlockFixture(t, "gcm-default")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ExportVolume(ctx, v.Volume(), filepath.Join(t.TempDir(), "out"), ExportOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled export: %v", err)
	}
}

// TestExportRefusesCipherDir: export into the vault's own cipherdir, or anywhere inside it,
// would write the plaintext among the cipher files (and into the sync tool's folder). It is
// refused however the destination is spelled (through a symlink, with ".."), and nothing is
// made there.
func TestExportRefusesCipherDir(t *testing.T) {
	f, v := unlockFixture(t, "gcm-default")
	tmp := t.TempDir()
	link := filepath.Join(tmp, "link")
	if err := os.Symlink(f.dir, link); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(f.dir, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, dest := range []string{
		filepath.Join(f.dir, "out"),
		filepath.Join(f.dir, "new", "deeper"),
		sub,
		filepath.Join(link, "out"),
		filepath.Join(link, "sub"),
		link + "/sub/../out",
	} {
		err := ExportVolume(context.Background(), v.Volume(), dest, ExportOptions{})
		if !errors.Is(err, ErrInsideVault) {
			t.Errorf("export to %s: %v, want ErrInsideVault", dest, err)
		}
	}
	for _, name := range []string{"out", "new"} {
		if _, err := os.Lstat(filepath.Join(f.dir, name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s was made in the cipherdir: %v", name, err)
		}
	}
	if entries, _ := os.ReadDir(sub); len(entries) > 0 {
		t.Errorf("export wrote into the cipherdir's sub: %v", entries)
	}
	// Beside the cipherdir is fine, even with a name that starts like it.
	if err := ExportVolume(context.Background(), v.Volume(), f.dir+"-plain", ExportOptions{}); err != nil {
		t.Errorf("export beside the cipherdir: %v", err)
	}
	os.RemoveAll(f.dir + "-plain")
}
