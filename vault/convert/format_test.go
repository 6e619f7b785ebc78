package convert

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/vaulttest"
	"github.com/vaultui/vaultui/vault"
	"github.com/vaultui/vaultui/vault/cryptomator"
	"github.com/vaultui/vaultui/vault/format"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

// formatTree is vaulttest.Tree's tree plus what a move between the formats must carry exactly:
// sizes at Cryptomator's chunk boundaries (32768 ± 1) besides gocryptfs's block boundaries
// (4096 ± 1, in vaulttest.Tree), a deep tree, names long enough for both formats' long-name forms
// (gocryptfs.longname.* past 255 encrypted bytes, a .c9s folder past 220) on files,
// directories and symlinks, and set modification times.
func formatTree(t *testing.T) string {
	t.Helper()
	root := vaulttest.Tree(t)
	write := func(p string, data []byte) {
		t.Helper()
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []int{32767, 32768, 32769, 65536, 65537, 3*32768 + 4096} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*7 + n)
		}
		write(fmt.Sprintf("chunk-%d.bin", n), b)
	}
	deep := ""
	for i := range 24 {
		deep = path.Join(deep, fmt.Sprintf("level-%02d", i))
	}
	write(deep+"/bottom.txt", []byte("at the bottom\n"))
	write(deep+"/empty", nil)
	long := strings.Repeat("ü", 100) + ".txt" // 204 bytes: long in both formats
	write("long-dir-"+strings.Repeat("z", 180)+"/"+long, []byte("long in long"))
	if err := os.Symlink(long, filepath.Join(root, "link-"+strings.Repeat("s", 200))); err != nil {
		t.Fatal(err)
	}
	when := time.Date(2020, 2, 29, 12, 34, 56, 789000000, time.UTC)
	for _, p := range []string{"size-4096.bin", deep, "a"} {
		if err := os.Chtimes(filepath.Join(root, p), when, when); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// withoutModes is a tree's description with only the entries' types: what a Cryptomator
// vault keeps of modes.
func withoutModes(m map[string]vaulttest.Entry) map[string]vaulttest.Entry {
	out := map[string]vaulttest.Entry{}
	for p, e := range m {
		e.Mode = e.Mode.Type()
		out[p] = e
	}
	return out
}

// exportAny exports the vault in dir, of any format, with the password pw and returns the
// tree it holds; it also checks that the walker finds no damage.
func exportAny(t *testing.T, dir string, pw []byte) string {
	t.Helper()
	vol, err := vault.UnlockVolume(context.Background(), dir, pw)
	if err != nil {
		t.Fatal(err)
	}
	defer vol.Close()
	var damage []vault.Problem
	if err := vault.WalkVolume(context.Background(), vol, func(vault.Node) error { return nil }, func(p vault.Problem) {
		if p.Damage() {
			damage = append(damage, p)
		}
	}); err != nil || len(damage) > 0 {
		t.Fatalf("walking %s: %v %v", dir, damage, err)
	}
	out := filepath.Join(t.TempDir(), "out")
	if err := vault.ExportVolume(context.Background(), vol, out, vault.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	return out
}

// mtimeOf is the modification time of p in the tree at root.
func mtimeOf(t *testing.T, root, p string) time.Time {
	t.Helper()
	fi, err := os.Lstat(filepath.Join(root, p))
	if err != nil {
		t.Fatal(err)
	}
	return fi.ModTime()
}

// cipherNames counts the cipher entries of dir whose names hold s.
func cipherNames(t *testing.T, dir, s string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), s) {
			n++
		}
		return nil
	})
	return n
}

