package convert

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/vaulttest"
	"github.com/vaultui/vaultui/vault"
	"github.com/vaultui/vaultui/vault/format"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

// makeConvertVault creates a vault with opts holding vaulttest.Tree's tree plus extended attributes
// (on a file, a directory and the root; one empty value) and returns it unlocked.
func makeConvertVault(t *testing.T, opts vault.CreateOptions, src string) *gocryptfs.Vault {
	t.Helper()
	dir, _ := createTest(t, opts)
	v, err := gocryptfs.Unlock(context.Background(), dir, testPassword)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	if err := vaulttest.Import(context.Background(), v, src); err != nil {
		t.Fatal(err)
	}
	set := func(cpath, name, value string) {
		t.Helper()
		enc, err := v.XattrNames.EncryptXattrName(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := unix.Lsetxattr(cpath, crypto.XattrPrefix+enc, v.Content.EncryptXattrValue([]byte(value)), 0); err != nil {
			if errors.Is(err, unix.ENOTSUP) {
				t.Skip("the temp directory's file system has no user extended attributes")
			}
			t.Fatal(err)
		}
	}
	paths := cipherPaths(t, v)
	set(filepath.Join(dir, paths["size-4096.bin"]), "user.comment", "a block's worth")
	set(filepath.Join(dir, paths["size-4096.bin"]), "user.empty", "")
	set(filepath.Join(dir, paths["a/b"]), "user.dir", strings.Repeat("x", 1000))
	set(dir, "user.root", "root attribute")
	return v
}

// cipherPaths maps the vault's plaintext paths to their cipher paths.
func cipherPaths(t *testing.T, v *gocryptfs.Vault) map[string]string {
	t.Helper()
	m := map[string]string{}
	if err := vault.WalkVolume(context.Background(), v.Volume(), func(n vault.Node) error {
		m[n.Path] = n.CipherPath
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	return m
}

// vaultXattrs returns the decrypted extended attributes of every entry and the root.
func vaultXattrs(t *testing.T, v *gocryptfs.Vault) map[string]string {
	t.Helper()
	m := map[string]string{}
	add := func(p string, attrs map[string][]byte) {
		for k, val := range attrs {
			m[p+"\x00"+k] = string(val)
		}
	}
	fail := func(p vault.Problem) { t.Errorf("xattr problem: %v", p) }
	root := map[string][]byte{}
	buf := make([]byte, 1<<16)
	n, _ := unix.Llistxattr(v.Dir, buf)
	for _, stored := range strings.Split(string(buf[:max(n, 0)]), "\x00") {
		enc, ours := strings.CutPrefix(stored, crypto.XattrPrefix)
		if !ours {
			continue
		}
		val := make([]byte, 1<<16)
		vn, err := unix.Lgetxattr(v.Dir, stored, val)
		if err != nil {
			t.Fatal(err)
		}
		name, err := v.XattrNames.DecryptXattrName(enc)
		if err != nil {
			t.Fatal(err)
		}
		if root[name], err = v.Content.DecryptXattrValue(val[:vn]); err != nil {
			t.Fatal(err)
		}
	}
	add("/", root)
	vol := v.Volume()
	vault.WalkVolume(context.Background(), vol, func(n vault.Node) error {
		add(n.Path, vol.Xattrs(n, fail))
		return nil
	}, nil)
	return m
}

// cipherSnapshot describes every entry of a cipherdir byte for byte: type, mode, mtime, and
// the content or target. An old vault that must be untouched has the same snapshot after.
func cipherSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		desc := fmt.Sprintf("%v %d.%d", fi.Mode(), st.Mtim.Sec, st.Mtim.Nsec)
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			desc += " " + hex.EncodeToString(sum[:])
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			desc += " -> " + target
		}
		m[rel] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func sameSnapshot(t *testing.T, what string, want, got map[string]string) {
	t.Helper()
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			t.Errorf("%s: %s: got %q, want %q", what, k, g, w)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: unexpected %s", what, k)
		}
	}
}

// nameFiles lists the cipher-level names of a vault with the content of the files that hold
// names (gocryptfs.diriv and .name files), which a conversion keeps byte for byte.
func nameFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == crypto.ConfName {
			return nil
		}
		m[rel] = ""
		if d.Name() == crypto.DirIVName || crypto.IsLongNameFile(d.Name()) {
			b, _ := os.ReadFile(p)
			m[rel] = string(b)
		}
		return nil
	})
	return m
}

