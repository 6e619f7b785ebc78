// Package crashtest kills a process at chosen system calls with strace's fault injection
// (-e inject=CALL:signal=KILL:when=N), for tests that check what a crash leaves on disk: the
// old state or the new one, never a mix (issue 24).
//
// A test first records a census of the operation (Record: the calls it makes, per thread),
// then replays the operation from the same starting state once per kill point (Points): each
// run kills the process on entry to one call, before the kernel executes it, and the test
// checks what is left. Killing after call k is killing before the next one, or after the
// operation returned (the census run itself, which the test ends with SIGKILL), so the
// points cover "before and after each call" as long as the traced set holds every call that
// changes the files.
//
// strace counts calls per thread: a kill point is "the N-th call of that name on a thread".
// A call that falls on another thread than the earlier calls of its name is then reached only
// when its thread gets there first. Three things help: GOMAXPROCS=1 in the process under test
// (a goroutine then mostly keeps its thread; runtime.LockOSThread in a command's main makes
// it keep it even after a slow call such as fsync, as cli's TestMain does), doing the
// lookups before attaching (so they do
// not add calls on other threads), and for a command, counting only the calls on chosen
// paths (Command's paths, PathPoints). Ordinals says which calls a test must have reached;
// Killed says which one a run reached.
//
// How to use it (mountmgr/vfs/crash_test.go for a mount, cli/crash_test.go for a command):
//
//  1. Make the old state once (a template directory); copy it for every run (cp -a).
//  2. Census: run the operation with Record (a running process: attach to its pid) or
//     Command(cmd, FileCalls, paths, nil, dir), end the process with SIGKILL if it is a
//     server (a crash after the operation), read Calls, check the state.
//  3. For each point of Points(census, nil) or PathPoints(census): run again from a fresh
//     copy with KillAt or Command(..., &point, ...); if Killed says it was killed, check that
//     the state is the old or the new one (and run fsck).
//  4. Require every key of Ordinals(census) (or Changing, for Text) to have been killed at.
//
// Tests first call testdeps.Need(t, testdeps.Strace): strace installed, ptrace permitted.
package crashtest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// FileCalls are the system calls that change files, directories or their attributes, as
// strace names them. Calls this strace does not know (the *xattrat calls of Linux 6.13,
// fchmodat2 of 6.6 on strace 6.1) cannot be injected: Available's caller should make the
// process under test use their older forms where it can.
var FileCalls = []string{
	"openat", "open", "creat", "write", "pwrite64", "pwritev", "pwritev2", "ftruncate", "truncate",
	"fallocate", "fsync", "fdatasync", "sync_file_range", "rename", "renameat", "renameat2",
	"unlink", "unlinkat", "rmdir", "mkdir", "mkdirat", "fchmod", "fchmodat", "chmod", "fchown",
	"fchownat", "lchown", "utimensat", "setxattr", "lsetxattr", "fsetxattr", "removexattr",
	"lremovexattr", "fremovexattr", "symlinkat", "linkat", "mknodat",
}

// known filters calls down to those this strace knows.
func known(calls []string) []string {
	var out []string
	for _, c := range calls {
		if knownCall(c) {
			out = append(out, c)
		}
	}
	return out
}

var knownCache = map[string]bool{}

func knownCall(c string) bool {
	if k, ok := knownCache[c]; ok {
		return k
	}
	out, _ := exec.Command("strace", "-o", "/dev/null", "-e", "trace="+c, "true").CombinedOutput()
	k := !bytes.Contains(out, []byte("invalid system call"))
	knownCache[c] = k
	return k
}

// Call is one traced system call.
type Call struct {
	Tid  int
	Name string
	Line string // strace's line for it, arguments and result
}

func (c Call) String() string { return c.Line }

// Text is the call without its thread and result: what it asked for, to compare across runs.
func (c Call) Text() string {
	l := c.Line
	if _, rest, ok := strings.Cut(l, " "); ok {
		l = strings.TrimSpace(rest)
	}
	if u, ok := strings.CutSuffix(l, " <unfinished ...>"); ok {
		return u + ")"
	}
	if m := resultRE.FindStringIndex(l); m != nil {
		l = l[:m[0]+1]
	}
	return strings.TrimSpace(l)
}

// Point is a kill point: on entry to the N-th call named Call of a thread, counting only
// the calls on Path if it is set (strace -P: a call naming it, or a descriptor open on it).
type Point struct {
	Call string
	N    int
	Path string
}

