package mountbench

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/testdeps"
	"github.com/vaultui/vaultui/mountmgr"
)

// The test binary stands in for the vaultui executable: "daemon" runs the mount daemon and
// LoopbackEnv serves the passthrough, as main does.
func TestMain(m *testing.M) {
	if os.Getenv(LoopbackEnv) != "" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
		err := ServeLoopbackChild(ctx, os.Stdout)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if len(os.Args) > 1 && os.Args[1] == "daemon" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
		err := mountmgr.Serve(ctx, mountmgr.ServeOptions{})
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "daemon:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// needRootAndFUSE skips t unless it runs as root (for why) and FUSE mounts work here.
func needRootAndFUSE(t *testing.T, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: " + why)
	}
	testdeps.Need(t, testdeps.FUSE)
}

// TestRunSmall runs the bench on tiny sizes over two rounds: every figure of every round must
// come out positive, every target served by a process whose memory was read, and the user's
// own daemon dir must stay untouched.
func TestRunSmall(t *testing.T) {
	needRootAndFUSE(t, "the bench is tested as root only")
	userRun := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", userRun)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	os.WriteFile(src+"/a", []byte("untar me"), 0o644)
	cfg := Config{Dir: t.TempDir(), Size: 4 << 20, RandomReads: 200, Files: 100, Runs: 2,
		Kinds: []Kind{mustKind(t, "gcm"), mustKind(t, "cryptomator")}, UntarFrom: src, Exe: exe, RepoFiles: 30, Transactions: 10, TreeFiles: 250,
		NoBuild: true} // TestRunCold builds, once warm and once cold: six cold builds here would add minutes
	if bin := os.Getenv("GOCRYPTFS"); bin != "" {
		cfg.Gocryptfs = bin
	} else if _, err := os.Stat("/usr/bin/gocryptfs"); err == nil {
		cfg.Gocryptfs = "/usr/bin/gocryptfs"
	}
	var rounds int
	rep, err := Run(context.Background(), cfg, func(int, []Result) { rounds++ })
	if err != nil {
		t.Fatal(err)
	}
	want := 3 // the passthrough, AES-GCM, Cryptomator
	if cfg.Gocryptfs != "" {
		want = 4
		if !strings.HasPrefix(rep.Gocryptfs, "gocryptfs ") { // "gocryptfs v2.6.1-43-g1a03e99; ..." or Debian's "gocryptfs 2.3; ..."
			t.Errorf("gocryptfs version %q", rep.Gocryptfs)
		}
	}
	if rounds != 2 || len(rep.Rounds) != 2 || len(rep.Targets) != want || len(rep.Medians) != want {
		t.Fatalf("%d rounds reported, %d kept, targets %q, %d medians", rounds, len(rep.Rounds), rep.Targets, len(rep.Medians))
	}
	for _, round := range rep.Rounds {
		for _, r := range round {
			if r.Err != nil {
				t.Errorf("%s: %v", r.Target, r.Err)
				continue
			}
			checkFigures(t, r, false, cfg.NoBuild)
			if r.PeakRSS < 1<<20 {
				t.Errorf("%s: peak RSS %d bytes: its server's memory was not read", r.Target, r.PeakRSS)
			}
			if r.ServerCPUSeconds <= 0 {
				t.Errorf("%s: server CPU %v s: its server's times were not read", r.Target, r.ServerCPUSeconds)
			}
		}
	}
	for i, ratio := range rep.Ratios("vaultui "+crypto.AESGCM.String(), "loopback (no crypto)") {
		if ratio <= 0 && !Metrics[i].Cold && !(cfg.NoBuild && Metrics[i].Name == "go build") {
			t.Errorf("ratios to the passthrough: %v", rep.Ratios("vaultui "+crypto.AESGCM.String(), "loopback (no crypto)"))
			break
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(userRun, "vaultui")); len(ents) != 0 {
		t.Errorf("the bench touched the user's daemon dir: %v", ents)
	}
	if ents, _ := os.ReadDir(cfg.Dir); len(ents) != 0 {
		t.Errorf("left behind in %s: %v", cfg.Dir, ents)
	}
}

// checkFigures fails the test unless every figure of r is positive, the cold ones only when
// cold (and none then); real-world ones need git and sqlite3.
func checkFigures(t *testing.T, r Result, cold, noBuild bool) {
	t.Helper()
	_, noGit := exec.LookPath("git")
	_, noSQLite := exec.LookPath("sqlite3")
	_, noGo := exec.LookPath("go")
	for _, m := range Metrics {
		v := m.Get(r)
		switch {
		case m.Cold && !cold:
			if v != 0 {
				t.Errorf("%s: %s is %v without --cold", r.Target, m.Name, v)
			}
		case m.RealWorld && strings.HasPrefix(m.Name, "sqlite") && noSQLite != nil,
			m.RealWorld && strings.HasPrefix(m.Name, "git") && noGit != nil,
			m.RealWorld && strings.HasPrefix(m.Name, "grep") && noGit != nil,
			m.RealWorld && strings.HasPrefix(m.Name, "go build") && (noGo != nil || noBuild):
			t.Logf("%s: %s not measured: %v %v %v", r.Target, m.Name, noGit, noSQLite, noGo)
		case v <= 0:
			t.Errorf("%s: %s is %v", r.Target, m.Name, v)
		}
	}
}

// TestRunCold runs every workload warm and with the caches dropped, on tiny sizes: every cold
// figure comes out too.
func TestRunCold(t *testing.T) {
	needRootAndFUSE(t, "dropping the caches")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	os.WriteFile(src+"/a", []byte("untar me"), 0o644)
	cfg := Config{Dir: t.TempDir(), Size: 1 << 20, RandomReads: 50, Files: 20, Runs: 1, NoLoopback: true,
		Kinds: []Kind{mustKind(t, "aegis")}, UntarFrom: src, Exe: exe, RepoFiles: 20, Transactions: 5, TreeFiles: 150, Cold: true}
	rep, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Medians) != 1 || rep.Medians[0].Err != nil || rep.Medians[0].Cold == nil {
		t.Fatalf("medians: %+v", rep.Medians)
	}
	checkFigures(t, rep.Medians[0], true, cfg.NoBuild)
	// As root the server's peak can be reset before the tree, so the tree's peak is known
	// and lies within the whole run's.
	for _, r := range []Result{rep.Rounds[0][0], *rep.Rounds[0][0].Cold} {
		if r.TreePeakRSS == 0 || r.TreePeakRSS > rep.Rounds[0][0].PeakRSS {
			t.Errorf("peak RSS over the tree %d, over the whole run %d", r.TreePeakRSS, rep.Rounds[0][0].PeakRSS)
		}
	}
}

