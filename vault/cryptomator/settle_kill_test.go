package cryptomator

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

	"github.com/vaultui/vaultui/internal/testdeps"
)

// Environment of the re-executed test binary that settles one conflict (TestSettleKilled).
const (
	childSettleDir  = "VAULTUI_TEST_SETTLE_DIR"
	childSettleKeep = "VAULTUI_TEST_SETTLE_KEEP" // original, copy, or the name to keep the copy as
)

// TestMain settles a conflict instead of running the tests when the environment asks for
// it: the child that TestSettleKilled kills under strace.
func TestMain(m *testing.M) {
	if dir := os.Getenv(childSettleDir); dir != "" {
		runtime.LockOSThread() // strace counts system calls per thread
		if err := settleChild(dir, os.Getenv(childSettleKeep)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// settleChild settles the one conflict copy in the root of the vault in dir as keep says.
func settleChild(dir, keep string) error {
	v, err := Open(context.Background(), dir, []byte("pw"))
	if err != nil {
		return err
	}
	defer v.Close()
	c, ok := rootCopy(v)
	if !ok {
		return errors.New("no conflict copy")
	}
	return settle(v, c, keep)
}

func settle(v *Vault, c Entry, keep string) error {
	switch keep {
	case "original":
		return v.RemoveCopy(c)
	case "copy":
		return v.ReplaceWithCopy(c)
	}
	return v.KeepCopyAs(c, keep)
}

// rootCopy is the conflict copy in v's root, if there is one.
func rootCopy(v *Vault) (Entry, bool) {
	ents, _ := v.ReadDir(v.Root())
	for _, e := range ents {
		if e.Conflict != nil {
			return e, true
		}
	}
	return Entry{}, false
}

// runSettleChild settles the conflict in dir as keep says in a child process under strace,
// with its options (a trace or fault injections); it returns the child's error.
func runSettleChild(t *testing.T, dir, keep string, strace ...string) error {
	t.Helper()
	testdeps.Need(t, testdeps.Strace)
	cmd := exec.Command("strace", append(append([]string{"-f", "-qq"}, strace...), os.Args[0], "-test.run=^$")...)
	cmd.Env = append(os.Environ(), childSettleDir+"="+dir, childSettleKeep+"="+keep)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	return nil
}

// looseTree is tree for a vault a crash may have left things in: the entries that read,
// with an error for anything but a folder holding no payload (ErrHalfMade), which holds no
// data; temporary names are skipped.
func looseTree(t *testing.T, v *Vault) map[string]string {
	t.Helper()
	ents, err := v.ReadDir(v.Root())
	if err != nil {
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			if !errors.Is(e, ErrHalfMade) {
				t.Errorf("root: %v", e)
			}
		}
	}
	out := map[string]string{}
	for _, e := range ents {
		name := strings.TrimPrefix(e.Name, shortenedName)
		if e.Conflict != nil {
			name += " (copy)"
		}
		out[name] = describe(t, v, e)
	}
	return out
}

// TestSettleKilled kills the settling of each kind of copy stored in a folder, each way, in
// a child process under strace, at each system call that changes a name (mkdirat, renameat,
// renameat2, unlinkat) in turn. After every kill both versions read whole, each under a
// name of its own, or the state asked for is reached: the original is never lost before
// the copy took its place, nor the copy before it had one. Settling again (while the copy
// is still there) reaches the state asked for.
func TestSettleKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("a child process per system call")
	}
	for _, c := range settleCases {
		if c.kind == "directory" {
			continue // refused before anything changes (TestSettleFolderEntries)
		}
		for _, keep := range []string{"original", "copy", "kept", shortenedName + "kept"} {
			if keep == "original" && c.kind == "long directory" {
				continue // its copy holds a file: refused
			}
			t.Run(fmt.Sprintf("%s/%.8s", c.kind, keep), func(t *testing.T) {
				kills := 0
				for _, call := range []string{"mkdirat", "renameat", "renameat2", "unlinkat"} {
					// How often a settle that is not killed makes the call.
					v, dir, _ := newSettleVault(t, c)
					v.Close()
					trace := filepath.Join(t.TempDir(), "trace")
					if err := runSettleChild(t, dir, keep, "-e", "trace="+call, "-o", trace); err != nil {
						t.Fatal(err)
					}
					b, _ := os.ReadFile(trace)
					for when := 1; when <= strings.Count(string(b), call+"("); when++ {
						killedAt(t, c, keep, fmt.Sprintf("%s:signal=KILL:when=%d", call, when))
						kills++
					}
				}
				if kills == 0 {
					t.Fatalf("killed at %d system calls: the trace missed the settle's", kills)
				}
				t.Logf("killed at %d system calls", kills)
			})
		}
	}
}

// killedAt settles a fresh vault of case c as keep says, killed by the strace injection
// inject, checks what the kill left, then settles again and checks the result.
func killedAt(t *testing.T, c settleCase, keep, inject string) {
	t.Helper()
	v, dir, _ := newSettleVault(t, c)
	before := tree(t, v, dir)
	orig, cp := before["x"], before["x (copy)"]
	err := runSettleChild(t, dir, keep, "-o", "/dev/null", "-e", "inject="+inject)
	if err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("%s: the child was not killed (%v)", inject, err)
	}
	kept := strings.TrimPrefix(keep, shortenedName)
	got := looseTree(t, v)
	switch {
	case got["x"] == orig && got["x (copy)"] == cp && len(got) == 2: // before
	case keep == "original" && got["x"] == orig && len(got) == 1:
	case keep == "copy" && got["x"] == cp && len(got) == 1:
	case keep != "original" && keep != "copy" && got["x"] == orig && got[kept] == cp && len(got) == 2:
	default:
		t.Fatalf("killed at %s: %q, want the original %q and the copy %q each whole", inject, got, orig, cp)
	}
	if c, ok := rootCopy(v); ok {
		if err := settle(v, c, keep); err != nil {
			t.Fatalf("killed at %s, settling again: %v", inject, err)
		}
	}
	want := map[string]string{"x": orig}
	switch keep {
	case "original":
	case "copy":
		want["x"] = cp
	default:
		want[kept] = cp
	}
	if got := looseTree(t, v); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("killed at %s, then settled: %q, want %q", inject, got, want)
	}
}