func (p Point) String() string {
	if p.Path != "" {
		return fmt.Sprintf("%s#%d on %s", p.Call, p.N, p.Path)
	}
	return fmt.Sprintf("%s#%d", p.Call, p.N)
}

var pathRE = regexp.MustCompile(`\(\d+<([^>]+)>|"(/[^"]*)"`)

// Path is the first path the call names, or of the first descriptor it passes (traces are
// made with -y, which prints a descriptor's path); "" if none.
func (c Call) Path() string {
	m := pathRE.FindStringSubmatch(c.Line)
	if m == nil {
		return ""
	}
	return m[1] + m[2]
}

// PathPoints returns a kill point for every call of the census, counted among the calls of
// its name on its path (Call.Path): unlike Points, a call the process makes on another
// thread than its neighbours is still reached, as long as no other thread makes a call of
// that name on that path.
func PathPoints(census []Call) []Point {
	n := map[Point]int{}
	var out []Point
	for _, c := range census {
		k := Point{Call: c.Name, Path: c.Path()}
		n[k]++
		k.N = n[k]
		out = append(out, k)
	}
	return out
}

// Points returns the kill points of a census: for each call name, 1 up to the most calls of
// that name one thread made, in the census's order of first appearance. keep, if not nil,
// chooses the calls worth killing at (say, only those on the cipherdir); a point is kept
// when any thread's N-th call of that name is.
func Points(census []Call, keep func(Call) bool) []Point {
	perTid := map[string]map[int]int{}
	var out []Point
	seen := map[Point]bool{}
	for _, c := range census {
		if perTid[c.Name] == nil {
			perTid[c.Name] = map[int]int{}
		}
		perTid[c.Name][c.Tid]++
		p := Point{Call: c.Name, N: perTid[c.Name][c.Tid]}
		if !seen[p] && (keep == nil || keep(c)) {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// Tracer is strace attached to a process or running a command.
type Tracer struct {
	cmd    *exec.Cmd
	log    string
	point  *Point
	done   chan struct{}
	err    error
	stderr bytes.Buffer
}

func args(log string, calls []string, p *Point) []string {
	a := []string{"-f", "-y", "-o", log, "-e", "trace=" + strings.Join(known(calls), ",")}
	if p != nil {
		a = append(a, "-e", fmt.Sprintf("inject=%s:signal=KILL:when=%d", p.Call, p.N))
		if p.Path != "" {
			a = append(a, "-P", p.Path)
		}
	}
	return a
}

// Record attaches to every thread of process pid and traces calls until Stop.
func Record(pid int, calls []string, dir string) (*Tracer, error) {
	return attach(pid, calls, nil, dir)
}

// KillAt attaches to process pid, traces calls and kills it at point p.
func KillAt(pid int, calls []string, p Point, dir string) (*Tracer, error) {
	return attach(pid, calls, &p, dir)
}

func attach(pid int, calls []string, p *Point, dir string) (*Tracer, error) {
	t := &Tracer{log: filepath.Join(dir, fmt.Sprintf("strace.%d.%d.log", pid, time.Now().UnixNano())), point: p, done: make(chan struct{})}
	// Not quiet: the "attached" message says when tracing has begun.
	a := args(t.log, calls, p)
	t.cmd = exec.Command("strace", append(a, "-p", strconv.Itoa(pid))...)
	stderr, err := t.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	r := bufio.NewReader(stderr)
	attached := make(chan error, 1)
	go func() {
		// "strace: Process N attached [with M threads]" comes once all threads are.
		for {
			line, err := r.ReadString('\n')
			t.stderr.WriteString(line)
			if strings.Contains(line, "attached") {
				attached <- nil
				break
			}
			if err != nil {
				attached <- fmt.Errorf("strace -p %d: %s", pid, strings.TrimSpace(t.stderr.String()))
				return
			}
		}
		var rest bytes.Buffer
		rest.ReadFrom(r)
		t.stderr.Write(rest.Bytes())
	}()
	go func() { t.err = t.cmd.Wait(); close(t.done) }()
	select {
	case err := <-attached:
		if err != nil {
			t.cmd.Process.Kill()
			<-t.done
			return nil, err
		}
	case <-time.After(10 * time.Second):
		t.cmd.Process.Kill()
		<-t.done
		return nil, fmt.Errorf("strace -p %d did not attach", pid)
	}
	return t, nil
}

// Command returns cmd wrapped in strace that traces calls and, if p is not nil, kills the
// command at p. If paths are given, only the calls on them count (strace -P: by name, or by
// a descriptor open on one), which leaves out the Go runtime's own reads of /proc and /sys,
// whose number varies from run to run. Run it, then read Calls or Killed. The command's own
// stdin, stdout, stderr and environment carry over.
func Command(cmd *exec.Cmd, calls []string, paths []string, p *Point, dir string) (*exec.Cmd, *Tracer) {
	t := &Tracer{log: filepath.Join(dir, fmt.Sprintf("strace.cmd.%d.log", time.Now().UnixNano())), point: p}
	a := append([]string{"-qq"}, args(t.log, calls, p)...)
	if p == nil || p.Path == "" { // a point's path alone says which calls count
		for _, path := range paths {
			a = append(a, "-P", path)
		}
	}
	a = append(a, "--", cmd.Path)
	w := exec.Command("strace", append(a, cmd.Args[1:]...)...)
	w.Stdin, w.Stdout, w.Stderr, w.Env, w.Dir = cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.Env, cmd.Dir
	return w, t
}

// Stop detaches an attached tracer that has not killed its process (the process goes on) and
// waits for strace to finish; it returns at once if strace has ended (the process was killed).
func (t *Tracer) Stop() {
	select {
	case <-t.done:
		return
	default:
	}
	t.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-t.done:
	case <-time.After(10 * time.Second):
		t.cmd.Process.Kill()
		<-t.done
	}
}

// Wait waits up to d for strace to finish (the process it traces has died) and reports
// whether it did.
func (t *Tracer) Wait(d time.Duration) bool {
	select {
	case <-t.done:
		return true
	case <-time.After(d):
		return false
	}
}

// Exited reports whether strace has finished: for KillAt, that the process died.
func (t *Tracer) Exited() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

var resultRE = regexp.MustCompile(`\)\s+= [^=]*$`)

var lineRE = regexp.MustCompile(`^(\d+) +([a-z0-9_]+)\(`)

// Calls returns the calls traced, in order (each call once, on its first line).
func (t *Tracer) Calls() ([]Call, error) {
	b, err := os.ReadFile(t.log)
	if err != nil {
		return nil, err
	}
	var out []Call
	for _, l := range strings.Split(string(b), "\n") {
		m := lineRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		tid, _ := strconv.Atoi(m[1])
		out = append(out, Call{Tid: tid, Name: m[2], Line: l})
	}
	return out, nil
}

// Killed returns the call the process was killed at (the point's call on the thread that
// reached it first), its place among the calls of its name on all threads (1 for the first;
// compare Ordinals of the census), and whether the process was killed there.
func (t *Tracer) Killed() (c Call, ordinal int, killed bool) {
	if t.point == nil {
		return Call{}, 0, false
	}
	calls, err := t.Calls()
	if err != nil {
		return Call{}, 0, false
	}
	n := map[int]int{}
	for _, c := range calls {
		if c.Name != t.point.Call {
			continue
		}
		ordinal++
		n[c.Tid]++
		if n[c.Tid] == t.point.N {
			b, _ := os.ReadFile(t.log)
			return c, ordinal, bytes.Contains(b, []byte("+++ killed by SIGKILL +++"))
		}
	}
	return Call{}, 0, false
}

// Ordinals returns, for each call of the census that succeeded, "NAME#K" for the K-th call
// of that name on any thread: what a test must have killed at, each in some run (Killed's
// ordinal). A call that failed changed nothing: killing before it leaves what killing
// before the next one does, so a run that missed it loses nothing.
func Ordinals(census []Call) map[string]string {
	out := map[string]string{}
	n := map[string]int{}
	for _, c := range census {
		n[c.Name]++
		if !failedRE.MatchString(c.Line) {
			out[fmt.Sprintf("%s#%d", c.Name, n[c.Name])] = c.Text()
		}
	}
	return out
}

// Changing returns the census's calls that succeeded, as Text after norm (say, a run's
// directory replaced by a placeholder): the calls a test must have killed at, each in some
// run. A call that failed changed nothing: killing before it leaves what killing before the
// next one does, so a run that missed it (the call fell on another thread, see the package
// comment) loses nothing.
func Changing(census []Call, norm func(string) string) map[string]bool {
	out := map[string]bool{}
	for _, c := range census {
		if !failedRE.MatchString(c.Line) {
			out[norm(c.Text())] = true
		}
	}
	return out
}

var failedRE = regexp.MustCompile(`\)\s+= -1 `)
