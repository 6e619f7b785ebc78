package vault

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/vaulttest"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

// TestGocryptfsReadsOurVaults creates vaults with every cipher gocryptfs
// 2.3 knows (it has no AEGIS) and each name option, fills them offline,
// and checks that gocryptfs -fsck accepts them and that gocryptfs mounts
// show exactly the same tree; then gocryptfs writes a file and vaultui
// reads it back.
func TestGocryptfsReadsOurVaults(t *testing.T) {
	bin := vaulttest.Gocryptfs(t, true)
	src := vaulttest.Tree(t)
	want := vaulttest.ReadTree(t, src)
	for name, opts := range roundTripOptions {
		if opts.Cipher == crypto.AEGIS {
			continue // gocryptfs releases have no AEGIS
		}
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
			passfile := filepath.Join(t.TempDir(), "password")
			os.WriteFile(passfile, append(testPassword, '\n'), 0o600)
			out, err := exec.Command(bin, "-fsck", "-passfile", passfile, dir).CombinedOutput()
			if err != nil {
				t.Fatalf("gocryptfs -fsck: %v\n%s", err, out)
			}
			mnt := t.TempDir()
			out, err = exec.Command(bin, "-passfile", passfile, dir, mnt).CombinedOutput()
			if err != nil {
				t.Fatalf("gocryptfs mount: %v\n%s", err, out)
			}
			mounted := true
			unmount := func() {
				if mounted {
					if out, err := exec.Command("fusermount3", "-u", mnt).CombinedOutput(); err != nil {
						t.Errorf("fusermount3 -u: %v %s", err, out)
					}
					mounted = false
				}
			}
			t.Cleanup(unmount)
			vaulttest.CompareTrees(t, want, vaulttest.ReadTree(t, mnt))
			// gocryptfs writes into our vault; we read it back.
			data := []byte(strings.Repeat("written by gocryptfs\n", 500))
			if err := os.WriteFile(filepath.Join(mnt, "a", "from-gocryptfs.txt"), data, 0o640); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("size-1.bin", filepath.Join(mnt, "a", "gocryptfs-link")); err != nil {
				t.Fatal(err)
			}
			unmount()
			vaulttest.WaitUnmounted(t, mnt)
			problems, err := FsckVolume(context.Background(), v.Volume(), nil)
			if err != nil || len(problems) != 0 {
				t.Fatalf("fsck after gocryptfs wrote: %v %v", problems, err)
			}
			exp := filepath.Join(t.TempDir(), "out")
			if err := ExportVolume(context.Background(), v.Volume(), exp, ExportOptions{}); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(exp, "a", "from-gocryptfs.txt"))
			if err != nil || string(got) != string(data) {
				t.Fatalf("file written by gocryptfs: %v", err)
			}
			if target, err := os.Readlink(filepath.Join(exp, "a", "gocryptfs-link")); err != nil || target != "size-1.bin" {
				t.Fatalf("symlink written by gocryptfs: %q %v", target, err)
			}
		})
	}
}
