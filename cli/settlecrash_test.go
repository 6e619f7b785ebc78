package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/crashtest"
	"github.com/vaultui/vaultui/internal/testdeps"
	"github.com/vaultui/vaultui/internal/vaulttest"
	"github.com/vaultui/vaultui/vault"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

// settleCrashAllEnv, set, makes TestSettleCrash kill also at the calls that change nothing
// (openat without O_CREAT or write access): killing there leaves what killing at the next
// call that changes something does, so by default those runs are left out. It also adds the
// cases whose calls the others already make (settling one entry of a folder made twice).
const settleCrashAllEnv = "VAULTUI_SETTLE_CRASH_ALL"

// TestSettleCrash kills "vaultui conflicts --keep ..." (offline, on a locked vault) on entry
// to each system call it makes on the vault's files (internal/crashtest), and after it ends:
// fsck must find no damage, every file must read back whole with its old or its new path and
// content, and running the command again must finish the settling (a folder made twice ends
// merged, its diriv copy gone).
func TestSettleCrash(t *testing.T) {
	testdeps.Need(t, testdeps.Strace)
	ctx := context.Background()
	work := t.TempDir()
	bin := crashBinary(t, work)
	pw := "settle password"
	passfile := filepath.Join(work, "pw")
	if err := os.WriteFile(passfile, []byte(pw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("long", 50) + ".txt" // stored as gocryptfs.longname.* with a .name file
	template := filepath.Join(work, "template")
	settleTemplate(t, template, pw, map[string]string{
		"r1.odt": "r1 original", "r1.new": "r1 copy", // --keep copy
		"r2.odt": "r2 original", "r2.new": "r2 copy", // --keep original
		"r3.odt": "r3 original", "r3.new": "r3 copy", // --keep both
		"docs/a.txt": "a from the first computer", "docs/keep.txt": "keep",
		"m2/a.txt": "a from the second computer", "m2/b.txt": "b from the second computer",
		"m2/" + long: "long from the second computer", "m2/sub/c.txt": "c from the second computer",
	})
	all := os.Getenv(settleCrashAllEnv) != ""
	for _, c := range []struct {
		name, keep, path string
		merge            bool // a folder made twice: entries move one by one, each is old or new
		extra            bool // run only with settleCrashAllEnv
	}{
		{"keep copy", "copy", "r1 (conflict 2026-11-30 Syncthing).odt", false, false},
		{"keep original", "original", "r2 (conflict 2026-11-30 Syncthing).odt", false, false},
		{"keep both", "both", "r3 (conflict 2026-11-30 Syncthing).odt", false, false},
		{"keep copy made in second folder", "copy", "docs/a (conflict 2026-01-01 Syncthing).txt", false, true},
		{"keep both long name made in second folder", "both", "docs/" + strings.TrimSuffix(long, ".txt") + " (conflict 2026-01-01 Syncthing).txt", false, true},
		{"merge folder made twice", "both", "docs", true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.extra && !all {
				t.Skipf("set %s=1 to run it", settleCrashAllEnv)
			}
			runs := 0
			// run settles in a copy of the template under strace, killed at p (nil: not killed).
			run := func(p *crashtest.Point, census string) (string, *crashtest.Tracer, error) {
				runs++
				dir := filepath.Join(work, fmt.Sprintf("%s.%d", strings.ReplaceAll(c.name, " ", "-"), runs))
				if out, err := exec.Command("cp", "-a", template, dir).CombinedOutput(); err != nil {
					t.Fatalf("cp: %v: %s", err, out)
				}
				cmd := exec.Command(bin, "conflicts", "--passfile", passfile, "--keep", c.keep, dir, c.path)
				cmd.Env = crashEnv(work)
				if p != nil { // the census's paths are in its own copy
					q := *p
					q.Path = strings.Replace(q.Path, census, dir, 1)
					p = &q
				}
				w, tr := crashtest.Command(cmd, crashtest.FileCalls, nil, p, work)
				out, err := w.CombinedOutput()
				if err != nil && p == nil {
					t.Fatalf("conflicts --keep %s: %v: %s", c.keep, err, out)
				}
				return dir, tr, err
			}
			old := readSettled(t, ctx, template, pw)
			if !slices.ContainsFunc(old.conflicts, func(e vault.ConflictEntry) bool { return e.Path == c.path }) {
				t.Fatalf("the template has no conflict %q: %+v", c.path, old.conflicts)
			}
			census, tr, _ := run(nil, "")
			settled := readSettled(t, ctx, census, pw)
			settled.requireClean(t, "after settling")
			if settled.pending(c.path) || maps.Equal(settled.files, old.files) && c.keep != "both" {
				t.Fatalf("settling changed nothing: %+v", settled)
			}
			calls, err := tr.Calls()
			if err != nil {
				t.Fatal(err)
			}
			// The calls on the vault's files, those that change something unless all.
			var onVault []crashtest.Call
			for _, call := range calls {
				if strings.HasPrefix(call.Path(), census+"/") || call.Path() == census {
					onVault = append(onVault, call)
				}
			}
			points := crashtest.PathPoints(onVault)
			var kept []crashtest.Call
			var keptPoints []crashtest.Point
			for i, call := range onVault {
				if all || changesFiles(call) {
					kept = append(kept, call)
					keptPoints = append(keptPoints, points[i])
				}
			}
			norm := func(s string) string { return strings.ReplaceAll(s, census, "VAULT") }
			missed := crashtest.Changing(kept, norm)
			var matrix []string
			for _, p := range keptPoints {
				dir, tr, _ := run(&p, census)
				call, _, killed := tr.Killed()
				if !killed {
					t.Logf("%s: not killed", p)
					continue
				}
				t.Logf("%s: killed at %s", p, call.Line)
				what := fmt.Sprintf("killed at %s", strings.ReplaceAll(call.Text(), dir, "VAULT"))
				delete(missed, strings.ReplaceAll(call.Text(), dir, "VAULT"))
				matrix = append(matrix, call.Name)
				after := readSettled(t, ctx, dir, pw)
				after.requireClean(t, what)
				if c.merge {
					after.requireOldOrNewEach(t, what, old, settled)
				} else if !maps.Equal(after.files, old.files) && !maps.Equal(after.files, settled.files) {
					t.Errorf("%s: files %v, want the old %v or the new %v", what, after.files, old.files, settled.files)
				}
				if after.pending(c.path) {
					cmd := exec.Command(bin, "conflicts", "--passfile", passfile, "--keep", c.keep, dir, c.path)
					cmd.Env = crashEnv(work)
					if out, err := cmd.CombinedOutput(); err != nil {
						t.Errorf("%s: running it again: %v: %s", what, err, out)
					}
				}
				again := readSettled(t, ctx, dir, pw)
				again.requireClean(t, what+", then run again")
				if !maps.Equal(again.files, settled.files) || again.pending(c.path) || again.dirIVCopy != settled.dirIVCopy {
					t.Errorf("%s, then run again: files %v (conflict left: %v, diriv copy: %v), want %v",
						what, again.files, again.pending(c.path), again.dirIVCopy, settled.files)
				}
			}
			for l := range missed {
				t.Errorf("no run was killed at %s", l)
			}
			t.Logf("%s: %d runs, killed at %s", c.name, runs, strings.Join(matrix, " "))
		})
	}
}

// settleTemplate makes a vault in dir holding files (plaintext path -> content), then leaves
// it as Syncthing does: each NAME.new becomes the conflict copy of NAME.odt (dated
// 2026-11-30), and folder m2 becomes the second computer's docs (splitFolder).
func settleTemplate(t *testing.T, dir, pw string, files map[string]string) {
	t.Helper()
	src := filepath.Join(t.TempDir(), "src")
	for p, content := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(src, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, p), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := vault.Create(context.Background(), dir, []byte(pw), vault.CreateOptions{Cipher: crypto.AESGCM, ScryptLogN: 10}); err != nil {
		t.Fatal(err)
	}
	v, err := gocryptfs.Unlock(context.Background(), dir, []byte(pw))
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if err := vaulttest.Import(context.Background(), v, src); err != nil {
		t.Fatal(err)
	}
	cipher := map[string]string{}
	if err := vault.WalkVolume(context.Background(), v.Volume(), func(n vault.Node) error {
		cipher[n.Path] = filepath.Join(v.Dir, filepath.FromSlash(n.CipherPath))
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	for p := range files {
		if base, ok := strings.CutSuffix(p, ".new"); ok {
			if err := os.Rename(cipher[p], cipher[base+".odt"]+".sync-conflict-20261130-101010-ABCDEF7"); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := splitFolder(cipher["docs"], cipher["m2"]); err != nil {
		t.Fatal(err)
	}
}

// changesFiles reports whether call can change a file: any traced call but an open that
// neither creates nor opens for writing.
func changesFiles(call crashtest.Call) bool {
	if call.Name != "openat" && call.Name != "open" {
		return true
	}
	for _, flag := range []string{"O_CREAT", "O_WRONLY", "O_RDWR", "O_TRUNC"} {
		if strings.Contains(call.Line, flag) {
			return true
		}
	}
	return false
}

// settleState is what a vault holds, read through the vault package.
type settleState struct {
	files     map[string]string // plaintext path -> content, of every regular file
	conflicts []vault.ConflictEntry
	damage    []vault.Problem
	readErr   error // the export found something that does not read back whole
	dirIVCopy bool  // a copy of a gocryptfs.diriv is left (a folder made twice)
}

func readSettled(t *testing.T, ctx context.Context, dir, pw string) settleState {
	t.Helper()
	v, err := vault.UnlockVolume(context.Background(), dir, []byte(pw))
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	defer v.Close()
	var s settleState
	problems, err := vault.FsckVolume(ctx, v, nil)
	if err != nil {
		t.Fatalf("fsck %s: %v", dir, err)
	}
	for _, p := range problems {
		if p.Damage() {
			s.damage = append(s.damage, p)
		}
	}
	if s.conflicts, err = v.Conflicts(ctx); err != nil {
		t.Fatalf("conflicts %s: %v", dir, err)
	}
	for _, e := range s.conflicts {
		s.dirIVCopy = s.dirIVCopy || e.Kind == vault.ConflictFolderMadeTwice
	}
	out := filepath.Join(t.TempDir(), "out")
	// Forced, so that every file is read even if one is damaged; the error says one was.
	s.readErr = vault.ExportVolume(ctx, v, out, vault.ExportOptions{Force: true})
	if s.readErr != nil && !errors.Is(s.readErr, vault.ErrCorrupt) {
		t.Fatalf("export %s: %v", dir, s.readErr)
	}
	s.files = map[string]string{}
	err = filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(out, p)
		s.files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// requireClean: fsck finds no damage (notes, such as for conflict copies, are fine) and every
// file reads back whole.
func (s settleState) requireClean(t *testing.T, what string) {
	t.Helper()
	if len(s.damage) > 0 || s.readErr != nil {
		t.Errorf("%s: fsck finds %v; export: %v", what, s.damage, s.readErr)
	}
}

// pending reports whether path is still a conflict to settle.
func (s settleState) pending(path string) bool {
	return slices.ContainsFunc(s.conflicts, func(e vault.ConflictEntry) bool { return e.Path == path })
}

// requireOldOrNewEach: each file has its old path and content or its new ones, and no
// content is lost or doubled (a merge moves entries one at a time).
func (s settleState) requireOldOrNewEach(t *testing.T, what string, old, new settleState) {
	t.Helper()
	for p, content := range s.files {
		if o, ok := old.files[p]; ok && o == content {
			continue
		}
		if n, ok := new.files[p]; ok && n == content {
			continue
		}
		t.Errorf("%s: %s holds %q, neither its old content nor its new", what, p, content)
	}
	have, want := slices.Sorted(maps.Values(s.files)), slices.Sorted(maps.Values(old.files))
	if !slices.Equal(have, want) {
		t.Errorf("%s: the vault holds %q, want %q", what, have, want)
	}
}
