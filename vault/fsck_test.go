package vault

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/format"
	"github.com/vaultui/vaultui/vault/gocryptfs"
	"github.com/vaultui/vaultui/vault/layout"
)

func (f *fixture) cipherPath(t *testing.T, plain string) string {
	t.Helper()
	for _, e := range f.manifest.Entries {
		if e.Path == plain {
			return e.CipherPath
		}
	}
	t.Fatalf("%s not in manifest", plain)
	return ""
}

func flipByte(t *testing.T, p string, off int64) {
	t.Helper()
	os.Chmod(p, 0o600)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if off < 0 {
		off += int64(len(b))
	}
	b[off] ^= 0x01
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestFsckFindsExactlyTheDamage damages a fresh copy of a fixture in one
// place each time and checks that Fsck reports exactly that one problem.
func TestFsckFindsExactlyTheDamage(t *testing.T) {
	cases := []struct {
		name   string
		damage func(t *testing.T, f *fixture) (cipherPath string)
		want   Problem // Path, Kind, FirstBlock, LastBlock compared; CipherPath from damage
	}{
		{"block", func(t *testing.T, f *fixture) string {
			cp := f.cipherPath(t, "size-131089.bin")
			// Block 5 starts at 18 + 5*4128; flip a byte in its ciphertext.
			flipByte(t, filepath.Join(f.dir, cp), 18+5*4128+100)
			return cp
		}, Problem{Path: "size-131089.bin", Kind: format.KindContent, FirstBlock: 5, LastBlock: 5}},
		{"last short block", func(t *testing.T, f *fixture) string {
			cp := f.cipherPath(t, "size-131089.bin")
			flipByte(t, filepath.Join(f.dir, cp), -1)
			return cp
		}, Problem{Path: "size-131089.bin", Kind: format.KindContent, FirstBlock: 32, LastBlock: 32}},
		{"header file ID", func(t *testing.T, f *fixture) string {
			cp := f.cipherPath(t, "size-8192.bin")
			flipByte(t, filepath.Join(f.dir, cp), 7)
			return cp
		}, Problem{Path: "size-8192.bin", Kind: format.KindHeader, FirstBlock: -1, LastBlock: -1}},
		{"header version", func(t *testing.T, f *fixture) string {
			cp := f.cipherPath(t, "size-4097.bin")
			flipByte(t, filepath.Join(f.dir, cp), 1)
			return cp
		}, Problem{Path: "size-4097.bin", Kind: format.KindHeader, FirstBlock: -1, LastBlock: -1}},
		{"name", func(t *testing.T, f *fixture) string {
			cp := f.cipherPath(t, "a/top-of-a.txt")
			dir, base := filepath.Split(cp)
			b := []byte(base)
			b[3] ^= 0x01 // still base64url, decrypts to garbage
			if err := os.Rename(filepath.Join(f.dir, cp), filepath.Join(f.dir, dir, string(b))); err != nil {
				t.Fatal(err)
			}
			return dir + string(b)
		}, Problem{Path: "a", Kind: format.KindName, FirstBlock: -1, LastBlock: -1}},
		{"long name file", func(t *testing.T, f *fixture) string {
			var cp string
			for _, e := range f.manifest.Entries {
				if strings.HasPrefix(e.Path, "long200-") {
					cp = e.CipherPath
				}
			}
			if !crypto.IsLongName(cp) {
				t.Fatalf("long200 entry stored as %q", cp)
			}
			flipByte(t, filepath.Join(f.dir, cp+crypto.LongNameSuffix), 10)
			return cp
		}, Problem{Path: "", Kind: format.KindLongName, FirstBlock: -1, LastBlock: -1}},
		{"symlink", func(t *testing.T, f *fixture) string {
			cp := f.cipherPath(t, "link-relative")
			p := filepath.Join(f.dir, cp)
			target, _ := os.Readlink(p)
			b := []byte(target)
			b[len(b)-5] ^= 0x01
			os.Remove(p)
			os.Symlink(string(b), p)
			return cp
		}, Problem{Path: "link-relative", Kind: format.KindSymlink, FirstBlock: -1, LastBlock: -1}},
		{"impossible size", func(t *testing.T, f *fixture) string {
			cp := f.cipherPath(t, "size-4097.bin")
			// Header, one full block, then 10 bytes: less than a block's overhead.
			if err := os.Truncate(filepath.Join(f.dir, cp), 18+4128+10); err != nil {
				t.Fatal(err)
			}
			return cp
		}, Problem{Path: "size-4097.bin", Kind: format.KindSize, FirstBlock: -1, LastBlock: -1}},
		{"shorter than its header", func(t *testing.T, f *fixture) string {
			cp := f.cipherPath(t, "size-4097.bin")
			// Not empty, and not even a whole header: damage, not an empty file.
			if err := os.Truncate(filepath.Join(f.dir, cp), 5); err != nil {
				t.Fatal(err)
			}
			return cp
		}, Problem{Path: "size-4097.bin", Kind: format.KindSize, FirstBlock: -1, LastBlock: -1}},
		{"missing diriv", func(t *testing.T, f *fixture) string {
			cp := f.cipherPath(t, "a/b/c")
			p := filepath.Join(f.dir, cp, crypto.DirIVName)
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			return cp + "/" + crypto.DirIVName
		}, Problem{Path: "a/b/c", Kind: format.KindDirIV, FirstBlock: -1, LastBlock: -1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := loadFixture(t, "gcm-default")
			cp := c.damage(t, f)
			v, err := gocryptfs.Unlock(context.Background(), f.dir, f.password)
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			var calls int
			problems, err := FsckVolume(context.Background(), v.Volume(), func(FsckProgress) { calls++ })
			if err != nil {
				t.Fatal(err)
			}
			if len(problems) != 1 {
				t.Fatalf("%d problems, want exactly 1: %v", len(problems), problems)
			}
			p := problems[0]
			if p.Path != c.want.Path || p.Kind != c.want.Kind || p.CipherPath != cp ||
				p.FirstBlock != c.want.FirstBlock || p.LastBlock != c.want.LastBlock || p.Detail == "" {
				t.Fatalf("got %+v\nwant %+v with cipher path %s", p, c.want, cp)
			}
			if calls == 0 {
				t.Error("no progress reported")
			}
			t.Logf("%s", p)
			// Export goes on past the damage and says so.
			err = ExportVolume(context.Background(), v.Volume(), filepath.Join(t.TempDir(), "out"), ExportOptions{})
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("export of a damaged vault: %v", err)
			}
		})
	}
}

