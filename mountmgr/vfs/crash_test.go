package vfs

// The crash-consistency suite (issue 24): every operation that rewrites cipher data runs on a
// mount served by a child process (this test binary, re-executed), which strace kills on entry
// to each system call the operation makes (internal/crashtest); the cipherdir is then mounted
// again and every file must read back as the old or the new content (or one of the states in
// between that the operation documents, see crashOp.also), and fsck must find no damage.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/crashtest"
	"github.com/vaultui/vaultui/internal/testdeps"
	"github.com/vaultui/vaultui/vault"
	"github.com/vaultui/vaultui/vault/cryptomator"
	"github.com/vaultui/vaultui/vault/format"
)

// crashServeEnv makes the test binary serve a mount ("CIPHERDIR\nMOUNTPOINT") until killed.
const crashServeEnv = "VAULTUI_VFS_CRASH_SERVE"

// crashFullEnv runs every kill point for every cipher; by default AES-GCM gets every point and
// AEGIS every call name once (its first point), which keeps the suite near a minute.
const crashFullEnv = "VAULTUI_CRASH_FULL"

// crashMatrixEnv names a file the suite appends its kill matrix to.
const crashMatrixEnv = "VAULTUI_CRASH_MATRIX"

const crashPassword = "test password"

func TestMain(m *testing.M) {
	if spec := os.Getenv(crashServeEnv); spec != "" {
		os.Exit(crashServe(spec))
	}
	os.Exit(m.Run())
}

// crashServe mounts the vault and serves until killed.
func crashServe(spec string) int {
	dir, mp, _ := strings.Cut(spec, "\n")
	// strace 6.1 cannot inject the *xattrat calls (Linux 6.13): take the /proc path, whose
	// lsetxattr and lremovexattr it can.
	xattrAtDisabled.Store(true)
	v, _, _, err := unlockAny(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash server:", err)
		return 1
	}
	m, err := Mount(mp, v, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash server:", err)
		return 1
	}
	fmt.Println("ready")
	m.Wait()
	return 0
}

// unlockAny unlocks the vault in dir (either format) with crashPassword, and returns it as
// a mount and as the walker reads it, and the function that wipes its keys.
func unlockAny(dir string) (Volume, format.Volume, func(), error) {
	v, err := vault.UnlockVolume(context.Background(), dir, []byte(crashPassword))
	if err != nil {
		return nil, nil, nil, err
	}
	mv, err := VolumeOf(v)
	if err != nil {
		v.Close()
		return nil, nil, nil, err
	}
	return mv, v, v.Close, nil
}

// crashOp is one operation of the suite, run on the mount of a vault prepared by crashSetup.
type crashOp struct {
	name string
	do   func(mp string) error
	// also are operations that, run on the old state, make the other states a crash may
	// leave: what the operation's code documents beyond "old or new".
	also []func(mp string) error
	// times compares modification times too (only where the operation sets them).
	times bool
	// chunkAlso are more states a crash may leave in a Cryptomator vault, whose blocks are
	// 32 KiB chunks: f and g are one partial chunk each, so what a crash may cut back to a
	// block's start (truncate) is cut back to the file's start there.
	chunkAlso []func(mp string) error
}

var (
	crashF    = pattern(10000, 1) // two full blocks and a partial one
	crashG    = pattern(3000, 2)
	crashLong = strings.Repeat("long name ", 20) // 200 bytes: a long name in the cipherdir
)

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) + seed
	}
	return b
}