// TestRatiosArePerRound: the ratio is the median of each round's ratio, which differs from
// the ratio of the medians when the load moves both targets together.
func TestRatiosArePerRound(t *testing.T) {
	rep := Report{Targets: []string{"a", "b"}}
	// Round speeds of a: 100, 200, 300; of b: 50, 400, 150. Per-round ratios a/b: 2, 0.5, 2
	// (median 2); ratio of medians 200/150 = 1.33. Times (lower is better) the same way.
	for _, p := range [][2]float64{{100, 50}, {200, 400}, {300, 150}} {
		rep.Rounds = append(rep.Rounds, []Result{
			{Target: "a", WriteMBps: p[0], CreateSeconds: 1 / p[0]},
			{Target: "b", WriteMBps: p[1], CreateSeconds: 1 / p[1]},
		})
	}
	got := rep.Ratios("a", "b")
	for i, m := range Metrics {
		want := 0.0 // not measured
		if m.Name == "write" || m.Name == "create" {
			want = 2
		}
		if d := got[i] - want; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s: ratio %v, want %v", m.Name, got[i], want)
		}
	}
	// A failed round is left out rather than counted as zero.
	rep.Rounds[1][0].Err = fmt.Errorf("boom")
	if got := rep.Ratios("a", "b")[0]; got != 2 {
		t.Errorf("with a failed round: %v, want 2", got)
	}
	if got := rep.Ratios("a", "nope"); got[0] != 0 {
		t.Errorf("unknown base: %v", got)
	}
}

// TestGocryptfsVersion: the report names the binary's version, and something that is not
// gocryptfs is refused.
func TestGocryptfsVersion(t *testing.T) {
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good"), filepath.Join(dir, "bad")
	os.WriteFile(good, []byte("#!/bin/sh\necho 'gocryptfs v2.6.1-43-g1a03e99; go-fuse v2.9.0; 2026-12-01 go1.26.8 linux/amd64'\necho second\n"), 0o755)
	os.WriteFile(bad, []byte("#!/bin/sh\necho hello\n"), 0o755)
	v, err := GocryptfsVersion(good)
	if err != nil || v != "gocryptfs v2.6.1-43-g1a03e99; go-fuse v2.9.0; 2026-12-01 go1.26.8 linux/amd64" {
		t.Errorf("good: %q, %v", v, err)
	}
	if _, err := GocryptfsVersion(bad); err == nil || !strings.Contains(err.Error(), "not a gocryptfs") {
		t.Errorf("bad: %v", err)
	}
	if _, err := GocryptfsVersion(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing binary accepted")
	}
}

