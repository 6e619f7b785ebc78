// Package mountbench measures mounted vaults: sequential write and read with 1 MiB requests,
// random 4 KiB reads, creating empty files, listing them with ls -l, deleting them
// and untarring a source tree. It runs the same workload on a vaultui mount per cipher, on a
// plain go-fuse passthrough mount (the ceiling: FUSE without crypto) and, when given, on
// gocryptfs, all backed by the same directory (tmpfs by default) so the ratios come out of one
// run.
//
// Every target is served by a process of its own, as in real use: vaultui by its daemon
// (started per target with private XDG dirs, so the user's own daemon is never touched), the
// passthrough by a child process and gocryptfs in the foreground. So no file system shares the
// bench's process, and each server's peak memory (VmHWM) is measured.
//
// It backs "vaultui bench"; it prints nothing itself.
//
// It imports mountmgr, mountmgr/vfs, vault and crypto; only cli imports it.
package mountbench

import (
	"bufio"
	"bytes"
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/mountmgr/vfs"
	"github.com/vaultui/vaultui/vault"
)

// Config says what to measure.
type Config struct {
	// Dir is where the backing directories go (default /dev/shm, a tmpfs, so the disk does
	// not dominate).
	Dir string
	// Size of the sequential file (default 1 GiB); requests are 1 MiB.
	Size int64
	// RandomReads is how many random 4 KiB reads to time (default 20000).
	RandomReads int
	// Files is how many empty files to create, list and delete (default 10000).
	Files int
	// Kinds of vaultui vault to mount (default: every cipher of the default format).
	Kinds []Kind
	// Exe is the vaultui executable: it serves vaultui mounts ("Exe daemon") and the
	// passthrough ("Exe bench" with LoopbackEnv set, see ServeLoopbackChild). Required.
	Exe string
	// Gocryptfs is the gocryptfs binary; "" skips it.
	Gocryptfs string
	// NoLoopback skips the passthrough ceiling.
	NoLoopback bool
	// Runs is how many rounds to run; every round measures every target (default 1).
	Runs int
	// UntarFrom, if set, is a directory (e.g. Go's source tree) tarred once and untarred into
	// each mount with tar(1), timed.
	UntarFrom string
	// Cold runs every workload a second time with the kernel's caches dropped (echo 3 >
	// /proc/sys/vm/drop_caches, root only) between creating its files and using them, as after
	// a night's sleep; the figures go to Result.Cold.
	Cold bool
	// RepoFiles is the size of the git repository the real-world workloads clone, check out
	// and grep (default 10000 files); a tenth of them differ on its second branch. Without
	// git(1) those workloads are skipped.
	RepoFiles int
	// Transactions is how many SQLite transactions to commit (default 5000); without
	// sqlite3(1) that workload is skipped.
	Transactions int
	// TreeFiles is how many small files du -s and find walk (default 100000).
	TreeFiles int
	// Baseline, if set, is another vaultui executable (e.g. a build of main) whose daemon
	// serves targets of its own, "baseline <cipher>", so a change is measured side by side
	// with the code before it.
	Baseline string
	// NoBuild leaves out the go build workload: with its cold cache it compiles the part of
	// the standard library it needs, tens of seconds per target and round (tests set it
	// where another test covers the build).
	NoBuild bool

	repo   string // the bare repository the git workloads clone; "" skips them
	sqlite bool   // sqlite3(1) is there
	// goBuild: go(1) is there to build the bench's module.
	goBuild bool
	// server is the process serving the target being measured (set per target by runOne),
	// for the peak memory of the tree workload.
	server *serverPeak
}

// Result holds one target's figures of one round (or, in Report.Medians, their medians).
type Result struct {
	Target        string  // e.g. "vaultui AEGIS-256X2", "gocryptfs AES-256-GCM", "loopback"
	WriteMBps     float64 // sequential write, 1 MiB requests
	ReadMBps      float64 // sequential read, 1 MiB requests, page cache dropped first
	RandReadIOPS  float64 // random 4 KiB reads
	CreatePerSec  float64 // empty files created per second
	ListPerSec    float64 // "ls -l" of them (stat and two xattrs per file), entries per second
	CreateSeconds float64
	ListSeconds   float64
	DeleteSeconds float64 // rm -rf of the created files
	UntarSeconds  float64 // 0 when not measured
	RealWorld
	// Cold holds the same workloads' figures with the caches dropped before each (Config.Cold);
	// nil without.
	Cold *Result `json:",omitempty"`
	// PeakRSS is the serving process's peak resident memory (VmHWM) in bytes, read after the
	// workload; 0 when it could not be read.
	PeakRSS uint64
	// ServerCPUSeconds is the CPU time (user + system) the serving process used over the
	// whole workload, mounting included: less disturbed by other load than the timings.
	ServerCPUSeconds float64
	Err              error `json:",omitempty"`
}

// Report is the outcome of a run.
type Report struct {
	// Gocryptfs is what "gocryptfs -version" printed (first line), "" without gocryptfs.
	Gocryptfs string `json:",omitempty"`
	// Rounds holds every round's results, [round][target], targets in Targets' order.
	Rounds  [][]Result
	Targets []string
	// Medians is each target's median of every figure over the rounds.
	Medians []Result
}