// checkConvertedVault checks that the vault in dir uses cipher to and holds exactly want
// (plaintext tree) and xattrs, with the names of names.
func checkConvertedVault(t *testing.T, dir string, to crypto.CipherID, want map[string]vaulttest.Entry, xattrs, names map[string]string) {
	t.Helper()
	v, err := gocryptfs.Unlock(context.Background(), dir, testPassword)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if got := v.Config.Cipher(); got != to {
		t.Fatalf("%s uses %s, want %s", dir, got, to)
	}
	problems, err := vault.FsckVolume(context.Background(), v.Volume(), nil)
	if err != nil || len(problems) != 0 {
		t.Fatalf("fsck of %s: %v %v", dir, problems, err)
	}
	out := filepath.Join(t.TempDir(), "out")
	if err := vault.ExportVolume(context.Background(), v.Volume(), out, vault.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	vaulttest.CompareTrees(t, want, vaulttest.ReadTree(t, out))
	sameSnapshot(t, "xattrs", xattrs, vaultXattrs(t, v))
	sameSnapshot(t, "names", names, nameFiles(t, dir))
}

// convertPairs lists the conversions the round trip runs: every pair of ciphers with
// default options, and each name option with a few pairs.
func convertPairs() []struct {
	name string
	opts vault.CreateOptions
	to   crypto.CipherID
} {
	var out []struct {
		name string
		opts vault.CreateOptions
		to   crypto.CipherID
	}
	add := func(name string, opts vault.CreateOptions, to crypto.CipherID) {
		out = append(out, struct {
			name string
			opts vault.CreateOptions
			to   crypto.CipherID
		}{name, opts, to})
	}
	for _, from := range crypto.Ciphers {
		for _, to := range crypto.Ciphers {
			if from != to {
				add(fmt.Sprintf("%s-to-%s", from, to), vault.CreateOptions{Cipher: from}, to)
			}
		}
	}
	add("plaintextnames-aegis-to-gcm", vault.CreateOptions{Cipher: crypto.AEGIS, PlaintextNames: true}, crypto.AESGCM)
	add("plaintextnames-gcm-to-xchacha", vault.CreateOptions{PlaintextNames: true}, crypto.XChaCha)
	add("deterministic-aegis-to-gcm", vault.CreateOptions{Cipher: crypto.AEGIS, DeterministicNames: true}, crypto.AESGCM)
	add("deterministic-gcm-to-siv", vault.CreateOptions{DeterministicNames: true}, crypto.AESSIV)
	add("longnamemax-aegis-to-gcm", vault.CreateOptions{Cipher: crypto.AEGIS, LongNameMax: 62}, crypto.AESGCM)
	add("longnamemax-siv-to-aegis", vault.CreateOptions{Cipher: crypto.AESSIV, LongNameMax: 62}, crypto.AEGIS)
	return out
}

// TestConvertRoundTrip converts vaults between every pair of ciphers (and with each name
// option): the result has the new cipher, passes fsck, holds the same files, symlinks,
// attributes and names (byte for byte), and the old vault is kept unchanged. Results that
// gocryptfs 2.3 knows are checked with gocryptfs -fsck and, where FUSE works, a gocryptfs
// mount.
func TestConvertRoundTrip(t *testing.T) {
	src := vaulttest.Tree(t)
	want := vaulttest.ReadTree(t, src)
	for _, tc := range convertPairs() {
		t.Run(tc.name, func(t *testing.T) {
			v := makeConvertVault(t, tc.opts, src)
			xattrs, names := vaultXattrs(t, v), nameFiles(t, v.Dir)
			before := cipherSnapshot(t, v.Dir)
			var last Progress
			var phases []string
			res, err := Run(context.Background(), v.Dir, testPassword, Options{To: tc.to,
				Progress: func(p Progress) {
					if p.Done < last.Done && p.Phase == last.Phase {
						t.Errorf("progress went back: %+v after %+v", p, last)
					}
					if len(phases) == 0 || phases[len(phases)-1] != p.Phase {
						phases = append(phases, p.Phase)
					}
					last = p
				}})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(phases, []string{PhaseCopy, PhaseCheck, PhaseSwap}) {
				t.Errorf("phases %v", phases)
			}
			from := crypto.CipherID(res.From.Cipher)
			if res.Swap != SwapExchange || res.From.Format.ID != "gocryptfs" || res.To != (Side{res.From.Format, string(tc.to)}) ||
				from != tc.opts.Cipher && !(tc.opts.Cipher == "" && from == crypto.AESGCM) || res.MasterKey != nil {
				t.Errorf("result %+v", res)
			}
			checkConvertedVault(t, v.Dir, tc.to, want, xattrs, names)
			// The old vault is kept, unchanged, beside.
			if res.OldDir != v.Dir+".old-"+string(from) {
				t.Errorf("old vault kept at %s", res.OldDir)
			}
			sameSnapshot(t, "old vault", before, cipherSnapshot(t, res.OldDir))
			if _, err := os.Lstat(v.Dir + workSuffix); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("work directory left: %v", err)
			}
			if tc.to != crypto.AEGIS {
				gocryptfsCheck(t, v.Dir, want)
			}
		})
	}
}