// TestCPUSeconds reads this process's own times: positive after some work, and 0 for a
// process that does not exist. The work is bounded by CPU time, not wall time: on a loaded
// machine 50 ms of wall time bought less than a clock tick of CPU (seen in CI).
func TestCPUSeconds(t *testing.T) {
	x := 0
	for start := time.Now(); cpuSeconds(os.Getpid()) <= 0 && time.Since(start) < time.Minute; {
		for range 1 << 20 {
			x++
		}
	}
	if s := cpuSeconds(os.Getpid()); s <= 0 {
		t.Errorf("cpuSeconds of this process: %v (after %d loops)", s, x)
	}
	if s := cpuSeconds(1 << 30); s != 0 {
		t.Errorf("cpuSeconds of no process: %v", s)
	}
}

// TestLoopbackChildStopsWithBench: a passthrough child whose bench died (SIGTERM, as
// Pdeathsig sends) unmounts and exits instead of serving an orphaned mount.
func TestLoopbackChildStopsWithBench(t *testing.T) {
	needRootAndFUSE(t, "the bench is tested as root only")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	backing, mnt := t.TempDir(), t.TempDir()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), LoopbackEnv+"="+backing, LoopbackMountEnv+"="+mnt)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer syscall.Unmount(mnt, syscall.MNT_DETACH)
	if line, err := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		cmd.Process.Kill()
		t.Fatalf("child said %q, %v", line, err)
	}
	if !isMounted(mnt) {
		t.Fatal("child ready but nothing mounted")
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("child exited with %v", err)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("child still serving 10 s after SIGTERM")
	}
	if isMounted(mnt) {
		t.Error("still mounted after the child exited")
	}
}

// TestGeoMeanWithoutBuild: the real-world geometric mean leaves out go build, bound by the
// compiler, only when asked to, and never counts the bench's own workloads.
func TestGeoMeanWithoutBuild(t *testing.T) {
	rep := Report{Targets: []string{"a", "b"}, Rounds: [][]Result{{
		{Target: "a", WriteMBps: 100, RealWorld: RealWorld{DuSeconds: 1, FindSeconds: 1, BuildSeconds: 16}},
		{Target: "b", WriteMBps: 1, RealWorld: RealWorld{DuSeconds: 4, FindSeconds: 4, BuildSeconds: 1}},
	}}}
	// du and find: 4x each; go build: 1/16.
	if got := rep.GeoMean("a", "b", false, false); math.Abs(got-4) > 1e-9 {
		t.Errorf("without go build: %v, want 4", got)
	}
	if got := rep.GeoMean("a", "b", false, true); math.Abs(got-1) > 1e-9 {
		t.Errorf("with go build: %v, want 1 (cube root of 4*4/16)", got)
	}
	if got := rep.GeoMean("a", "b", true, true); got != 0 {
		t.Errorf("cold, not measured: %v, want 0", got)
	}
}

// TestServerPeakKeepsEarlier: resetting the peak for one workload (the tree's) does not lose
// the whole run's peak from before the reset.
func TestServerPeakKeepsEarlier(t *testing.T) {
	s := &serverPeak{pid: os.Getpid()}
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = 1
	}
	high := peakRSS(s.pid)
	runtime.KeepAlive(buf)
	buf = nil
	debug.FreeOSMemory()
	if !s.reset() {
		t.Skip("cannot write /proc/self/clear_refs")
	}
	// The kernel's counters are per-thread caches, a few pages off at any moment: compare
	// in MiB, against the 64 MiB the buffer took.
	if now := peakRSS(s.pid); now > high-32<<20 {
		t.Fatalf("VmHWM %d after the reset, %d before: the reset did nothing", now, high)
	}
	if got := s.peak(); got < high-1<<20 {
		t.Errorf("peak %d after a reset, below the %d reached before it", got, high)
	}
}

func mustKind(t testing.TB, name string) Kind {
	t.Helper()
	k, err := ParseKind(name)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