// Metric is one figure of a Result.
type Metric struct {
	Name string
	// Get returns the figure; HigherIsBetter says whether a larger value means faster.
	Get            func(Result) float64
	HigherIsBetter bool
	// RealWorld marks the workloads of a working day (git, SQLite, grep, go build, du, find),
	// whose geometric mean the report gives.
	RealWorld bool
	// CPUBound marks a real-world workload bound by CPU work no file system changes (the
	// compiler in go build); the report gives the geometric mean with and without it.
	CPUBound bool
	// Cold marks the figure of a workload run with the caches dropped (Result.Cold).
	Cold bool
}

// Metrics are the workloads in the order they run, then the same with cold caches.
var Metrics = withCold([]Metric{
	{Name: "write", Get: func(r Result) float64 { return r.WriteMBps }, HigherIsBetter: true},
	{Name: "read", Get: func(r Result) float64 { return r.ReadMBps }, HigherIsBetter: true},
	{Name: "4K reads", Get: func(r Result) float64 { return r.RandReadIOPS }, HigherIsBetter: true},
	{Name: "create", Get: func(r Result) float64 { return r.CreateSeconds }},
	{Name: "ls -l", Get: func(r Result) float64 { return r.ListSeconds }},
	{Name: "rm -rf", Get: func(r Result) float64 { return r.DeleteSeconds }},
	{Name: "untar", Get: func(r Result) float64 { return r.UntarSeconds }},
	{Name: "git clone", Get: func(r Result) float64 { return r.CloneSeconds }, RealWorld: true},
	{Name: "git status", Get: func(r Result) float64 { return r.StatusSeconds }, RealWorld: true},
	{Name: "git status again", Get: func(r Result) float64 { return r.StatusAgainSeconds }, RealWorld: true},
	{Name: "git checkout", Get: func(r Result) float64 { return r.CheckoutSeconds }, RealWorld: true},
	{Name: "sqlite", Get: func(r Result) float64 { return r.SQLiteSeconds }, RealWorld: true},
	{Name: "grep -r", Get: func(r Result) float64 { return r.GrepSeconds }, RealWorld: true},
	{Name: "grep -r again", Get: func(r Result) float64 { return r.GrepAgainSeconds }, RealWorld: true},
	{Name: "du -s", Get: func(r Result) float64 { return r.DuSeconds }, RealWorld: true},
	{Name: "find", Get: func(r Result) float64 { return r.FindSeconds }, RealWorld: true},
	{Name: "go build", Get: func(r Result) float64 { return r.BuildSeconds }, RealWorld: true, CPUBound: true},
})

// withCold appends to the warm metrics their cold twins, which read Result.Cold.
func withCold(warm []Metric) []Metric {
	out := append([]Metric(nil), warm...)
	for _, m := range warm {
		get := m.Get
		m.Name += " cold"
		m.Cold = true
		m.Get = func(r Result) float64 {
			if r.Cold == nil {
				return 0
			}
			return get(*r.Cold)
		}
		out = append(out, m)
	}
	return out
}

// Ratios returns, per metric, the median over rounds of target's speed relative to base's in
// the same round (>1: target is faster). Ratios of one round share that round's machine load,
// so their median is steadier than a ratio of medians. A metric either side lacks is 0.
func (rep Report) Ratios(target, base string) []float64 {
	ti, bi := slices.Index(rep.Targets, target), slices.Index(rep.Targets, base)
	out := make([]float64, len(Metrics))
	if ti < 0 || bi < 0 {
		return out
	}
	for m, metric := range Metrics {
		var v []float64
		for _, round := range rep.Rounds {
			if ti >= len(round) || bi >= len(round) || round[ti].Err != nil || round[bi].Err != nil {
				continue
			}
			t, b := metric.Get(round[ti]), metric.Get(round[bi])
			if t <= 0 || b <= 0 {
				continue
			}
			if metric.HigherIsBetter {
				v = append(v, t/b)
			} else {
				v = append(v, b/t)
			}
		}
		out[m] = medianOf(v)
	}
	return out
}

const (
	reqSize  = 1 << 20
	pageSize = 4096
)

// server is one mounted target: its serving process and how to unmount it.
type server struct {
	pid     int
	unmount func() error
}

type target struct {
	name  string
	mount func(ctx context.Context, work, backing, mnt string) (*server, error)
}