// TestConvertFormatRoundTrip moves a gocryptfs vault into a Cryptomator one and back: each
// result is of the new format (a Cryptomator vault of SIV_GCM with .c9s long names; a
// gocryptfs AES-GCM vault with gocryptfs.longname files), opens with the old password, has a
// new master key, and holds every file, directory and symlink exactly, with their times;
// each old vault is kept unchanged beside. The gocryptfs result also passes gocryptfs -fsck
// and reads the same through a gocryptfs mount, where gocryptfs is installed.
func TestConvertFormatRoundTrip(t *testing.T) {
	src := formatTree(t)
	want := vaulttest.ReadTree(t, src)
	dir, _ := createTest(t, vault.CreateOptions{Cipher: crypto.AEGIS})
	v, err := gocryptfs.Unlock(context.Background(), dir, testPassword)
	if err != nil {
		t.Fatal(err)
	}
	if err := vaulttest.Import(context.Background(), v, src); err != nil {
		t.Fatal(err)
	}
	v.Close()
	if cipherNames(t, dir, crypto.LongNamePrefix) == 0 {
		t.Fatal("the gocryptfs vault has no long names to carry")
	}
	// Import keeps no times: the vault's own, as its export shows them, are what must stay.
	orig := exportAny(t, dir, testPassword)
	stamped := []string{"size-4096.bin", "a", "a/b/c", "a/b/c/deep.txt", "link-relative", "empty-dir", "chunk-32768.bin"}

	for _, step := range []struct {
		format, keep, cipher, long string
		keyLen                     int
	}{
		{"cryptomator", dir + ".old-gocryptfs", string(cryptomator.SIVGCM), ".c9s", 64},
		{"gocryptfs", dir + ".old-cryptomator", string(crypto.AESGCM), crypto.LongNamePrefix, crypto.MasterKeyLen},
	} {
		before := cipherSnapshot(t, dir)
		oldFormat, _ := vault.Identify(dir)
		var phases []string
		res, err := Run(context.Background(), dir, testPassword, Options{Format: step.format, ScryptLogN: 10,
			Progress: func(p Progress) {
				if len(phases) == 0 || phases[len(phases)-1] != p.Phase {
					phases = append(phases, p.Phase)
				}
			}})
		if err != nil {
			t.Fatalf("to %s: %v", step.format, err)
		}
		if !slices.Equal(phases, []string{PhaseCopy, PhaseCheck, PhaseSwap}) {
			t.Errorf("to %s: phases %v", step.format, phases)
		}
		if res.To.Format.ID != step.format || res.To.Cipher != step.cipher || res.From.Format != oldFormat ||
			res.OldDir != step.keep || len(res.MasterKey) != step.keyLen || len(res.Lost) != 0 {
			t.Errorf("to %s: result %+v", step.format, res)
		}
		if f, err := vault.Identify(dir); err != nil || f.ID != step.format {
			t.Fatalf("the vault is now %v (%v)", f, err)
		}
		if f, err := vault.Identify(res.OldDir); err != nil || f != oldFormat {
			t.Fatalf("the old vault is now %v (%v)", f, err)
		}
		sameSnapshot(t, "kept old vault", before, cipherSnapshot(t, res.OldDir))
		if _, err := os.Lstat(dir + workSuffix); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("work directory left: %v", err)
		}
		if cipherNames(t, dir, step.long) == 0 {
			t.Errorf("the %s vault has no %s long names", step.format, step.long)
		}
		// The printed master key opens the new vault.
		vol, err := (&vault.Folder{Dir: dir, Format: res.To.Format}).UnlockWithKey(res.MasterKey, false)
		if err != nil {
			t.Fatalf("the new master key does not open the vault: %v", err)
		}
		vol.Close()

		out := exportAny(t, dir, testPassword)
		vaulttest.CompareTrees(t, withoutModes(want), withoutModes(vaulttest.ReadTree(t, out)))
		for _, p := range stamped {
			if got, w := mtimeOf(t, out, p), mtimeOf(t, orig, p); !got.Equal(w) {
				t.Errorf("to %s: %s modified %v, was %v", step.format, p, got, w)
			}
		}
	}
	if testing.Short() {
		return
	}
	gocryptfsFsckAndMount(t, dir, withoutModes(want))
}

