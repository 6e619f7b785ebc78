package convert

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/testdeps"
	"github.com/vaultui/vaultui/internal/vaulttest"
	"github.com/vaultui/vaultui/vault"
	"github.com/vaultui/vaultui/vault/cryptomator"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

// Environment of the re-executed test binary that runs one conversion (TestConvertKilled).
const (
	childConvertDir = "VAULTUI_TEST_CONVERT_DIR"
	childConvertTo  = "VAULTUI_TEST_CONVERT_TO"
	// childConvertFormat names the new format (Options.Format); the new vault is then
	// sealed at the cheapest scrypt cost.
	childConvertFormat = "VAULTUI_TEST_CONVERT_FORMAT"
)

// TestMain runs a conversion instead of the tests when the environment asks for it: the
// child that TestConvertKilled kills under strace.
func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == crypto.KDFHelperArg {
		// A costly key derivation re-executes the running binary, this one (see crypto.KDFHelperArg).
		if err := crypto.ServeKDFHelper(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if dir := os.Getenv(childConvertDir); dir != "" {
		// strace counts system calls per thread: keep this goroutine's calls on one thread so
		// "the Nth renameat" means the same call in every run.
		runtime.LockOSThread()
		opts := Options{To: crypto.CipherID(os.Getenv(childConvertTo)), Format: os.Getenv(childConvertFormat)}
		if opts.Format != "" {
			opts.ScryptLogN = 10
		}
		_, err := Run(context.Background(), dir, testPassword, opts)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runConvertChild converts dir to cipher to in a child process run under strace with the
// fault injections injects (strace -e inject=... expressions); it returns the child's error.
func runConvertChild(t *testing.T, dir string, to crypto.CipherID, injects ...string) error {
	return runConvertChildTo(t, dir, to, "", injects...)
}

// runConvertChildTo is runConvertChild into the format of ID format ("" keeps the vault's).
func runConvertChildTo(t *testing.T, dir string, to crypto.CipherID, format string, injects ...string) error {
	t.Helper()
	testdeps.Need(t, testdeps.Strace)
	args := []string{"-f", "-qq", "-o", "/dev/null"}
	for _, in := range injects {
		args = append(args, "-e", "inject="+in)
	}
	args = append(args, os.Args[0], "-test.run=^$")
	cmd := exec.Command("strace", args...)
	cmd.Env = append(os.Environ(), childConvertDir+"="+dir, childConvertTo+"="+string(to), childConvertFormat+"="+format)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	return nil
}

// TestConvertKilled kills a conversion (AEGIS to AES-GCM, in a child process under strace)
// at system calls across its run: while it sets up, copies, writes the config, syncs,
// exchanges, moves the old vault away and cleans up; also on a file system without
// RENAME_EXCHANGE (injected EINVAL) between its two renames, and a second run killed while
// it removes what the first left. After each kill the old vault is intact byte for byte
// (in its place before the swap, in the work directory or its keeping place after it), and
// a new run completes: the vault has the new cipher and the same content, the old vault is
// kept unchanged and nothing else is left.
func TestConvertKilled(t *testing.T) {
	src := vaulttest.Tree(t)
	want := vaulttest.ReadTree(t, src)
	const from, to = crypto.AEGIS, crypto.AESGCM
	for _, tc := range []struct {
		name    string
		injects [][]string // one strace run per element
		done    bool       // the kill came after the conversion was complete
	}{
		{"before the work directory", [][]string{{"mkdirat:signal=KILL:when=1"}}, false},
		{"before the new tree", [][]string{{"mkdirat:signal=KILL:when=2"}}, false},
		{"before the state file is in place", [][]string{{"renameat:signal=KILL:when=1"}}, false},
		{"while copying", [][]string{{"pwrite64:signal=KILL:when=5"}}, false},
		{"before the new config", [][]string{{"renameat:signal=KILL:when=2"}}, false},
		{"after the check, at syncfs", [][]string{{"syncfs:signal=KILL:when=1"}}, false},
		{"at the exchange", [][]string{{"renameat2:signal=KILL:when=1"}}, false},
		{"after the exchange", [][]string{{"renameat:signal=KILL:when=3"}}, false},
		{"while cleaning up", [][]string{{"unlinkat:signal=KILL:when=7"}}, false},
		{"before removing the work directory", [][]string{{"unlinkat:signal=KILL:when=9"}}, true},
		{"no exchange: before the first rename", [][]string{{"renameat2:error=EINVAL", "renameat:signal=KILL:when=3"}}, false},
		{"no exchange: between the renames", [][]string{{"renameat2:error=EINVAL", "renameat:signal=KILL:when=4"}}, false},
		{"copying, then removing the half-built tree", [][]string{{"pwrite64:signal=KILL:when=5"}, {"unlinkat:signal=KILL:when=6"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := makeConvertVault(t, vault.CreateOptions{Cipher: from}, src)
			dir := v.Dir
			xattrs, names := vaultXattrs(t, v), nameFiles(t, dir)
			before := cipherSnapshot(t, dir)
			for _, injects := range tc.injects {
				err := runConvertChild(t, dir, to, injects...)
				if err == nil || !strings.Contains(err.Error(), "killed") {
					t.Fatalf("the child was not killed (%v): the injection %v missed", err, injects)
				}
				// The old vault is intact wherever the crash left it.
				old := dir
				if configCipher(dir) != from {
					old = filepath.Join(dir+workSuffix, newDirName)
					if configCipher(old) != from {
						old = dir + ".old-" + string(from)
					}
				}
				sameSnapshot(t, "old vault after the kill", before, cipherSnapshot(t, old))
			}
			res, err := Run(context.Background(), dir, testPassword, Options{To: to})
			switch {
			case tc.done && (err == nil || !strings.Contains(err.Error(), "already uses")):
				t.Fatalf("re-run after a complete conversion: %v, want \"already uses\"", err)
			case tc.done:
				res = &Result{OldDir: dir + ".old-" + string(from)}
			case err != nil:
				t.Fatalf("re-run: %v", err)
			}
			checkConvertedVault(t, dir, to, want, xattrs, names)
			if res.OldDir != dir+".old-"+string(from) {
				t.Errorf("old vault kept at %q", res.OldDir)
			}
			sameSnapshot(t, "kept old vault", before, cipherSnapshot(t, res.OldDir))
			if _, err := os.Lstat(dir + workSuffix); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("work directory left: %v", err)
			}
			if _, err := os.Lstat(dir + ".old-" + string(from) + "-2"); err == nil {
				t.Errorf("a second old vault was made")
			}
		})
	}
}

// countConvertSyscalls runs, under strace, a conversion of dir to cipher to that is meant to
// succeed and returns how many times it called syscall.
func countConvertSyscalls(t *testing.T, dir string, to crypto.CipherID, syscall string) int {
	t.Helper()
	testdeps.Need(t, testdeps.Strace)
	trace := filepath.Join(t.TempDir(), "trace")
	cmd := exec.Command("strace", "-f", "-qq", "-e", "trace="+syscall, "-o", trace, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childConvertDir+"="+dir, childConvertTo+"="+string(to))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("conversion under strace: %v: %s", err, out)
	}
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), syscall+"(")
}