// Run measures every target, calling report with each round's results as the round ends.
func Run(ctx context.Context, cfg Config, report func(round int, r []Result)) (Report, error) {
	cfg.setDefaults()
	var rep Report
	if cfg.Exe == "" {
		return rep, errors.New("mountbench: no vaultui executable to serve the mounts")
	}
	targets, gocryptfs, err := cfg.targets()
	if err != nil {
		return rep, err
	}
	rep.Gocryptfs = gocryptfs
	for _, t := range targets {
		rep.Targets = append(rep.Targets, t.name)
	}
	if cfg.UntarFrom != "" {
		tarball, err := makeTarball(cfg.Dir, cfg.UntarFrom)
		if err != nil {
			return rep, err
		}
		defer os.Remove(tarball)
		cfg.UntarFrom = tarball
	}
	if _, err := exec.LookPath("git"); err == nil {
		if cfg.repo, err = makeRepo(cfg.Dir, cfg.RepoFiles); err != nil {
			return rep, err
		}
		defer os.RemoveAll(cfg.repo)
	}
	_, err = exec.LookPath("sqlite3")
	cfg.sqlite = err == nil
	_, err = exec.LookPath("go")
	cfg.goBuild = err == nil && !cfg.NoBuild
	// Every round goes over every target, rather than repeating one target before the next,
	// so a slow drift of the machine (other load, caches) lands on every target alike. The
	// starting target rotates so none always runs right after the same neighbour.
	for round := 0; round < cfg.Runs && ctx.Err() == nil; round++ {
		results := make([]Result, len(targets))
		for k := range targets {
			i := (round + k) % len(targets)
			if ctx.Err() != nil {
				break
			}
			results[i] = runOne(ctx, cfg, targets[i])
		}
		if ctx.Err() != nil {
			break
		}
		rep.Rounds = append(rep.Rounds, results)
		if report != nil {
			report(round, results)
		}
	}
	for i := range targets {
		var runs []Result
		for _, round := range rep.Rounds {
			runs = append(runs, round[i])
		}
		if len(runs) > 0 {
			rep.Medians = append(rep.Medians, median(runs))
		}
	}
	return rep, ctx.Err()
}

// setDefaults fills in what cfg leaves to Run.
func (cfg *Config) setDefaults() {
	if cfg.Dir == "" {
		cfg.Dir = "/dev/shm"
	}
	orDefault(&cfg.Size, 1<<30)
	cfg.Size = (cfg.Size + reqSize - 1) / reqSize * reqSize
	orDefault(&cfg.RandomReads, 20000)
	orDefault(&cfg.Files, 10000)
	orDefault(&cfg.Runs, 1)
	orDefault(&cfg.RepoFiles, 10000)
	orDefault(&cfg.Transactions, 5000)
	orDefault(&cfg.TreeFiles, 100000)
	if len(cfg.Kinds) == 0 {
		for _, c := range []crypto.CipherID{crypto.AEGIS, crypto.AESGCM, crypto.XChaCha, crypto.AESSIV} {
			cfg.Kinds = append(cfg.Kinds, Kind{Format: vault.DefaultFormat(), Cipher: c})
		}
	}
}

// orDefault sets *p to def unless it is positive.
func orDefault[T int | int64](p *T, def T) {
	if *p <= 0 {
		*p = def
	}
}

// targets lists what cfg asks to measure, in the report's order, and the version of the
// gocryptfs measured ("" if none).
func (cfg Config) targets() (targets []target, gocryptfs string, err error) {
	if !cfg.NoLoopback {
		targets = append(targets, target{"loopback (no crypto)", func(ctx context.Context, work, b, m string) (*server, error) {
			return mountLoopbackChild(ctx, cfg.Exe, work, b, m)
		}})
	}
	for _, c := range cfg.Kinds {
		targets = append(targets, target{c.targetName(), func(ctx context.Context, work, b, m string) (*server, error) {
			return mountVaultui(ctx, cfg.Exe, work, b, m, c)
		}})
		if cfg.Baseline != "" {
			targets = append(targets, target{strings.Replace(c.targetName(), "vaultui", "baseline", 1), func(ctx context.Context, work, b, m string) (*server, error) {
				return mountVaultui(ctx, cfg.Baseline, work, b, m, c)
			}})
		}
	}
	if cfg.Gocryptfs != "" {
		if gocryptfs, err = GocryptfsVersion(cfg.Gocryptfs); err != nil {
			return nil, "", err
		}
		targets = append(targets, target{"gocryptfs " + crypto.AESGCM.String(), func(ctx context.Context, work, b, m string) (*server, error) {
			return mountGocryptfs(ctx, cfg.Gocryptfs, b, m)
		}})
	}
	return targets, gocryptfs, nil
}