// gocryptfsFsckAndMount checks the vault in dir with gocryptfs -fsck and reads it through a
// gocryptfs mount (types, sizes, contents and targets: modes are compared by the caller's
// want), where gocryptfs and FUSE are there.
func gocryptfsFsckAndMount(t *testing.T, dir string, want map[string]vaulttest.Entry) {
	t.Helper()
	bin := vaulttest.Gocryptfs(t, true)
	passfile := filepath.Join(t.TempDir(), "password")
	os.WriteFile(passfile, append(testPassword, '\n'), 0o600)
	if out, err := runCmd(bin, "-fsck", "-passfile", passfile, dir); err != nil {
		t.Fatalf("gocryptfs -fsck: %v\n%s", err, out)
	}
	mnt := t.TempDir()
	if out, err := runCmd(bin, "-passfile", passfile, dir, mnt); err != nil {
		t.Fatalf("gocryptfs mount: %v\n%s", err, out)
	}
	defer func() {
		runCmd("fusermount3", "-u", mnt)
		vaulttest.WaitUnmounted(t, mnt)
	}()
	vaulttest.CompareTrees(t, want, withoutModes(vaulttest.ReadTree(t, mnt)))
}

// fillWithBuilder writes the plaintext tree at src into a vault through its format.Builder.
func fillWithBuilder(t *testing.T, b format.Builder, src string) {
	t.Helper()
	var fill func(dir format.Made, from string)
	fill = func(dir format.Made, from string) {
		ents, err := os.ReadDir(from)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			p := filepath.Join(from, e.Name())
			fi, err := os.Lstat(p)
			if err != nil {
				t.Fatal(err)
			}
			var m format.Made
			switch {
			case fi.IsDir():
				m, err = b.Mkdir(dir, e.Name())
				if err == nil {
					fill(m, p)
				}
			case fi.Mode().IsRegular():
				var data []byte
				if data, err = os.ReadFile(p); err == nil {
					m, err = b.WriteFile(dir, e.Name(), bytes.NewReader(data))
				}
			case fi.Mode().Type() == fs.ModeSymlink:
				var target string
				if target, err = os.Readlink(p); err == nil {
					m, err = b.Symlink(dir, e.Name(), target)
				}
			}
			if err == nil {
				err = b.SetAttrs(m, fi)
			}
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
		}
	}
	fill(b.Root(), src)
}

// TestConvertCryptomatorCombo converts a Cryptomator vault of SIV_CTRMAC (format 7's
// content encryption, kept by migrated vaults) to SIV_GCM, what Cryptomator 1.6 and later
// create: the master key and its masterkey file stay (the password and a noted recovery key
// keep working), every file reads the same, and the old vault is kept. Other ciphers are
// refused, and a second run says the vault already uses SIV_GCM.
func TestConvertCryptomatorCombo(t *testing.T) {
	src := formatTree(t)
	want := withoutModes(vaulttest.ReadTree(t, src))
	dir := filepath.Join(t.TempDir(), "cm")
	cv, err := cryptomator.Create(context.Background(), dir, testPassword, cryptomator.CreateOptions{Combo: cryptomator.SIVCTRMAC, ScryptLogN: 10})
	if err != nil {
		t.Fatal(err)
	}
	fillWithBuilder(t, cv.Builder(), src)
	cv.Close()
	vaulttest.CompareTrees(t, want, withoutModes(vaulttest.ReadTree(t, exportAny(t, dir, testPassword))))
	keyFile, err := os.ReadFile(filepath.Join(dir, cryptomator.MasterkeyFileName))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := PlanFor(dir, Options{To: crypto.AEGIS}); !errors.Is(err, vault.ErrUnsupported) {
		t.Errorf("to AEGIS: %v, want ErrUnsupported", err)
	}
	plan, err := PlanFor(dir, Options{To: crypto.AESGCM})
	if err != nil || !plan.Rebuild || plan.NewKey || plan.Summary() != "from Cryptomator SIV_CTRMAC to Cryptomator SIV_GCM" {
		t.Fatalf("plan %+v %v", plan, err)
	}
	before := cipherSnapshot(t, dir)
	res, err := Run(context.Background(), dir, testPassword, Options{To: crypto.AESGCM})
	if err != nil {
		t.Fatal(err)
	}
	if res.MasterKey != nil || res.OldDir != dir+".old-siv_ctrmac" || res.To.Cipher != string(cryptomator.SIVGCM) {
		t.Errorf("result %+v", res)
	}
	info, err := cryptomator.ReadInfo(dir)
	if err != nil || info.CipherCombo != cryptomator.SIVGCM {
		t.Fatalf("info %+v %v", info, err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, cryptomator.MasterkeyFileName)); !bytes.Equal(got, keyFile) {
		t.Error("the masterkey file changed")
	}
	vaulttest.CompareTrees(t, want, withoutModes(vaulttest.ReadTree(t, exportAny(t, dir, testPassword))))
	sameSnapshot(t, "kept old vault", before, cipherSnapshot(t, res.OldDir))
	if _, err := Run(context.Background(), dir, testPassword, Options{To: crypto.AESGCM}); !errors.Is(err, ErrAlreadyConverted) ||
		!strings.Contains(err.Error(), "already uses Cryptomator SIV_GCM") {
		t.Errorf("second run: %v", err)
	}
}