// TestConvertSyncFails makes each fsync of a conversion, in turn, fail with EIO (strace
// injects it): those of the state file and the config, and those of the work directory, the
// new vault's folder and their parents that make its renames durable. Every one fails the
// conversion (a directory's fsync error was once discarded: convert exited 0 with the swap
// maybe not on disk). Nothing is lost: the old vault is intact wherever the failure left
// it, and a run without the fault completes the conversion (or finds it complete).
func TestConvertSyncFails(t *testing.T) {
	src := vaulttest.Tree(t)
	want := vaulttest.ReadTree(t, src)
	const from, to = crypto.AEGIS, crypto.AESGCM
	n := countConvertSyscalls(t, makeConvertVault(t, vault.CreateOptions{Cipher: from}, src).Dir, to, "fsync")
	if n < 5 {
		t.Fatalf("a conversion calls fsync %d times; want at least the state file, the work directory, the config and the swap", n)
	}
	for when := 1; when <= n; when++ {
		t.Run(fmt.Sprint("fsync ", when), func(t *testing.T) {
			v := makeConvertVault(t, vault.CreateOptions{Cipher: from}, src)
			dir := v.Dir
			xattrs, names := vaultXattrs(t, v), nameFiles(t, dir)
			before := cipherSnapshot(t, dir)
			err := runConvertChild(t, dir, to, fmt.Sprintf("fsync:error=EIO:when=%d", when))
			if err == nil || !strings.Contains(err.Error(), "input/output error") {
				t.Fatalf("conversion with fsync %d of %d failing: %v, want the EIO reported", when, n, err)
			}
			old := dir
			if configCipher(dir) != from {
				old = filepath.Join(dir+workSuffix, newDirName)
				if configCipher(old) != from {
					old = dir + ".old-" + string(from)
				}
			}
			sameSnapshot(t, "old vault after the failure", before, cipherSnapshot(t, old))
			_, err = Run(context.Background(), dir, testPassword, Options{To: to})
			if err != nil && !strings.Contains(err.Error(), "already uses") {
				t.Fatalf("re-run: %v", err)
			}
			checkConvertedVault(t, dir, to, want, xattrs, names)
			sameSnapshot(t, "kept old vault", before, cipherSnapshot(t, dir+".old-"+string(from)))
		})
	}
}