// gocryptfsCheck runs gocryptfs -fsck on the vault in dir, mounts it with gocryptfs and
// compares the tree with want.
func gocryptfsCheck(t *testing.T, dir string, want map[string]vaulttest.Entry) {
	t.Helper()
	bin := vaulttest.Gocryptfs(t, true)
	passfile := filepath.Join(t.TempDir(), "password")
	os.WriteFile(passfile, append(testPassword, '\n'), 0o600)
	out, err := exec.Command(bin, "-fsck", "-passfile", passfile, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("gocryptfs -fsck: %v\n%s", err, out)
	}
	mnt := t.TempDir()
	if out, err := exec.Command(bin, "-passfile", passfile, dir, mnt).CombinedOutput(); err != nil {
		t.Fatalf("gocryptfs mount: %v\n%s", err, out)
	}
	defer func() {
		exec.Command("fusermount3", "-u", mnt).Run()
		vaulttest.WaitUnmounted(t, mnt)
	}()
	vaulttest.CompareTrees(t, want, vaulttest.ReadTree(t, mnt))
	if v, err := unixGetxattr(filepath.Join(mnt, "size-4096.bin"), "user.comment"); err != nil || v != "a block's worth" {
		t.Errorf("gocryptfs reads the attribute as %q, %v", v, err)
	}
}

func unixGetxattr(p, name string) (string, error) {
	buf := make([]byte, 1024)
	n, err := unix.Getxattr(p, name, buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// TestConvertRefuses checks what Run refuses before changing anything: the cipher the vault
// already uses, a mounted vault, and a place for the old vault that is taken.
func TestConvertRefuses(t *testing.T) {
	dir, _ := createTest(t, vault.CreateOptions{Cipher: crypto.AEGIS})
	os.WriteFile(filepath.Join(t.TempDir(), "x"), nil, 0o600)
	before := cipherSnapshot(t, dir)
	check := func(what string, opts Options, want error, wantText string) {
		t.Helper()
		_, err := Run(context.Background(), dir, testPassword, opts)
		if err == nil || want != nil && !errors.Is(err, want) || !strings.Contains(err.Error(), wantText) {
			t.Errorf("%s: got %v, want %v containing %q", what, err, want, wantText)
		}
		sameSnapshot(t, what, before, cipherSnapshot(t, dir))
		if _, err := os.Lstat(dir + workSuffix); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: work directory left", what)
		}
	}
	check("same cipher", Options{To: crypto.AEGIS}, nil, "already uses AEGIS-256X2")
	check("mounted", Options{To: crypto.AESGCM, MountedAt: func(d string) string {
		if d == dir {
			return "/mnt/work"
		}
		return ""
	}}, ErrMounted, "/mnt/work")
	taken := t.TempDir()
	check("keep taken", Options{To: crypto.AESGCM, KeepOld: taken}, nil, "already exists")
	check("keep inside", Options{To: crypto.AESGCM, KeepOld: filepath.Join(dir, "old")}, nil, "inside the vault")
	// A pair that would change the names (vault.Folder.PlanReseal: TestResealPreHKDF) is
	// refused by the format.
}

// TestConvertWrongPassword: a wrong password changes nothing.
func TestConvertWrongPassword(t *testing.T) {
	dir, _ := createTest(t, vault.CreateOptions{})
	before := cipherSnapshot(t, dir)
	if _, err := Run(context.Background(), dir, []byte("wrong"), Options{To: crypto.AEGIS}); !errors.Is(err, vault.ErrWrongPassword) {
		t.Fatalf("got %v", err)
	}
	sameSnapshot(t, "after a wrong password", before, cipherSnapshot(t, dir))
}

// TestConvertDamaged: a block that does not authenticate stops the conversion; the old vault
// is unchanged and nothing is left beside it. A file that is not the vault's (desktop.ini)
// is carried over unchanged.
func TestConvertDamaged(t *testing.T) {
	src := vaulttest.Tree(t)
	v := makeConvertVault(t, vault.CreateOptions{Cipher: crypto.AEGIS}, src)
	os.WriteFile(filepath.Join(v.Dir, "desktop.ini"), []byte("[.ShellClassInfo]\n"), 0o644)
	cp := filepath.Join(v.Dir, cipherPaths(t, v)["size-8192.bin"])
	b, _ := os.ReadFile(cp)
	b[len(b)-1] ^= 1
	os.Chmod(cp, 0o600)
	os.WriteFile(cp, b, 0o600)
	before := cipherSnapshot(t, v.Dir)
	_, err := Run(context.Background(), v.Dir, testPassword, Options{To: crypto.AESGCM})
	if !errors.Is(err, vault.ErrCorrupt) {
		t.Fatalf("got %v, want ErrCorrupt", err)
	}
	sameSnapshot(t, "damaged vault", before, cipherSnapshot(t, v.Dir))
	if _, err := os.Lstat(v.Dir + workSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("work directory left")
	}

	b[len(b)-1] ^= 1
	os.WriteFile(cp, b, 0o600)
	res, err := Run(context.Background(), v.Dir, testPassword, Options{To: crypto.AESGCM})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Unchanged, []string{"desktop.ini"}) {
		t.Errorf("unchanged: %v", res.Unchanged)
	}
	got, _ := os.ReadFile(filepath.Join(v.Dir, "desktop.ini"))
	if string(got) != "[.ShellClassInfo]\n" {
		t.Errorf("desktop.ini: %q", got)
	}
}