func TestFsckCancelled(t *testing.T) {
	_, v := unlockFixture(t, "gcm-default")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := FsckVolume(ctx, v.Volume(), nil); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}

// TestFsckIgnoresConfigLeftovers: the temporary and backup configs that
// gocryptfs and vaultui leave at the root are not vault content.
func TestFsckIgnoresConfigLeftovers(t *testing.T) {
	f, v := unlockFixture(t, "gcm-default")
	for _, n := range []string{crypto.ConfName + ".tmp", crypto.ConfName + ".bak"} {
		os.WriteFile(filepath.Join(f.dir, n), []byte("{}"), 0o400)
	}
	var last FsckProgress
	problems, err := FsckVolume(context.Background(), v.Volume(), func(p FsckProgress) { last = p })
	if err != nil || len(problems) != 0 {
		t.Fatalf("%v %v", problems, err)
	}
	if last.Done != len(f.manifest.Entries) || last.Total != last.Done {
		t.Errorf("progress %+v, want %d entries", last, len(f.manifest.Entries))
	}
}

// TestFsckTempDirIsANote: a temporary directory that a crash left in the middle of a mount's
// mkdir or rmdir (layout.MakeDir) holds no content: fsck notes it, it is not damage.
func TestFsckTempDirIsANote(t *testing.T) {
	f, v := unlockFixture(t, "gcm-default")
	tmp := filepath.Join(f.dir, "gocryptfs.vaultui-tmp.0123456789abcdef")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(tmp, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = layout.WriteDirIV(fd)
	unix.Close(fd)
	if err != nil {
		t.Fatal(err)
	}
	problems, err := FsckVolume(context.Background(), v.Volume(), nil)
	if err != nil || len(problems) != 1 || problems[0].Kind != format.KindTemp || problems[0].Damage() {
		t.Fatalf("fsck: %v, problems %+v", err, problems)
	}
}

// TestSpecialFilesAreValid: FIFOs, sockets and device nodes, which gocryptfs and a vaultui mount
// create with only their names encrypted, pass fsck and come back from Export.
func TestSpecialFilesAreValid(t *testing.T) {
	f, v := unlockFixture(t, "gcm-default")
	iv, err := v.DirIV(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	specials := map[string]uint32{"fifo": syscall.S_IFIFO | 0o640, "sock": syscall.S_IFSOCK | 0o755}
	if os.Geteuid() == 0 {
		specials["null"] = syscall.S_IFCHR | 0o666
	}
	for name, mode := range specials {
		stored, _, _, err := v.Names.StoredName(name, iv)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(f.dir, stored)
		if err := syscall.Mknod(p, mode, int(unix.Mkdev(1, 3))); err != nil {
			t.Fatalf("mknod %s: %v", name, err)
		}
		if err := os.Chmod(p, os.FileMode(mode&0o777)); err != nil { // past the umask
			t.Fatal(err)
		}
	}
	problems, err := FsckVolume(context.Background(), v.Volume(), nil)
	if err != nil || len(problems) != 0 {
		t.Fatalf("fsck: %v, problems %+v", err, problems)
	}
	dest := filepath.Join(t.TempDir(), "out")
	if err := ExportVolume(context.Background(), v.Volume(), dest, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, mode := range specials {
		var st syscall.Stat_t
		if err := syscall.Lstat(filepath.Join(dest, name), &st); err != nil {
			t.Errorf("%s not exported: %v", name, err)
			continue
		}
		if st.Mode != mode {
			t.Errorf("%s exported with mode %o, want %o", name, st.Mode, mode)
		}
	}
}