// TestConvertFormatKilled kills a move of a gocryptfs vault into a Cryptomator one (in a
// child process under strace) at system calls across its run: while it sets up, makes the
// new vault, places its entries (each a renameat2), syncs, exchanges, moves the old vault
// away and cleans up; also on a file system without RENAME_EXCHANGE between its two renames,
// and a second run killed while it removes what the first left. After each kill the old
// vault is intact byte for byte wherever the crash left it, and a new run completes: the
// vault is a Cryptomator vault with the same files, and the old one is kept unchanged.
func TestConvertFormatKilled(t *testing.T) {
	src := formatTree(t)
	want := withoutModes(vaulttest.ReadTree(t, src))
	// Every entry is placed with one renameat2 (RENAME_NOREPLACE); the exchange comes next.
	exchange := fmt.Sprintf("when=%d", len(want)+1)
	for _, tc := range []struct {
		name    string
		injects [][]string
		done    bool
	}{
		{"before the work directory", [][]string{{"mkdirat:signal=KILL:when=1"}}, false},
		{"before the new vault", [][]string{{"mkdirat:signal=KILL:when=2"}}, false},
		{"before the state file is in place", [][]string{{"renameat:signal=KILL:when=1"}}, false},
		{"placing the first entry", [][]string{{"renameat2:signal=KILL:when=1"}}, false},
		{"while copying", [][]string{{"renameat2:signal=KILL:when=" + fmt.Sprint(len(want)/2)}}, false},
		{"while writing a file", [][]string{{"fsync:signal=KILL:when=20"}}, false},
		{"after the check, at syncfs", [][]string{{"syncfs:signal=KILL:when=1"}}, false},
		{"at the exchange", [][]string{{"renameat2:signal=KILL:" + exchange}}, false},
		{"after the exchange", [][]string{{"renameat:signal=KILL:when=2"}}, false},
		{"while cleaning up", [][]string{{"unlinkat:signal=KILL:when=5"}}, false},
		{"before removing the work directory", [][]string{{"unlinkat:signal=KILL:when=7"}}, true},
		{"no exchange: between the renames", [][]string{{"renameat2:error=EINVAL:" + exchange, "renameat:signal=KILL:when=3"}}, false},
		{"copying, then removing the half-built tree", [][]string{{"renameat2:signal=KILL:when=9"}, {"unlinkat:signal=KILL:when=3"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := createTest(t, vault.CreateOptions{})
			v, err := gocryptfs.Unlock(context.Background(), dir, testPassword)
			if err != nil {
				t.Fatal(err)
			}
			if err := vaulttest.Import(context.Background(), v, src); err != nil {
				t.Fatal(err)
			}
			v.Close()
			keep := dir + ".old-gocryptfs"
			before := cipherSnapshot(t, dir)
			for _, injects := range tc.injects {
				err := runConvertChildTo(t, dir, "", "cryptomator", injects...)
				if err == nil || !strings.Contains(err.Error(), "killed") {
					t.Fatalf("the child was not killed (%v): the injection %v missed", err, injects)
				}
				old := dir
				if f, _ := vault.Identify(dir); !isFormat(f, "gocryptfs") {
					old = filepath.Join(dir+workSuffix, newDirName)
					if f, _ := vault.Identify(old); !isFormat(f, "gocryptfs") {
						old = keep
					}
				}
				sameSnapshot(t, "old vault after the kill", before, cipherSnapshot(t, old))
			}
			res, err := Run(context.Background(), dir, testPassword, Options{Format: "cryptomator", ScryptLogN: 10})
			switch {
			case tc.done && !errors.Is(err, ErrAlreadyConverted):
				t.Fatalf("re-run after a complete conversion: %v, want ErrAlreadyConverted", err)
			case tc.done:
				res = &Result{OldDir: keep}
			case err != nil:
				t.Fatalf("re-run: %v", err)
			}
			if f, err := vault.Identify(dir); err != nil || !isFormat(f, "cryptomator") {
				t.Fatalf("after the re-run the vault is %v (%v)", f, err)
			}
			vaulttest.CompareTrees(t, want, withoutModes(vaulttest.ReadTree(t, exportAny(t, dir, testPassword))))
			if res.OldDir != keep {
				t.Errorf("old vault kept at %q", res.OldDir)
			}
			sameSnapshot(t, "kept old vault", before, cipherSnapshot(t, keep))
			if _, err := os.Lstat(dir + workSuffix); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("work directory left: %v", err)
			}
			if _, err := os.Lstat(keep + "-2"); err == nil {
				t.Errorf("a second old vault was made")
			}
		})
	}
}

