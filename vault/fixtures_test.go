package vault

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/vault/gocryptfs"
)

// The fixtures in testdata/fixtures were made by the real gocryptfs (see
// their manifest.json): cipher.tar holds cipher/, the vault; password its
// password; manifest.json what it must decrypt to.

type manifestEntry struct {
	Path             string
	Type             string
	Mode             string
	Size             int64
	Sha256           string
	Target           string
	CipherPath       string     `json:"cipher_path"`
	SparseDataRanges [][2]int64 `json:"sparse_data_ranges"`
}

type manifest struct {
	InitFlags []string `json:"init_flags"`
	Entries   []manifestEntry
}

type fixture struct {
	name     string
	dir      string // the unpacked cipherdir
	password []byte
	manifest manifest
}

func fixtureNames(t testing.TB) []string {
	t.Helper()
	ents, err := os.ReadDir("testdata/fixtures")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	if len(names) != 7 {
		t.Fatalf("%d fixtures, want 7", len(names))
	}
	return names
}

// loadFixture unpacks fixture name into a fresh temporary directory.
func loadFixture(t testing.TB, name string) *fixture {
	t.Helper()
	src := filepath.Join("testdata/fixtures", name)
	pw, err := os.ReadFile(filepath.Join(src, "password"))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{name: name, password: bytes.TrimRight(pw, "\n")}
	mb, err := os.ReadFile(filepath.Join(src, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(mb, &f.manifest); err != nil {
		t.Fatal(err)
	}
	dest := t.TempDir()
	untar(t, filepath.Join(src, "cipher.tar"), dest)
	f.dir = filepath.Join(dest, "cipher")
	return f
}

// untar extracts a tar file into dest. All-zero 4 KiB runs become holes, so
// sparse cipher files stay sparse as they were in the archive.
func untar(t testing.TB, tarPath, dest string) {
	t.Helper()
	tf, err := os.Open(tarPath)
	if err != nil {
		t.Fatal(err)
	}
	defer tf.Close()
	tr := tar.NewReader(tf)
	type dirMode struct {
		path string
		mode os.FileMode
	}
	var dirs []dirMode
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(h.Name, "..") {
			t.Fatalf("bad tar entry %q", h.Name)
		}
		p := filepath.Join(dest, h.Name)
		mode := os.FileMode(h.Mode) & os.ModePerm
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o700); err != nil {
				t.Fatal(err)
			}
			dirs = append(dirs, dirMode{p, mode})
		case tar.TypeSymlink:
			if err := os.Symlink(h.Linkname, p); err != nil {
				t.Fatal(err)
			}
		case tar.TypeLink:
			if err := os.Link(filepath.Join(dest, h.Linkname), p); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg, tar.TypeGNUSparse:
			out, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 4096)
			var off int64
			for {
				n, err := io.ReadFull(tr, buf)
				if n > 0 {
					if !allZero(buf[:n]) {
						if _, err := out.WriteAt(buf[:n], off); err != nil {
							t.Fatal(err)
						}
					}
					off += int64(n)
				}
				if err == io.EOF || err == io.ErrUnexpectedEOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if err := out.Truncate(off); err != nil {
				t.Fatal(err)
			}
			out.Close()
			if err := os.Chmod(p, mode); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("unexpected tar entry type %c for %s", h.Typeflag, h.Name)
		}
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Chmod(dirs[i].path, dirs[i].mode); err != nil {
			t.Fatal(err)
		}
	}
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// volOf is the unlocked gocryptfs vault v as package vault's Volume (what Folder.Unlock
// gives).
func volOf(v *gocryptfs.Vault) Volume { return gocryptfsVolume{v.Volume()} }

// resolveConflict settles the conflict at p of v as keep says (Volume.Settle).
func resolveConflict(ctx context.Context, v *gocryptfs.Vault, p string, keep Keep) error {
	_, err := volOf(v).Settle(ctx, p, keep)
	return err
}