// TestConvertFormatUnsupported: a gocryptfs vault holding what a Cryptomator vault cannot
// (a FIFO, a hard link, extended attributes) is refused with each listed, before anything
// is written; with DropUnsupported it is converted without them, each named in the result:
// the FIFO and the attributes stay in the old vault only, the hard link's names become
// copies.
func TestConvertFormatUnsupported(t *testing.T) {
	src := vaulttest.Tree(t)
	v := makeConvertVault(t, vault.CreateOptions{}, src)
	b := v.Builder()
	if _, err := b.Mknod(b.Root(), "fifo", fs.ModeNamedPipe|0o644, 0); err != nil {
		t.Fatal(err)
	}
	first, err := b.WriteFile(b.Root(), "linked", strings.NewReader("two names"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Link(b.Root(), "linked-too", first); err != nil {
		t.Fatal(err)
	}
	dir := v.Dir
	before := cipherSnapshot(t, dir)
	_, err = Run(context.Background(), dir, testPassword, Options{Format: "cryptomator", ScryptLogN: 10})
	var ue *UnsupportedError
	if !errors.As(err, &ue) || !errors.Is(err, vault.ErrUnsupported) {
		t.Fatalf("Run: %v, want an *UnsupportedError", err)
	}
	var got []string
	for _, it := range ue.Items {
		got = append(got, it.Path)
	}
	// (The root's attribute is the vault folder's own, which no conversion carries.)
	wantLost := []string{"a/b", "fifo", "linked", "linked-too", "size-4096.bin"}
	if !slices.Equal(got, wantLost) {
		t.Errorf("listed %v, want %v", ue.Items, wantLost)
	}
	sameSnapshot(t, "old vault after the refusal", before, cipherSnapshot(t, dir))
	if _, err := os.Lstat(dir + workSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("refused, but a work directory was made: %v", err)
	}

	res, err := Run(context.Background(), dir, testPassword, Options{Format: "cryptomator", ScryptLogN: 10, DropUnsupported: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Lost, ue.Items) {
		t.Errorf("lost %v, want %v", res.Lost, ue.Items)
	}
	out := exportAny(t, dir, testPassword)
	wantTree := withoutModes(vaulttest.ReadTree(t, src))
	wantTree["linked"] = vaulttest.Entry{Size: 9, Sum: sha256Hex("two names")}
	wantTree["linked-too"] = wantTree["linked"]
	vaulttest.CompareTrees(t, wantTree, withoutModes(vaulttest.ReadTree(t, out)))
	sameSnapshot(t, "kept old vault", before, cipherSnapshot(t, res.OldDir))
}

func runCmd(name string, args ...string) ([]byte, error) {
	return exec.Command(name, args...).CombinedOutput()
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
