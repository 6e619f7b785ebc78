package mountmgr

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/testdeps"
	"github.com/vaultui/vaultui/vault"
	"github.com/vaultui/vaultui/vault/gocryptfs"
	"golang.org/x/sys/unix"
)

// fixturesDir holds the vaults made by real gocryptfs (copied there by the vault package).
const fixturesDir = "../vault/testdata/fixtures"

type manifestEntry struct {
	Path   string `json:"path"`
	Type   string `json:"type"`
	Mode   string `json:"mode"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	Target string `json:"target"`
}

// TestFixturesThroughDaemon mounts every gocryptfs-made fixture through the daemon and checks
// that the mount shows exactly its manifest.
func TestFixturesThroughDaemon(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(fixturesDir, "*", "manifest.json"))
	if len(dirs) == 0 {
		t.Skipf("no fixtures in %s", fixturesDir)
	}
	base := daemonEnv(t)
	c := connect(t)
	for _, mf := range dirs {
		dir := filepath.Dir(mf)
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			var m struct{ Entries []manifestEntry }
			raw, err := os.ReadFile(mf)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			pw, err := os.ReadFile(filepath.Join(dir, "password"))
			if err != nil {
				t.Fatal(err)
			}
			work, _ := os.MkdirTemp(base, name)
			if out, err := exec.Command("tar", "-xpf", filepath.Join(dir, "cipher.tar"), "-C", work).CombinedOutput(); err != nil {
				t.Fatalf("untar: %v %s", err, out)
			}
			mp := filepath.Join(work, "mnt")
			os.Mkdir(mp, 0o700)
			cipherdir := filepath.Join(work, "cipher")
			if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: bytes.TrimRight(pw, "\n"), ReadOnly: true}); err != nil {
				t.Fatalf("mount: %v", err)
			}
			defer func() {
				if err := c.Unmount(ctx(t), mp, false); err != nil {
					t.Errorf("unmount: %v", err)
				}
			}()
			seen := map[string]bool{}
			filepath.WalkDir(mp, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					t.Errorf("walk %s: %v", p, err)
					return nil
				}
				if p != mp {
					rel, _ := filepath.Rel(mp, p)
					seen[rel] = true
				}
				return nil
			})
			for _, e := range m.Entries {
				delete(seen, e.Path)
				p := filepath.Join(mp, e.Path)
				fi, err := os.Lstat(p)
				if err != nil {
					t.Errorf("%s: %v", e.Path, err)
					continue
				}
				if mode, _ := strconv.ParseUint(e.Mode, 8, 32); uint32(fi.Mode().Perm()) != uint32(mode) {
					t.Errorf("%s: mode %o, manifest %s", e.Path, fi.Mode().Perm(), e.Mode)
				}
				switch e.Type {
				case "dir":
					if !fi.IsDir() {
						t.Errorf("%s: not a directory", e.Path)
					}
				case "symlink":
					if target, err := os.Readlink(p); err != nil || target != e.Target || fi.Size() != int64(len(e.Target)) {
						t.Errorf("%s: symlink %q (size %d), %v; manifest %q", e.Path, target, fi.Size(), err, e.Target)
					}
				case "file":
					data, err := os.ReadFile(p)
					sum := sha256.Sum256(data)
					if err != nil || fi.Size() != e.Size || int64(len(data)) != e.Size || hex.EncodeToString(sum[:]) != e.SHA256 {
						t.Errorf("%s: size %d/%d, err %v, sha256 match %v", e.Path, fi.Size(), len(data), err, hex.EncodeToString(sum[:]) == e.SHA256)
					}
				default:
					t.Errorf("%s: unknown manifest type %q", e.Path, e.Type)
				}
			}
			for p := range seen {
				t.Errorf("%s: in the mount but not in the manifest", p)
			}
		})
	}
}

// writeTree creates the same tree under root each time: sizes around block edges, a sparse
// file, long and non-ASCII names, a symlink, a hard link, modes.
func writeTree(t *testing.T, root string) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "docs", "deep", "er"), 0o755))
	for i, size := range []int{0, 1, 4095, 4096, 4097, 3*4096 + 7, 1<<20 + 3} {
		data := make([]byte, size)
		for j := range data {
			data[j] = byte(i*7 + j*13)
		}
		must(os.WriteFile(filepath.Join(root, "docs", fmt.Sprintf("size-%d", size)), data, 0o644))
	}
	must(os.WriteFile(filepath.Join(root, "docs", "deep", "er", strings.Repeat("long name ", 25)+"end"), []byte("long"), 0o600))
	must(os.WriteFile(filepath.Join(root, "Grüße, 世界.txt"), []byte("hello"), 0o640))
	sparse, err := os.Create(filepath.Join(root, "sparse.bin"))
	must(err)
	must(sparse.Truncate(10 << 20))
	_, err = sparse.WriteAt([]byte("middle"), 5<<20+100)
	must(err)
	must(sparse.Close())
	must(os.Symlink("docs/size-1", filepath.Join(root, "link")))
	must(os.Link(filepath.Join(root, "docs", "size-4097"), filepath.Join(root, "hardlink")))
	must(os.Mkdir(filepath.Join(root, "empty"), 0o700))
}

// treeSnapshot describes every entry of a tree (type, mode, content hash, symlink target).
func treeSnapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case fi.IsDir():
			out[rel] = fmt.Sprintf("dir %o", fi.Mode().Perm())
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "symlink " + target
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = fmt.Sprintf("file %o %d %x", fi.Mode().Perm(), len(data), sha256.Sum256(data))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking %s: %v", root, err)
	}
	return out
}

func diffTrees(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if got[k] != want[k] {
			t.Errorf("%s: %s: got %q, want %q", what, k, got[k], want[k])
		}
	}
}

// vaultVariant is a kind of vault the interop tests make.
type vaultVariant struct {
	name string
	opts vault.CreateOptions
}

// gocryptfsVariants are the vaults gocryptfs 2.3 (CI's) can open: every cipher but AEGIS,
// with encrypted and with plaintext names.
var gocryptfsVariants = []vaultVariant{
	{"aes-gcm", vault.CreateOptions{Cipher: crypto.AESGCM}},
	{"xchacha", vault.CreateOptions{Cipher: crypto.XChaCha}},
	{"aes-siv", vault.CreateOptions{Cipher: crypto.AESSIV}},
	{"plaintextnames", vault.CreateOptions{Cipher: crypto.AESGCM, PlaintextNames: true}},
}

// TestWrittenTreeReadsInGocryptfs writes a tree through our mount and reads it back through
// gocryptfs, the reference implementation.
func TestWrittenTreeReadsInGocryptfs(t *testing.T) {
	testdeps.Need(t, testdeps.Gocryptfs)
	const gocryptfs = "gocryptfs"
	base := daemonEnv(t)
	ref := filepath.Join(base, "ref")
	os.Mkdir(ref, 0o755)
	writeTree(t, ref)
	want := treeSnapshot(t, ref)
	c := connect(t)
	// gocryptfs 2.3 has no AEGIS; those vaults are checked by fsck and export instead.
	variants := append(gocryptfsVariants[:len(gocryptfsVariants):len(gocryptfsVariants)],
		vaultVariant{"deterministic", vault.CreateOptions{Cipher: crypto.AESGCM, DeterministicNames: true}},
		vaultVariant{"longnamemax", vault.CreateOptions{Cipher: crypto.AESGCM, LongNameMax: 62}})
	for _, variant := range variants {
		cipher := variant.name
		t.Run(variant.name, func(t *testing.T) {
			cipherdir, mp, pw := newVaultWith(t, base, variant.opts)
			if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: append([]byte(nil), pw...)}); err != nil {
				t.Fatal(err)
			}
			writeTree(t, mp)
			diffTrees(t, "through our mount", treeSnapshot(t, mp), want)
			if err := c.Unmount(ctx(t), mp, false); err != nil {
				t.Fatal(err)
			}
			pf := filepath.Join(base, "pw-"+string(cipher))
			os.WriteFile(pf, pw, 0o600)
			if out, err := exec.Command(gocryptfs, "-fsck", "-q", "-passfile", pf, cipherdir).CombinedOutput(); err != nil {
				t.Errorf("gocryptfs -fsck: %v: %s", err, out)
			}
			gmp := filepath.Join(base, "g-"+string(cipher))
			os.Mkdir(gmp, 0o700)
			out, err := exec.Command(gocryptfs, "-q", "-ro", "-passfile", pf, cipherdir, gmp).CombinedOutput()
			if err != nil {
				t.Fatalf("gocryptfs mount: %v: %s", err, out)
			}
			defer func() {
				for i := 0; i < 50; i++ {
					if exec.Command("fusermount3", "-u", gmp).Run() == nil {
						return
					}
					time.Sleep(100 * time.Millisecond)
				}
				detach(gmp)
			}()
			diffTrees(t, "through gocryptfs", treeSnapshot(t, gmp), want)
		})
	}
}

// TestWrittenTreeFsckAndExport: a tree written through the mount, with every cipher, passes
// the vault package's fsck and exports identically.
func TestWrittenTreeFsckAndExport(t *testing.T) {
	base := daemonEnv(t)
	c := connect(t)
	for _, cipher := range []crypto.CipherID{crypto.AEGIS, crypto.AESGCM, crypto.XChaCha, crypto.AESSIV} {
		t.Run(string(cipher), func(t *testing.T) {
			cipherdir, mp, pw := newVault(t, base, cipher)
			if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: append([]byte(nil), pw...)}); err != nil {
				t.Fatal(err)
			}
			ref, _ := os.MkdirTemp(base, "ref")
			for _, root := range []string{ref, mp} {
				writeTree(t, root)
				// Shrink one file and grow another, so more than fresh files are checked.
				if err := os.Truncate(filepath.Join(root, "docs", "size-1048579"), 5000); err != nil {
					t.Fatal(err)
				}
				if err := os.Truncate(filepath.Join(root, "docs", "size-4097"), 3<<20+1); err != nil {
					t.Fatal(err)
				}
			}
			want := treeSnapshot(t, ref)
			if err := c.Unmount(ctx(t), mp, false); err != nil {
				t.Fatal(err)
			}
			v, err := gocryptfs.Unlock(context.Background(), cipherdir, pw)
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			problems, err := vault.FsckVolume(ctx(t), v.Volume(), nil)
			if err != nil || len(problems) != 0 {
				t.Fatalf("fsck: %v, problems %+v", err, problems)
			}
			dest := filepath.Join(base, "export-"+string(cipher))
			if err := vault.ExportVolume(ctx(t), v.Volume(), dest, vault.ExportOptions{}); err != nil {
				t.Fatalf("export: %v", err)
			}
			diffTrees(t, "export", treeSnapshot(t, dest), want)
		})
	}
}

// TestXattrInterop: extended attributes set through our mount read back through gocryptfs,
// and the other way round, for every cipher gocryptfs 2.3 has; AEGIS vaults across two of our
// mounts.
func TestXattrInterop(t *testing.T) {
	const gocryptfs = "gocryptfs"
	base := daemonEnv(t)
	c := connect(t)
	variants := append(gocryptfsVariants[:len(gocryptfsVariants):len(gocryptfsVariants)],
		vaultVariant{"aegis", vault.CreateOptions{Cipher: crypto.AEGIS}})
	buf := make([]byte, 4096)
	get := func(t *testing.T, p, name string) string {
		t.Helper()
		n, err := unix.Getxattr(p, name, buf)
		if err != nil {
			t.Fatalf("getxattr %s %s: %v", p, name, err)
		}
		return string(buf[:n])
	}
	for _, variant := range variants {
		t.Run(variant.name, func(t *testing.T) {
			cipherdir, mp, pw := newVaultWith(t, base, variant.opts)
			mount := func() {
				t.Helper()
				if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: append([]byte(nil), pw...)}); err != nil {
					t.Fatal(err)
				}
			}
			mount()
			os.WriteFile(filepath.Join(mp, "f"), []byte("data"), 0o644)
			os.Mkdir(filepath.Join(mp, "d"), 0o755)
			for _, p := range []string{"f", "d"} {
				if err := unix.Setxattr(filepath.Join(mp, p), "user.ours", []byte("set by vaultui "+p), 0); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.Unmount(ctx(t), mp, false); err != nil {
				t.Fatal(err)
			}
			if variant.opts.Cipher != crypto.AEGIS {
				testdeps.Need(t, testdeps.Gocryptfs)
				pf := filepath.Join(base, "pw-x-"+variant.name)
				os.WriteFile(pf, pw, 0o600)
				gmp := filepath.Join(base, "gx-"+variant.name)
				os.Mkdir(gmp, 0o700)
				if out, err := exec.Command(gocryptfs, "-q", "-passfile", pf, cipherdir, gmp).CombinedOutput(); err != nil {
					t.Fatalf("gocryptfs mount: %v: %s", err, out)
				}
				for _, p := range []string{"f", "d"} {
					if got := get(t, filepath.Join(gmp, p), "user.ours"); got != "set by vaultui "+p {
						t.Errorf("gocryptfs reads %s's user.ours as %q", p, got)
					}
				}
				if err := unix.Setxattr(filepath.Join(gmp, "f"), "user.theirs", []byte("set by gocryptfs"), 0); err != nil {
					t.Fatal(err)
				}
				for i := 0; exec.Command("fusermount3", "-u", gmp).Run() != nil; i++ {
					if i == 50 {
						detach(gmp)
						break
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
			mount()
			defer c.Unmount(ctx(t), mp, false)
			if got := get(t, filepath.Join(mp, "d"), "user.ours"); got != "set by vaultui d" {
				t.Errorf("remounted: d's user.ours is %q", got)
			}
			if variant.opts.Cipher != crypto.AEGIS {
				if got := get(t, filepath.Join(mp, "f"), "user.theirs"); got != "set by gocryptfs" {
					t.Errorf("vaultui reads user.theirs as %q", got)
				}
			}
		})
	}
}