// GocryptfsVersion runs "bin -version" and returns the first line of what it prints.
func GocryptfsVersion(bin string) (string, error) {
	out, err := exec.Command(bin, "-version").Output()
	if err != nil {
		return "", fmt.Errorf("mountbench: %s -version: %w", bin, err)
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if !strings.HasPrefix(line, "gocryptfs") {
		return "", fmt.Errorf("mountbench: %s -version printed %q, not a gocryptfs version", bin, line)
	}
	return line, nil
}

func runOne(ctx context.Context, cfg Config, tg target) Result {
	r := Result{Target: tg.name}
	work, err := os.MkdirTemp(cfg.Dir, "vaultui-bench-")
	if err != nil {
		r.Err = err
		return r
	}
	defer os.RemoveAll(work)
	backing, mnt := filepath.Join(work, "backing"), filepath.Join(work, "mnt")
	os.Mkdir(backing, 0o700)
	os.Mkdir(mnt, 0o700)
	srv, err := tg.mount(ctx, work, backing, mnt)
	if err != nil {
		r.Err = fmt.Errorf("%s: %w", tg.name, err)
		return r
	}
	defer func() {
		if err := srv.unmount(); err != nil {
			syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
	}()
	cfg.server = &serverPeak{pid: srv.pid}
	r.Err = measure(ctx, cfg, mnt, &r)
	r.PeakRSS = cfg.server.peak()
	r.ServerCPUSeconds = cpuSeconds(srv.pid)
	return r
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times: 100 on every Linux port.
const clockTicks = 100

// cpuSeconds reads the user and system time of process pid; 0 when it cannot.
func cpuSeconds(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name, in parentheses, may hold spaces; fields count from after it.
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, err1 := strconv.ParseUint(f[11], 10, 64)
	stime, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return float64(utime+stime) / clockTicks
}

// serverPeak follows a serving process's peak resident memory (VmHWM) across resets: a
// workload that wants its own peak resets the kernel's mark, and the peak before the reset is
// kept for the whole run's.
type serverPeak struct {
	pid     int
	earlier uint64 // the highest VmHWM read before the last reset
}

// reset sets the process's VmHWM to its current resident memory (clear_refs 5), so that a
// later peakRSS is the peak of what ran in between. It reports whether it could (the process
// must be ours, or we root).
func (s *serverPeak) reset() bool {
	if s == nil || s.pid <= 0 {
		return false
	}
	s.earlier = max(s.earlier, peakRSS(s.pid))
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", s.pid), []byte("5"), 0) == nil
}

// peak is the process's peak resident memory over the whole run; 0 when it cannot be read.
func (s *serverPeak) peak() uint64 {
	return max(s.earlier, peakRSS(s.pid))
}

// peakRSS reads VmHWM of process pid, in bytes; 0 when it cannot.
func peakRSS(pid int) uint64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}

func measure(ctx context.Context, cfg Config, mnt string, r *Result) error {
	if err := measurePass(ctx, cfg, filepath.Join(mnt, "warm"), r, false); err != nil {
		return err
	}
	if cfg.Cold {
		r.Cold = &Result{Target: r.Target}
		if err := measurePass(ctx, cfg, filepath.Join(mnt, "cold"), r.Cold, true); err != nil {
			return fmt.Errorf("cold caches: %w", err)
		}
	}
	return nil
}

// measurePass runs every workload in dir (made here), with cold caches or warm.
func measurePass(ctx context.Context, cfg Config, dir string, r *Result, cold bool) error {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	if err := measureData(ctx, cfg, dir, r, cold); err != nil {
		return err
	}
	if err := measureFiles(ctx, cfg, dir, r, cold); err != nil {
		return err
	}
	if cfg.UntarFrom != "" {
		dest := filepath.Join(dir, "untar")
		if err := os.Mkdir(dest, 0o700); err != nil {
			return err
		}
		var err error
		if r.UntarSeconds, err = settledTimed(cold, false, exec.CommandContext(ctx, "tar", "-xf", cfg.UntarFrom, "-C", dest)); err != nil {
			return err
		}
	}
	return measureRealWorld(ctx, cfg, dir, &r.RealWorld, cold)
}

// settle readies the caches for the next workload. Cold: the kernel drops its page, entry and
// inode caches (every file system's alike; a FUSE server hears FORGET for every inode it
// loses). Warm: with expire, a pause for the kernel's entry and attribute caches to expire
// (1 s here and in gocryptfs), as a user's would between commands; else nothing.
func settle(cold, expire bool) error {
	if cold {
		return DropCaches()
	}
	if expire {
		time.Sleep(1100 * time.Millisecond)
	}
	return nil
}

// settledTimed readies the caches (settle) and then times cmd (timed).
func settledTimed(cold, expire bool, cmd *exec.Cmd) (float64, error) {
	if err := settle(cold, expire); err != nil {
		return 0, err
	}
	d, _, err := timed(cmd)
	return d, err
}

// DropCaches drops the kernel's clean page cache, dentries and inodes (root only).
func DropCaches() error {
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0); err != nil {
		return fmt.Errorf("dropping the caches: %w", err)
	}
	return nil
}

// measureData times the sequential write, read and the random 4 KiB reads. Warm, the file's
// pages are dropped before each read with FADV_DONTNEED and the random reads are announced
// with FADV_RANDOM. Cold, the file is opened anew after the caches are dropped and read with
// no advice, as most programs do, so what the kernel's readahead makes of the reads counts.
func measureData(ctx context.Context, cfg Config, dir string, r *Result, cold bool) error {
	buf := make([]byte, reqSize)
	crand.Read(buf)
	p := filepath.Join(dir, "seq.bin")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer func() { f.Close() }()
	start := time.Now()
	for off := int64(0); off < cfg.Size; off += reqSize {
		if _, err := f.Write(buf); err != nil {
			return fmt.Errorf("sequential write: %w", err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	r.WriteMBps = mbps(cfg.Size, time.Since(start))

	// reopen readies f for reading with the file system's page cache empty.
	reopen := func() error {
		if !cold {
			unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
			_, err := f.Seek(0, 0)
			return err
		}
		f.Close()
		if err := DropCaches(); err != nil {
			return err
		}
		f, err = os.Open(p)
		return err
	}
	if err := reopen(); err != nil {
		return err
	}
	start = time.Now()
	var total int64
	for {
		n, err := f.Read(buf)
		total += int64(n)
		if n == 0 || err != nil {
			break
		}
	}
	r.ReadMBps = mbps(total, time.Since(start))
	if total != cfg.Size {
		return fmt.Errorf("sequential read: got %d bytes of %d", total, cfg.Size)
	}

	if err := reopen(); err != nil {
		return err
	}
	if !cold {
		unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_RANDOM)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	page := buf[:pageSize]
	pages := cfg.Size / pageSize
	start = time.Now()
	for i := 0; i < cfg.RandomReads; i++ {
		if _, err := f.ReadAt(page, rng.Int64N(pages)*pageSize); err != nil {
			return fmt.Errorf("random read: %w", err)
		}
	}
	r.RandReadIOPS = float64(cfg.RandomReads) / time.Since(start).Seconds()
	f.Close()
	return os.Remove(p)
}

// measureFiles times creating cfg.Files empty files, "ls -l" of them and "rm -rf".
func measureFiles(ctx context.Context, cfg Config, parent string, r *Result, cold bool) error {
	dir := filepath.Join(parent, "files")
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	if err := settle(cold, false); err != nil {
		return err
	}
	start := time.Now()
	for i := 0; i < cfg.Files; i++ {
		fd, err := syscall.Open(filepath.Join(dir, "file-"+strconv.Itoa(i)), syscall.O_CREAT|syscall.O_WRONLY|syscall.O_EXCL|syscall.O_CLOEXEC, 0o600)
		if err != nil {
			return fmt.Errorf("create: %w", err)
		}
		syscall.Close(fd)
		if i%1000 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
	}
	d := time.Since(start)
	r.CreateSeconds, r.CreatePerSec = d.Seconds(), float64(cfg.Files)/d.Seconds()

	// "ls -l" itself, as people run it: besides a stat, GNU ls asks for two extended
	// attributes of every file (its security label and ACL).
	if err := settle(cold, true); err != nil {
		return err
	}
	start = time.Now()
	out, err := exec.CommandContext(ctx, "ls", "-l", "--color=never", dir).Output()
	if err != nil {
		return fmt.Errorf("ls -l: %w", err)
	}
	d = time.Since(start)
	// One line per file, after the "total" line.
	if lines := bytes.Count(out, []byte("\n")) - 1; lines != cfg.Files {
		return fmt.Errorf("listing: ls -l printed %d entries, want %d", lines, cfg.Files)
	}
	r.ListSeconds, r.ListPerSec = d.Seconds(), float64(cfg.Files)/d.Seconds()

	// "rm -rf" of the files just listed, with the caches expired or dropped again.
	r.DeleteSeconds, err = settledTimed(cold, true, exec.CommandContext(ctx, "rm", "-rf", dir))
	return err
}

// makeTarball tars src into dir once, so every target untars the same bytes.
func makeTarball(dir, src string) (string, error) {
	f, err := os.CreateTemp(dir, "vaultui-bench-*.tar")
	if err != nil {
		return "", err
	}
	f.Close()
	if out, err := exec.Command("tar", "-cf", f.Name(), "-C", filepath.Dir(src), filepath.Base(src)).CombinedOutput(); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("tar of %s: %w: %s", src, err, out)
	}
	return f.Name(), nil
}

// median returns the median of each figure over runs (the first error, if any run failed):
// every float64 and uint64 field of Result and its RealWorld, and of Cold when every run has one.
func median(runs []Result) Result {
	out := Result{Target: runs[0].Target}
	if i := slices.IndexFunc(runs, func(r Result) bool { return r.Err != nil }); i >= 0 {
		out.Err = runs[i].Err
		return out
	}
	medianFields(reflect.ValueOf(&out).Elem(), func(i int) reflect.Value { return reflect.ValueOf(runs[i]) }, len(runs))
	cold := make([]Result, 0, len(runs))
	for _, r := range runs {
		if r.Cold != nil {
			cold = append(cold, *r.Cold)
		}
	}
	if len(cold) == len(runs) {
		c := median(cold)
		out.Cold = &c
	}
	return out
}

// medianFields sets every number of struct out (and of the structs it embeds) to the median of
// that field over the n structs run(i).
func medianFields(out reflect.Value, run func(int) reflect.Value, n int) {
	for f := 0; f < out.NumField(); f++ {
		field := out.Field(f)
		at := func(i int) reflect.Value { return run(i).Field(f) }
		switch field.Kind() {
		case reflect.Struct:
			medianFields(field, at, n)
		case reflect.Float64, reflect.Uint64:
			v := make([]float64, n)
			for i := range v {
				if x := at(i); x.Kind() == reflect.Float64 {
					v[i] = x.Float()
				} else {
					v[i] = float64(x.Uint())
				}
			}
			if field.Kind() == reflect.Float64 {
				field.SetFloat(medianOf(v))
			} else {
				field.SetUint(uint64(medianOf(v)))
			}
		}
	}
}

// medianOf returns the median of v (0 for none); it sorts v.
func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func mbps(n int64, d time.Duration) float64 { return float64(n) / 1e6 / d.Seconds() }

// LoopbackEnv, set in the environment of the vaultui executable, makes it serve the bench's
// passthrough mount of the directory it names at LoopbackMountEnv: the bench starts
// "Exe bench" so, and that command calls ServeLoopbackChild when it finds LoopbackEnv set.
const (
	LoopbackEnv      = "VAULTUI_BENCH_LOOPBACK"
	LoopbackMountEnv = "VAULTUI_BENCH_LOOPBACK_MOUNTPOINT"
)

// loopbackOptions are the FUSE options vaultui uses, so the ceiling is comparable.
func loopbackOptions(backing string) *fs.Options {
	timeout := time.Second
	return &fs.Options{
		MountOptions: fuse.MountOptions{
			FsName: backing, Name: "vaultui-bench", MaxWrite: reqSize, MaxReadAhead: reqSize,
			DirectMount: true, MaxBackground: 64,
			// go-fuse's loopback would hand reads and writes to the kernel (FUSE passthrough),
			// which no encrypting file system can; the ceiling is FUSE round trips.
			DisabledCapabilities: fuse.CAP_PASSTHROUGH, DisableSplice: true,
			// Reads in requests of vaultui's size.
			Options: []string{vfs.ReadMaxOption},
			// Extended attributes on, as in vaultui and gocryptfs: a mount without them
			// answers no GETXATTR and so skips two round trips per file of "ls -l". And the
			// capabilities vaultui asks for, so writes send no GETXATTR either.
			ExtraCapabilities: vfs.Capabilities,
			// No default_permissions, as vaultui and gocryptfs without allow_other: the
			// kernel's own checks cost a GETATTR of the directory per create and unlink.
		},
		EntryTimeout: &timeout, AttrTimeout: &timeout, NegativeTimeout: &timeout,
	}
}

// ceilingNode is go-fuse's loopback node with what it does beyond FUSE round trips taken out,
// so that the ceiling is FUSE itself:
//   - FLUSH is answered as vaultui does: ENOSYS, after which the kernel stops sending one on
//     every close (go-fuse's loopback answers each: a round trip per created file that
//     vaultui does not pay);
//   - CREATE makes the file with two system calls, where go-fuse's loopback also registers
//     the descriptor with the Go poller and, as root, chowns it by path to the caller even
//     when the caller is root too. Both made the ceiling slower than gocryptfs at creating
//     files.
type ceilingNode struct{ *fs.LoopbackNode }

var (
	_ = (fs.NodeFlusher)((*ceilingNode)(nil))
	_ = (fs.NodeCreater)((*ceilingNode)(nil))
	_ = (fs.NodeWrapChilder)((*ceilingNode)(nil))
)

func (n *ceilingNode) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	p := filepath.Join(n.RootData.Path, n.Path(n.Root()), name)
	fd, err := syscall.Open(p, int(flags&^syscall.O_APPEND)|syscall.O_CREAT|syscall.O_CLOEXEC, mode)
	if err != nil {
		return nil, nil, 0, fs.ToErrno(err)
	}
	if c, ok := fuse.FromContext(ctx); ok && (int(c.Uid) != os.Getuid() || int(c.Gid) != os.Getgid()) {
		syscall.Fchown(fd, int(c.Uid), int(c.Gid)) // as go-fuse's loopback: best effort
	}
	var stx unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_BASIC_STATS|unix.STATX_BTIME, &stx); err != nil {
		syscall.Close(fd)
		return nil, nil, 0, fs.ToErrno(err)
	}
	st := statFromStatx(&stx)
	out.FromStat(&st)
	child := &ceilingNode{&fs.LoopbackNode{RootData: n.RootData}}
	return n.NewInode(ctx, child, n.stableAttr(&st, &stx.Btime)), fs.NewLoopbackFile(fd), 0, 0
}

// stableAttr numbers a node as go-fuse's loopback Lookup does (the inode number with the
// device folded in, the generation from the birth time), so a created file and the same file
// looked up later are one inode.
func (n *ceilingNode) stableAttr(st *syscall.Stat_t, btime *unix.StatxTimestamp) fs.StableAttr {
	swap := func(d uint64) uint64 { return d<<32 | d>>32 }
	gen := uint64(1)
	if btime.Sec != 0 || btime.Nsec != 0 {
		gen = uint64(btime.Sec)*1e9 + uint64(btime.Nsec)
	}
	return fs.StableAttr{Mode: st.Mode, Gen: gen, Ino: swap(st.Dev) ^ swap(n.RootData.Dev) ^ st.Ino}
}

func statFromStatx(x *unix.Statx_t) syscall.Stat_t {
	ts := func(t unix.StatxTimestamp) syscall.Timespec { return syscall.Timespec{Sec: t.Sec, Nsec: int64(t.Nsec)} }
	st := syscall.Stat_t{
		Dev: unix.Mkdev(x.Dev_major, x.Dev_minor), Ino: x.Ino,
		Mode: uint32(x.Mode), Uid: x.Uid, Gid: x.Gid, Rdev: unix.Mkdev(x.Rdev_major, x.Rdev_minor),
		Size: int64(x.Size), Blocks: int64(x.Blocks),
		Atim: ts(x.Atime), Mtim: ts(x.Mtime), Ctim: ts(x.Ctime),
	}
	// Their widths differ between architectures (32 bits on arm64).
	setInt(&st.Nlink, x.Nlink)
	setInt(&st.Blksize, x.Blksize)
	return st
}

// setInt stores v in *dst, converting to whatever integer type the field has here.
func setInt[T ~int32 | ~int64 | ~uint32 | ~uint64, V ~uint32 | ~uint64](dst *T, v V) { *dst = T(v) }

func (n *ceilingNode) Flush(ctx context.Context, f fs.FileHandle) syscall.Errno {
	return syscall.ENOSYS
}

// WrapChild makes every node of the passthrough a ceilingNode.
func (n *ceilingNode) WrapChild(ctx context.Context, ops fs.InodeEmbedder) fs.InodeEmbedder {
	if ln, ok := ops.(*fs.LoopbackNode); ok {
		return &ceilingNode{ln}
	}
	return ops
}

// ServeLoopbackChild mounts the passthrough that LoopbackEnv names, writes "ready" to ready
// once it is usable and serves it until it is unmounted or ctx is done (the bench died: the
// child gets SIGTERM), when it unmounts it itself.
func ServeLoopbackChild(ctx context.Context, ready io.Writer) error {
	backing, mnt := os.Getenv(LoopbackEnv), os.Getenv(LoopbackMountEnv)
	if backing == "" || mnt == "" {
		return fmt.Errorf("mountbench: %s and %s must name the backing dir and the mount point", LoopbackEnv, LoopbackMountEnv)
	}
	root, err := fs.NewLoopbackRoot(backing)
	if err != nil {
		return fmt.Errorf("mountbench: passthrough of %s: %w", backing, err)
	}
	server, err := fs.Mount(mnt, &ceilingNode{root.(*fs.LoopbackNode)}, loopbackOptions(backing))
	if err != nil {
		return fmt.Errorf("mountbench: mounting the passthrough at %s: %w", mnt, err)
	}
	vfs.RaiseReadahead(mnt) // the same large reads as vaultui mounts get
	fmt.Fprintln(ready, "ready")
	stop := context.AfterFunc(ctx, func() {
		if server.Unmount() != nil {
			syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
	})
	defer stop()
	server.Wait()
	return nil
}

// startChild starts cmd with its output going to logPath, and kills it should the bench die.
// done gets its exit.
func startChild(cmd *exec.Cmd, logPath string) (done chan error, err error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd.Stderr = logf
	if cmd.Stdout == nil {
		cmd.Stdout = logf
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	done = make(chan error, 1)
	go func() { done <- cmd.Wait(); logf.Close() }()
	return done, nil
}

// childError adds the tail of a child's log to err.
func childError(err error, logPath string) error {
	data, _ := os.ReadFile(logPath)
	if len(data) > 2000 {
		data = data[len(data)-2000:]
	}
	if s := strings.TrimSpace(string(data)); s != "" {
		return fmt.Errorf("%w; its log: %s", err, s)
	}
	return err
}

// unmountAndWait unmounts mnt and waits for the process serving it to exit.
func unmountAndWait(mnt string, cmd *exec.Cmd, done <-chan error) error {
	var err error
	for i := 0; i < 50; i++ {
		if err = syscall.Unmount(mnt, 0); err == nil || errors.Is(err, syscall.EINVAL) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		if err == nil {
			err = fmt.Errorf("%s did not exit after the unmount", cmd.Path)
		}
	}
	return err
}

func mountLoopbackChild(ctx context.Context, exe, work, backing, mnt string) (*server, error) {
	cmd := exec.Command(exe, "bench")
	cmd.Env = append(os.Environ(), LoopbackEnv+"="+backing, LoopbackMountEnv+"="+mnt)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(work, "loopback.log")
	done, err := startChild(cmd, logPath)
	if err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		<-done
		return nil, childError(fmt.Errorf("the passthrough did not start: %v", err), logPath)
	}
	return &server{pid: cmd.Process.Pid, unmount: func() error { return unmountAndWait(mnt, cmd, done) }}, nil
}

var benchPassword = []byte("vaultui bench password")

// Kind is a kind of vaultui vault to measure: a format (a row of vault.Formats) and, where
// the format lets one choose, a content cipher.
type Kind struct {
	Format *vault.Format
	Cipher crypto.CipherID
}

// ParseKind reads a kind as --ciphers names it: a content cipher of the default format
// ("aegis", "gcm"), or the ID of a format that fixes its cipher ("cryptomator").
func ParseKind(name string) (Kind, error) {
	if c, err := crypto.ParseCipher(name); err == nil {
		return Kind{Format: vault.DefaultFormat(), Cipher: c}, nil
	}
	if f, err := vault.FormatByID(name); err == nil && f.Can.Mount && len(f.Ciphers) == 0 {
		return Kind{Format: f}, nil
	}
	return Kind{}, fmt.Errorf("%q is neither a cipher (aegis, gcm, xchacha, siv) nor a format with a cipher of its own", name)
}

// targetName is how the report names a vaultui target of this kind.
func (k Kind) targetName() string {
	if k.Cipher == "" {
		return "vaultui " + k.Format.Name + " " + k.Format.Summary
	}
	return "vaultui " + k.Cipher.String()
}

// mountVaultui creates a vault and mounts it through a daemon of its own: private runtime,
// config and state dirs under work, so the user's daemon and registry stay untouched.
func mountVaultui(ctx context.Context, exe, work, backing, mnt string, c Kind) (*server, error) {
	key, err := vault.Create(context.Background(), backing, benchPassword, vault.CreateOptions{Format: c.Format.ID, Cipher: c.Cipher, ScryptLogN: c.Format.ScryptLogN.Min})
	crypto.Wipe(key)
	if err != nil {
		return nil, err
	}
	xdg := filepath.Join(work, "xdg")
	run, config, state := filepath.Join(xdg, "run"), filepath.Join(xdg, "config"), filepath.Join(xdg, "state")
	for _, d := range []string{run, config, state} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(exe, "daemon", "--idle-exit", "0")
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+run, "XDG_CONFIG_HOME="+config, "XDG_STATE_HOME="+state)
	cmd.Dir = "/"
	logPath := filepath.Join(work, "daemon.log")
	done, err := startChild(cmd, logPath)
	if err != nil {
		return nil, err
	}
	stop := func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	sock := filepath.Join(run, "vaultui", "ctl.sock")
	var client *mountmgr.Client
	for deadline := time.Now().Add(15 * time.Second); ; {
		if client, err = mountmgr.Dial(ctx, sock); err == nil {
			break
		}
		select {
		case exitErr := <-done:
			done <- exitErr
			return nil, childError(fmt.Errorf("the daemon exited at start: %v", exitErr), logPath)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			stop()
			return nil, childError(fmt.Errorf("the daemon did not answer: %w", err), logPath)
		}
	}
	defer client.Close()
	if _, err := client.Mount(ctx, mountmgr.MountRequest{CipherDir: backing, MountPoint: mnt, Password: append([]byte(nil), benchPassword...)}); err != nil {
		stop()
		return nil, childError(err, logPath)
	}
	return &server{pid: cmd.Process.Pid, unmount: func() error {
		defer stop()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := mountmgr.Dial(ctx, sock)
		if err != nil {
			return err
		}
		defer c.Close()
		return c.Unmount(ctx, mnt, false)
	}}, nil
}

// mountGocryptfs creates a gocryptfs vault and mounts it with gocryptfs in the foreground, as
// a child of the bench, so its memory can be read.
func mountGocryptfs(ctx context.Context, bin, backing, mnt string) (*server, error) {
	pf := backing + ".pw"
	if err := os.WriteFile(pf, benchPassword, 0o600); err != nil {
		return nil, err
	}
	defer os.Remove(pf)
	if out, err := exec.Command(bin, "-init", "-q", "-scryptn", "10", "-passfile", pf, backing).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("gocryptfs -init: %w: %s", err, out)
	}
	cmd := exec.Command(bin, "-f", "-q", "-passfile", pf, backing, mnt)
	logPath := backing + ".log"
	done, err := startChild(cmd, logPath)
	if err != nil {
		return nil, err
	}
	for deadline := time.Now().Add(15 * time.Second); !isMounted(mnt); {
		select {
		case exitErr := <-done:
			return nil, childError(fmt.Errorf("gocryptfs exited: %v", exitErr), logPath)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			cmd.Process.Kill()
			<-done
			return nil, childError(errors.New("gocryptfs did not mount in time"), logPath)
		}
	}
	return &server{pid: cmd.Process.Pid, unmount: func() error { return unmountAndWait(mnt, cmd, done) }}, nil
}

// isMounted says whether a file system other than its parent's is mounted at dir.
func isMounted(dir string) bool {
	var st, parent syscall.Stat_t
	if syscall.Stat(dir, &st) != nil || syscall.Stat(filepath.Dir(dir), &parent) != nil {
		return false
	}
	return st.Dev != parent.Dev
}

// GeoMean is the geometric mean of target's ratios to base (Ratios) over the real-world
// workloads, warm or cold, and with or without the CPU-bound ones; those not measured are
// left out, and 0 means none was.
func (rep Report) GeoMean(target, base string, cold, cpuBound bool) float64 {
	sum, n := 0.0, 0
	for i, v := range rep.Ratios(target, base) {
		if m := Metrics[i]; m.RealWorld && m.Cold == cold && (cpuBound || !m.CPUBound) && v > 0 {
			sum += math.Log(v)
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return math.Exp(sum / float64(n))
}