// TestConvertFormatKilledBack kills a move of a Cryptomator vault into a gocryptfs one at
// a few system calls (while it writes content, at the exchange, after it, and between the
// two renames of a file system without RENAME_EXCHANGE): the old vault stays intact and a
// new run finishes.
func TestConvertFormatKilledBack(t *testing.T) {
	src := formatTree(t)
	want := withoutModes(vaulttest.ReadTree(t, src))
	for _, tc := range []struct {
		name    string
		injects []string
	}{
		{"while writing content", []string{"pwrite64:signal=KILL:when=5"}},
		{"at the exchange", []string{"renameat2:signal=KILL:when=1"}},
		{"after the exchange", []string{"renameat:signal=KILL:when=3"}},
		{"no exchange: between the renames", []string{"renameat2:error=EINVAL", "renameat:signal=KILL:when=4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cm")
			cv, err := cryptomator.Create(context.Background(), dir, testPassword, cryptomator.CreateOptions{ScryptLogN: 10})
			if err != nil {
				t.Fatal(err)
			}
			fillWithBuilder(t, cv.Builder(), src)
			cv.Close()
			keep := dir + ".old-cryptomator"
			before := cipherSnapshot(t, dir)
			if err := runConvertChildTo(t, dir, "", "gocryptfs", tc.injects...); err == nil || !strings.Contains(err.Error(), "killed") {
				t.Fatalf("the child was not killed (%v): the injection %v missed", err, tc.injects)
			}
			old := dir
			if f, _ := vault.Identify(dir); !isFormat(f, "cryptomator") {
				old = filepath.Join(dir+workSuffix, newDirName)
				if f, _ := vault.Identify(old); !isFormat(f, "cryptomator") {
					old = keep
				}
			}
			sameSnapshot(t, "old vault after the kill", before, cipherSnapshot(t, old))
			res, err := Run(context.Background(), dir, testPassword, Options{Format: "gocryptfs", ScryptLogN: 10})
			if err != nil {
				t.Fatalf("re-run: %v", err)
			}
			if f, err := vault.Identify(dir); err != nil || !isFormat(f, "gocryptfs") {
				t.Fatalf("after the re-run the vault is %v (%v)", f, err)
			}
			vaulttest.CompareTrees(t, want, withoutModes(vaulttest.ReadTree(t, exportAny(t, dir, testPassword))))
			if res.OldDir != keep {
				t.Errorf("old vault kept at %q", res.OldDir)
			}
			sameSnapshot(t, "kept old vault", before, cipherSnapshot(t, keep))
			if _, err := os.Lstat(dir + workSuffix); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("work directory left: %v", err)
			}
		})
	}
}

// configCipher returns the cipher of the vault in dir, or "" when it has no readable config.
func configCipher(dir string) crypto.CipherID {
	c, err := gocryptfs.LoadConfig(dir)
	if err != nil {
		return ""
	}
	return c.Cipher()
}

// isFormat reports whether f is the format of that ID.
func isFormat(f *vault.Format, id string) bool { return f != nil && f.ID == id }