// TestConvertPlan checks the space estimate against the real result.
func TestConvertPlan(t *testing.T) {
	src := vaulttest.Tree(t)
	want := vaulttest.ReadTree(t, src)
	v := makeConvertVault(t, vault.CreateOptions{Cipher: crypto.AEGIS}, src)
	plan, err := PlanFor(v.Dir, Options{To: crypto.AESGCM})
	if err != nil {
		t.Fatal(err)
	}
	var plain int64
	for _, e := range want {
		plain += e.Size
	}
	if plan.PlainBytes != plain {
		t.Errorf("plan: %d plaintext bytes, the tree has %d", plan.PlainBytes, plain)
	}
	if plan.NeedBytes == 0 || plan.FreeBytes == 0 || plan.KeepOld != v.Dir+".old-aegis" || plan.OpensIn.VaultuiOnly() {
		t.Errorf("plan %+v", plan)
	}
	if _, err := Run(context.Background(), v.Dir, testPassword, Options{To: crypto.AESGCM}); err != nil {
		t.Fatal(err)
	}
	var got int64
	filepath.WalkDir(v.Dir, func(p string, d fs.DirEntry, err error) error {
		if fi, err := d.Info(); err == nil && !fi.IsDir() {
			got += fi.Size()
		}
		return nil
	})
	if uint64(got) > plan.NeedBytes {
		t.Errorf("the new vault holds %d bytes, more than the %d planned", got, plan.NeedBytes)
	}
	// Converting back picks the next free name for the old vault.
	plan, err = PlanFor(v.Dir, Options{To: crypto.AEGIS})
	if err != nil || plan.KeepOld != v.Dir+".old-aes-gcm" {
		t.Errorf("plan back: %+v %v", plan, err)
	}
}

// TestConvertDirReachedTwice: a gocryptfs directory reached twice (through a bind mount:
// Linux has no hard-linked directories) is damage the walker reports, and convert refuses
// the vault.
func TestConvertDirReachedTwice(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("bind mounts need root")
	}
	dir, _ := createTest(t, vault.CreateOptions{Cipher: crypto.AESGCM})
	v, err := gocryptfs.Unlock(context.Background(), dir, testPassword)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	src := filepath.Join(t.TempDir(), "plain")
	if err := os.MkdirAll(filepath.Join(src, "a/inner"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := vaulttest.Import(context.Background(), v, src); err != nil {
		t.Fatal(err)
	}
	inner := filepath.Join(dir, cipherPaths(t, v)["a/inner"])
	if err := unix.Mount(dir, inner, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("bind mount: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(inner, unix.MNT_DETACH) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = Run(ctx, dir, testPassword, Options{To: crypto.XChaCha})
	if !errors.Is(err, vault.ErrCorrupt) || !strings.Contains(err.Error(), format.KindDirTwice) {
		t.Fatalf("convert: %v, want ErrCorrupt for a directory reached twice", err)
	}
}

var testPassword = []byte("correct horse battery staple")

// createTest creates a gocryptfs vault with opts (at the cheapest scrypt cost unless opts
// says) and returns its folder and master key.
func createTest(t *testing.T, opts vault.CreateOptions) (string, []byte) {
	t.Helper()
	if opts.ScryptLogN == 0 {
		opts.ScryptLogN = 10
	}
	dir := filepath.Join(t.TempDir(), "cipher")
	mk, err := vault.Create(context.Background(), dir, testPassword, opts)
	if err != nil {
		t.Fatal(err)
	}
	return dir, mk
}