// crashSetup makes the old state: files f and g, f with an extended attribute, a directory d
// with a file, an empty directory e, a file with a long name.
func crashSetup(mp string) error {
	for _, f := range []struct {
		name string
		data []byte
	}{{"f", crashF}, {"g", crashG}, {crashLong, []byte("long")}} {
		if err := os.WriteFile(filepath.Join(mp, f.name), f.data, 0o644); err != nil {
			return err
		}
	}
	if err := unix.Setxattr(filepath.Join(mp, "f"), "user.a", []byte("one"), 0); err != nil && err != unix.ENOTSUP {
		return err // a Cryptomator vault has no extended attributes
	}
	if err := os.MkdirAll(filepath.Join(mp, "d"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(mp, "d", "x"), []byte("x"), 0o644); err != nil {
		return err
	}
	return os.Mkdir(filepath.Join(mp, "e"), 0o755)
}

// syncWriteAt writes data at off into mp/name and syncs it, so the write reaches the daemon.
func syncWriteAt(mp, name string, data []byte, off int64) error {
	f, err := os.OpenFile(filepath.Join(mp, name), os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.WriteAt(data, off); err != nil {
		return err
	}
	return f.Sync()
}

func truncateTo(name string, size int64) func(string) error {
	return func(mp string) error { return os.Truncate(filepath.Join(mp, name), size) }
}

var crashOps = []crashOp{
	{name: "write-in-block", do: func(mp string) error { return syncWriteAt(mp, "f", pattern(100, 9), 5000) }},
	{
		// The kernel sends this write(2) as two WRITE requests, split at the page boundary
		// (4096), which the daemon may run at the same time: a crash can leave either one's
		// bytes alone, as a crash during a write(2) can on any file system. Each request is
		// old-or-new (every block whole).
		name: "write-across-blocks", do: func(mp string) error { return syncWriteAt(mp, "f", pattern(6000, 9), 3000) },
		also: []func(string) error{
			func(mp string) error { return syncWriteAt(mp, "f", pattern(6000, 9)[:1096], 3000) },
			func(mp string) error { return syncWriteAt(mp, "f", pattern(6000, 9)[1096:], 4096) },
		},
	},
	{
		// Two WRITE requests too (10000-12288, 12288-15000); the second alone zero-fills the
		// old partial last block first.
		name: "append", do: func(mp string) error { return syncWriteAt(mp, "f", pattern(5000, 9), 10000) },
		also: []func(string) error{
			func(mp string) error { return syncWriteAt(mp, "f", pattern(5000, 9)[:2288], 10000) },
			func(mp string) error { return syncWriteAt(mp, "f", pattern(5000, 9)[2288:], 12288) },
			truncateTo("f", 3*crypto.BlockSize),
		},
	},
	{
		// Past the end with a gap: the partial last block is zero-filled first.
		name: "write-past-end", do: func(mp string) error { return syncWriteAt(mp, "f", pattern(10, 9), 20000) },
		also: []func(string) error{truncateTo("f", 3*crypto.BlockSize)},
	},
	{
		name: "truncate-down-in-block", do: truncateTo("f", 5000),
		also:      []func(string) error{truncateTo("f", crypto.BlockSize)},
		chunkAlso: []func(string) error{truncateTo("f", 0)},
	},
	{
		name: "truncate-down-whole-blocks", do: truncateTo("f", crypto.BlockSize),
		chunkAlso: []func(string) error{truncateTo("f", 0)},
	},
	{name: "truncate-up-in-block", do: truncateTo("g", 4000)},
	{
		name: "truncate-up", do: truncateTo("g", 9000),
		also: []func(string) error{truncateTo("g", crypto.BlockSize)},
	},
	{
		// Two operations for the kernel: the file is made empty, then written.
		name: "create", do: func(mp string) error { return os.WriteFile(filepath.Join(mp, "new"), pattern(5000, 3), 0o640) },
		also: []func(string) error{func(mp string) error { return os.WriteFile(filepath.Join(mp, "new"), nil, 0o640) }},
	},
	{name: "rename-over", do: func(mp string) error { return os.Rename(filepath.Join(mp, "g"), filepath.Join(mp, "f")) }},
	{name: "unlink", do: func(mp string) error { return os.Remove(filepath.Join(mp, "f")) }},
	{name: "mkdir", do: func(mp string) error { return os.Mkdir(filepath.Join(mp, "newdir"), 0o750) }},
	{name: "rmdir", do: func(mp string) error { return os.Remove(filepath.Join(mp, "e")) }},
	{name: "mkdir-long-name", do: func(mp string) error { return os.Mkdir(filepath.Join(mp, crashLong+"dir"), 0o755) }},
	{
		name: "create-long-name", do: func(mp string) error {
			return os.WriteFile(filepath.Join(mp, crashLong+"new"), []byte("new"), 0o644)
		},
		also: []func(string) error{func(mp string) error { return os.WriteFile(filepath.Join(mp, crashLong+"new"), nil, 0o644) }},
	},
	{name: "rename-to-long-name", do: func(mp string) error {
		return os.Rename(filepath.Join(mp, "g"), filepath.Join(mp, crashLong+"g"))
	}},
	{name: "unlink-long-name", do: func(mp string) error { return os.Remove(filepath.Join(mp, crashLong)) }},
	{name: "rename-from-long-name", do: func(mp string) error {
		return os.Rename(filepath.Join(mp, crashLong), filepath.Join(mp, "new"))
	}},
	{name: "rename-dir-to-long-name", do: func(mp string) error {
		return os.Rename(filepath.Join(mp, "d"), filepath.Join(mp, crashLong+"dir"))
	}},
	{name: "symlink", do: func(mp string) error { return os.Symlink("f", filepath.Join(mp, "newdir")) }},
	{
		// Two operations: chown, then the times.
		name: "setattr", times: true, do: func(mp string) error {
			p := filepath.Join(mp, "f")
			if err := os.Chown(p, 1000, 1000); err != nil {
				return err
			}
			t := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
			return os.Chtimes(p, t, t)
		},
		also: []func(string) error{func(mp string) error { return os.Chown(filepath.Join(mp, "f"), 1000, 1000) }},
	},
	{name: "xattr-set", do: func(mp string) error {
		return unix.Setxattr(filepath.Join(mp, "f"), "user.b", []byte("two"), 0)
	}},
	{name: "xattr-replace", do: func(mp string) error {
		return unix.Setxattr(filepath.Join(mp, "f"), "user.a", []byte("three"), unix.XATTR_REPLACE)
	}},
	{name: "xattr-remove", do: func(mp string) error { return unix.Removexattr(filepath.Join(mp, "f"), "user.a") }},
}

// treeState describes every entry of the mount: type and mode, owner, size and content hash,
// symlink target, extended attributes (and the modification time if times). A file that does
// not read whole shows its error.
func treeState(t *testing.T, mp string, times bool) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(mp, func(p string, _ os.DirEntry, err error) error {
		rel, _ := filepath.Rel(mp, p)
		if err != nil {
			out[rel] = "ERROR " + err.Error()
			return nil
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			out[rel] = "ERROR " + err.Error()
			return nil
		}
		s := fmt.Sprintf("mode=%o owner=%d:%d", st.Mode, st.Uid, st.Gid)
		if times && rel != "." {
			s += fmt.Sprintf(" mtime=%d", st.Mtim.Sec)
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			b, err := os.ReadFile(p)
			if err != nil {
				s += " READ ERROR " + err.Error()
			} else {
				s += fmt.Sprintf(" size=%d sha256=%x", len(b), sha256.Sum256(b))
			}
		case unix.S_IFLNK:
			target, _ := os.Readlink(p)
			s += " -> " + target
		}
		buf := make([]byte, 4096)
		if n, err := unix.Llistxattr(p, buf); err == nil {
			var names []string
			for _, x := range strings.Split(string(buf[:n]), "\x00") {
				if x != "" {
					names = append(names, x)
				}
			}
			sort.Strings(names)
			for _, x := range names {
				v := make([]byte, 4096)
				m, err := unix.Lgetxattr(p, x, v)
				if err != nil {
					s += fmt.Sprintf(" %s:ERROR %v", x, err)
				} else {
					s += fmt.Sprintf(" %s=%q", x, v[:m])
				}
			}
		}
		out[rel] = s
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameState returns "" when a and b describe the same tree, else their differences.
func sameState(a, b map[string]string) string {
	var diff []string
	for k, v := range a {
		if b[k] != v {
			diff = append(diff, fmt.Sprintf("  %q: %q vs %q", k, v, b[k]))
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok {
			diff = append(diff, fmt.Sprintf("  %q: missing vs %q", k, v))
		}
	}
	sort.Strings(diff)
	return strings.Join(diff, "\n")
}

var crashCopies atomic.Int64

// copyDir copies a cipherdir (holes and extended attributes kept) to a fresh directory.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(filepath.Dir(src), fmt.Sprintf("copy%d", crashCopies.Add(1)))
	if out, err := exec.Command("cp", "-a", "--sparse=always", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	return dst
}

// inProcess mounts dir here, runs fn on the mount and returns the state it leaves.
func inProcess(t *testing.T, dir string, times bool, fn func(mp string) error) map[string]string {
	t.Helper()
	v, _, wipe, err := unlockAny(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer wipe()
	mp := t.TempDir()
	m, err := Mount(mp, v, Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := unmount(m); err != nil {
			t.Errorf("unmount %s: %v", mp, err)
			syscall.Unmount(mp, syscall.MNT_DETACH)
		}
	}()
	if fn != nil {
		if err := fn(mp); err != nil {
			t.Fatalf("on %s: %v", dir, err)
		}
	}
	return treeState(t, mp, times)
}

// fsckDamage returns the damage fsck finds in dir (temporary directories a crash left are
// notes, not damage).
func fsckDamage(t *testing.T, dir string) []string {
	t.Helper()
	_, v, wipe, err := unlockAny(dir)
	if err != nil {
		return []string{"unlock: " + err.Error()}
	}
	defer wipe()
	problems, err := vault.FsckVolume(context.Background(), v, nil)
	if err != nil {
		return []string{"fsck: " + err.Error()}
	}
	var out []string
	for _, p := range problems {
		if p.Damage() {
			out = append(out, p.String())
		}
	}
	return out
}

// crashRun serves a copy of template in a child process, runs op on its mount with strace
// attached (recording if p is nil, else killing at p), kills the child if it survived (a
// crash after the operation), and returns the copy and the tracer.
func crashRun(t *testing.T, template, dir string, op crashOp, p *crashtest.Point) (string, *crashtest.Tracer) {
	t.Helper()
	// Every run of an operation uses the same directory: the calls' paths in the kill
	// matrix are the same from run to run.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", "--sparse=always", template, dir).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	mp := t.TempDir()
	child := exec.Command(os.Args[0], "-test.run=^$")
	// One P keeps a request's goroutine on one thread (strace counts calls per thread).
	child.Env = append(os.Environ(), crashServeEnv+"="+dir+"\n"+mp, "GOMAXPROCS=1")
	var stderr bytes.Buffer
	child.Stderr = &stderr
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		child.Process.Kill()
		child.Wait()
		syscall.Unmount(mp, syscall.MNT_DETACH)
	}()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
		child.Process.Kill()
		child.Wait()
		t.Fatalf("crash server did not start: %q %v: %s", line, err, stderr.String())
	}
	// Look everything up first: strace counts calls per thread, and the lookups the
	// operation would otherwise start with (opening directories on other threads than the
	// request that changes the files) would shift the counts. The kernel and the daemon keep
	// what they looked up for a second (cacheTimeout, dirCacheTTL).
	filepath.WalkDir(mp, func(string, os.DirEntry, error) error { return nil })
	for _, name := range []string{"f", "g", "e", "d", crashLong, "new", "newdir", crashLong + "dir", crashLong + "new", crashLong + "g"} {
		os.Lstat(filepath.Join(mp, name))
	}
	var tr *crashtest.Tracer
	if p == nil {
		tr, err = crashtest.Record(child.Process.Pid, crashtest.FileCalls, t.TempDir())
	} else {
		tr, err = crashtest.KillAt(child.Process.Pid, crashtest.FileCalls, *p, t.TempDir())
	}
	if err != nil {
		t.Fatal(err)
	}
	opErr := op.do(mp)
	if errors.Is(opErr, syscall.ECONNABORTED) || errors.Is(opErr, syscall.ENOTCONN) {
		tr.Wait(10 * time.Second) // the server died: strace follows once it has seen it go
	}
	if !tr.Exited() {
		tr.Stop()
		if p == nil && opErr != nil {
			t.Fatalf("%s: %v", op.name, opErr)
		}
	}
	child.Process.Kill() // the crash after the operation, if strace did not kill it
	child.Wait()
	if err := syscall.Unmount(mp, syscall.MNT_DETACH); err != nil {
		t.Fatalf("unmount %s: %v", mp, err)
	}
	return dir, tr
}

func TestCrashConsistency(t *testing.T) {
	needRoot(t)
	testdeps.Need(t, testdeps.FUSE, testdeps.Strace)
	full := os.Getenv(crashFullEnv) != ""
	var matrix, unreached []string
	for _, c := range []crypto.CipherID{crypto.AESGCM, crypto.AEGIS, cryptomatorVault} {
		t.Run(string(c), func(t *testing.T) {
			var template string
			if c == cryptomatorVault {
				template = filepath.Join(t.TempDir(), "cipher")
				v, err := cryptomator.Create(context.Background(), template, []byte(crashPassword), cryptomator.CreateOptions{ScryptLogN: 10})
				if err != nil {
					t.Fatal(err)
				}
				v.Close()
			} else {
				template = realVault(t, "", c).Dir
			}
			inProcess(t, template, false, crashSetup)
			for _, op := range crashOps {
				t.Run(op.name, func(t *testing.T) {
					if c == cryptomatorVault && strings.HasPrefix(op.name, "xattr") {
						t.Skip("a Cryptomator vault has no extended attributes")
					}
					old := inProcess(t, copyDir(t, template), op.times, nil)
					want := []map[string]string{old, inProcess(t, copyDir(t, template), op.times, op.do)}
					also := op.also
					if c == cryptomatorVault {
						also = append(slices.Clip(also), op.chunkAlso...)
					}
					for _, a := range also {
						want = append(want, inProcess(t, copyDir(t, template), op.times, a))
					}
					check := func(what, dir string) {
						got := inProcess(t, dir, op.times, nil)
						if !slices.ContainsFunc(want, func(w map[string]string) bool { return sameState(w, got) == "" }) {
							t.Errorf("%s: neither the old nor the new state:\n%s\nagainst the new state:\n%s", what, sameState(old, got), sameState(want[1], got))
						}
						for _, d := range fsckDamage(t, dir) {
							t.Errorf("%s: fsck: %s", what, d)
						}
					}
					runDir := filepath.Join(filepath.Dir(template), "run")
					dir, tr := crashRun(t, template, runDir, op, nil)
					census, err := tr.Calls()
					if err != nil {
						t.Fatal(err)
					}
					check("killed after the operation", dir)
					points := crashtest.Points(census, nil)
					if !full && c == crypto.AEGIS {
						points = firstOfEach(points)
					}
					missed := crashtest.Ordinals(census)
					try := func(p crashtest.Point) (ordinal int) {
						dir, tr := crashRun(t, template, runDir, op, &p)
						call, ordinal, killed := tr.Killed()
						if !killed {
							return 0 // the operation made fewer calls this time
						}
						key := fmt.Sprintf("%s#%d", call.Name, ordinal)
						if _, ok := missed[key]; ok {
							delete(missed, key)
							matrix = append(matrix, fmt.Sprintf("%s %s: %s: %s", c, op.name, key, shorten(call.Text(), dir)))
						}
						check("killed at "+p.String()+" "+call.Text(), dir)
						return ordinal
					}
					for _, p := range points {
						try(p)
					}
					if !full && c == crypto.AEGIS {
						return
					}
					// A call that came on another thread than the calls of its name before it is
					// the first of its thread: strace reaches it only when that thread gets there
					// first, so the same points are tried again, a few times.
					for round := 0; round < 3 && len(missed) > 0; round++ {
						for key := range missed {
							name, k := splitKey(key)
							for n := 1; n <= k; n++ {
								if try(crashtest.Point{Call: name, N: n}) == k {
									break
								}
							}
						}
					}
					for k, l := range missed {
						t.Logf("not reached: %s (%s): another thread made its call of that name first in every run (strace counts per thread)", k, l)
						unreached = append(unreached, fmt.Sprintf("%s %s: %s", c, op.name, k))
					}
				})
			}
		})
	}
	if f := os.Getenv(crashMatrixEnv); f != "" {
		os.WriteFile(f, []byte(strings.Join(matrix, "\n")+"\n"), 0o644)
	}
	t.Logf("calls killed at: %d; not singled out: %d %v", len(matrix), len(unreached), unreached)
}

// cryptomatorVault stands for a Cryptomator vault among the suite's ciphers: it gets every
// kill point, as AES-GCM does (its directory operations are its own code, tree_cryptomator.go).
const cryptomatorVault crypto.CipherID = "cryptomator"

// splitKey splits "NAME#K".
func splitKey(key string) (string, int) {
	name, k, _ := strings.Cut(key, "#")
	n, _ := strconv.Atoi(k)
	return name, n
}

// firstOfEach keeps the first point of each call name.
func firstOfEach(ps []crashtest.Point) []crashtest.Point {
	var out []crashtest.Point
	seen := map[string]bool{}
	for _, p := range ps {
		if !seen[p.Call] {
			seen[p.Call] = true
			out = append(out, p)
		}
	}
	return out
}

// shorten drops the run's directory and long arguments from a call.
func shorten(call, dir string) string {
	call = strings.ReplaceAll(call, dir, "CIPHERDIR")
	if len(call) > 120 {
		call = call[:120] + "…"
	}
	return call
}
