package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/mountmgr/mountbench"
)

var benchCommand = &command{
	name:    "bench",
	group:   groupMounts,
	summary: "Measure mounted vaults against a FUSE passthrough and gocryptfs",
	args:    "[--size SIZE] [--files N] [--reads N] [--runs N] [--untar DIR] [--repo-files N] [--transactions N] [--tree-files N] [--cold] [--ciphers LIST] [--dir DIR] [--gocryptfs PATH | --no-gocryptfs] [--baseline EXE] [--json]",
	help: `Mounts a fresh vault per cipher on a tmpfs-backed temp dir (--dir, default
/dev/shm) and measures sequential write and read with 1 MiB requests (page
cache dropped before reading), random 4 KiB reads, creating N empty files,
listing them with GNU ls -l (a stat and two extended attributes per file),
deleting them ("rm -rf") and untarring a source tree; then a working day's
work: git clone (--no-hardlinks) of a repository of --repo-files files the
bench makes itself, git status three times, git checkout of a branch that
changes a tenth of them, grep -r over the tree twice, and --transactions
SQLite transactions under synchronous=FULL (skipped without git or sqlite3),
du -s and find over a tree of --tree-files small files, and go build of a
module the bench makes (no dependencies), its build cache empty and inside
the vault (skipped without go; the compiler's CPU work dominates it, so the
geometric mean is given with and without it).
--cold (root only) runs every workload again with the kernel's caches
dropped between creating its files and using them. The same workload runs
on a plain go-fuse passthrough mount (FUSE without crypto: the ceiling) and on
gocryptfs (AES-256-GCM): the binary --gocryptfs names, else $GOCRYPTFS, else
/usr/bin/gocryptfs when it exists; the report names its version.

Every target is served by a process of its own: vaultui mounts by a daemon
started for the bench with private runtime, config and state dirs (your own
daemon and vaults are not touched), the passthrough by a child process,
gocryptfs in the foreground; the report gives each one's CPU time and peak
memory, over the whole run and (as root) from making the du/find tree to the
end of find. --runs N runs N rounds of every target in turn; the ratios are
medians of each round's ratio, so use 5 or more on a machine with other load.
--ciphers takes aegis, gcm, xchacha, siv and cryptomator (a Cryptomator vault,
format 8 with SIV_GCM: AES-GCM in 32 KiB chunks).
--baseline EXE also measures the vaultui executable EXE (say, a build of the
code before a change) as targets of its own, side by side.

examples:
  vaultui bench
  vaultui bench --runs 5 --size 512MiB --ciphers aegis,gcm --gocryptfs ~/src/gocryptfs/gocryptfs`,
	setup: func(fs *flag.FlagSet) runFunc {
		size := fs.String("size", "1GiB", "size of the sequential file (`SIZE`: bytes, or with KiB, MiB, GiB)")
		files := fs.Int("files", 10000, "create, list and delete `N` empty files")
		reads := fs.Int("reads", 20000, "time `N` random 4 KiB reads")
		ciphers := fs.String("ciphers", "aegis,gcm,xchacha,siv", "comma-separated `LIST` of ciphers")
		dir := fs.String("dir", "/dev/shm", "put the backing directories in `DIR`")
		untar := fs.String("untar", defaultUntarSource(), "tar `DIR` once and time untarring it into each mount (\"\" skips; default: Go's source tree)")
		runs := fs.Int("runs", 1, "run `N` rounds of every target and print medians")
		repoFiles := fs.Int("repo-files", 10000, "the git workloads' repository holds `N` files")
		transactions := fs.Int("transactions", 5000, "commit `N` SQLite transactions")
		treeFiles := fs.Int("tree-files", 100000, "du -s and find walk a tree of `N` small files")
		cold := fs.Bool("cold", false, "run every workload again with the caches dropped (root only)")
		baseline := fs.String("baseline", "", "also measure the vaultui executable `EXE` side by side")
		gocryptfs := fs.String("gocryptfs", "", "compare with the gocryptfs binary at `PATH` (default $GOCRYPTFS, else /usr/bin/gocryptfs)")
		noGocryptfs := fs.Bool("no-gocryptfs", false, "skip gocryptfs")
		asJSON := fs.Bool("json", false, "print JSON")
		return func(e *env, args []string) error {
			if os.Getenv(mountbench.LoopbackEnv) != "" {
				// This process is a running bench's passthrough server, not a user's command.
				return mountbench.ServeLoopbackChild(e.ctx, e.stdout)
			}
			n, err := parseSize(*size)
			if err != nil {
				return e.usage("--size: %v", err)
			}
			if *files <= 0 || *reads <= 0 || *runs <= 0 || *repoFiles <= 0 || *transactions <= 0 || *treeFiles <= 0 {
				return e.usage("--files, --reads, --runs, --repo-files, --transactions and --tree-files must be positive")
			}
			if *cold && os.Geteuid() != 0 {
				return e.usage("--cold drops the kernel's caches, which only root may do")
			}
			if *baseline != "" {
				if st, err := os.Stat(*baseline); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
					return e.usage("--baseline: %s is not an executable file", *baseline)
				}
			}
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("bench: locating vaultui to run its daemon: %w", err)
			}
			cfg := mountbench.Config{Dir: *dir, Size: n, Files: *files, RandomReads: *reads, Runs: *runs, UntarFrom: *untar, Exe: exe,
				Cold: *cold, RepoFiles: *repoFiles, Transactions: *transactions, TreeFiles: *treeFiles, Baseline: *baseline}
			for _, name := range strings.Split(*ciphers, ",") {
				name = strings.TrimSpace(name)
				k, err := mountbench.ParseKind(name)
				if err != nil {
					return e.usage("--ciphers: %v", err)
				}
				cfg.Kinds = append(cfg.Kinds, k)
			}
			if cfg.Gocryptfs, err = gocryptfsBinary(*gocryptfs, *noGocryptfs); err != nil {
				return e.usage("%v", err)
			}
			var report func(int, []mountbench.Result)
			if !*asJSON {
				caches := "warm caches"
				if cfg.Cold {
					caches = "warm and cold caches"
				}
				untar := "no untar"
				if cfg.UntarFrom != "" {
					untar = "untar of " + cfg.UntarFrom
				}
				// Every figure the flags scale, so a report says what it measured.
				fmt.Fprintf(e.stdout, "%s sequential file, %d random 4 KiB reads, %d files, %s, a %d-file repository, %d transactions, a %d-file tree, %s, in %s, %d round(s); load average %s\n",
					*size, cfg.RandomReads, cfg.Files, untar, cfg.RepoFiles, cfg.Transactions, cfg.TreeFiles, caches, cfg.Dir, cfg.Runs, loadAverage())
				if cfg.Gocryptfs != "" {
					if v, err := mountbench.GocryptfsVersion(cfg.Gocryptfs); err == nil {
						fmt.Fprintf(e.stdout, "against %s (%s)\n", v, cfg.Gocryptfs)
					}
				}
				report = func(round int, rs []mountbench.Result) {
					fmt.Fprintf(e.stdout, "\nround %d of %d:\n", round+1, cfg.Runs)
					printResults(e.stdout, rs)
				}
			}
			rep, err := mountbench.Run(e.ctx, cfg, report)
			if e.ctx.Err() != nil {
				return fmt.Errorf("bench interrupted: %w", e.ctx.Err())
			}
			if err != nil {
				return fmt.Errorf("bench: %w", err)
			}
			if *asJSON {
				return writeJSON(e.stdout, benchJSON(rep))
			}
			fmt.Fprintf(e.stdout, "\nmedians of %d round(s); load average now %s:\n", len(rep.Rounds), loadAverage())
			printResults(e.stdout, rep.Medians)
			printRatios(e.stdout, rep)
			for _, r := range rep.Medians {
				if r.Err != nil {
					return fmt.Errorf("bench: %w", r.Err)
				}
			}
			return nil
		}
	},
}

// gocryptfsBinary picks the gocryptfs to compare with: flag, then $GOCRYPTFS, then the
// distribution's, if any. One that was asked for by name must exist.
func gocryptfsBinary(flagValue string, skip bool) (string, error) {
	if skip {
		if flagValue != "" {
			return "", fmt.Errorf("--gocryptfs and --no-gocryptfs contradict each other")
		}
		return "", nil
	}
	for _, p := range []struct{ path, from string }{{flagValue, "--gocryptfs"}, {os.Getenv("GOCRYPTFS"), "$GOCRYPTFS"}} {
		if p.path == "" {
			continue
		}
		st, err := os.Stat(p.path)
		if err != nil {
			return "", fmt.Errorf("%s: %w", p.from, err)
		}
		if st.IsDir() || st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%s: %s is not an executable file", p.from, p.path)
		}
		return p.path, nil
	}
	if _, err := os.Stat("/usr/bin/gocryptfs"); err == nil {
		return "/usr/bin/gocryptfs", nil
	}
	return "", nil
}

// loadAverage is the first three fields of /proc/loadavg, to put the figures in context.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func printResults(w io.Writer, rs []mountbench.Result) {
	for _, r := range rs {
		if r.Err != nil {
			fmt.Fprintf(w, "%-26s failed: %s\n", r.Target, app.OneLine(r.Err.Error()))
			continue
		}
		printFigures(w, r.Target, r)
		fmt.Fprintf(w, "%-26s server CPU %5.1f s  peak RSS %3.0f MB\n", "", r.ServerCPUSeconds, float64(r.PeakRSS)/1e6)
		if r.Cold != nil {
			printFigures(w, "  cold caches", *r.Cold)
		}
	}
}

// printFigures prints one pass's figures in two lines: the bench's own workloads, then the
// real-world ones (when measured).
func printFigures(w io.Writer, label string, r mountbench.Result) {
	fmt.Fprintf(w, "%-26s write %5.0f MB/s  read %5.0f MB/s  4K reads %6.0f IOPS  create %5.2f s  ls -l %5.2f s  rm -rf %5.2f s",
		label, r.WriteMBps, r.ReadMBps, r.RandReadIOPS, r.CreateSeconds, r.ListSeconds, r.DeleteSeconds)
	if r.UntarSeconds > 0 {
		fmt.Fprintf(w, "  untar %5.2f s", r.UntarSeconds)
	}
	fmt.Fprintln(w)
	rw := r.RealWorld
	if rw.CloneSeconds > 0 {
		fmt.Fprintf(w, "%-26s git clone %5.2f s  status %5.2f s, again %5.2f s  checkout %5.2f s  grep -r %5.2f s, again %5.2f s",
			"", rw.CloneSeconds, rw.StatusSeconds, rw.StatusAgainSeconds, rw.CheckoutSeconds, rw.GrepSeconds, rw.GrepAgainSeconds)
	}
	if rw.SQLiteSeconds > 0 {
		if rw.CloneSeconds <= 0 {
			fmt.Fprintf(w, "%-26s", "")
		}
		fmt.Fprintf(w, "  sqlite %5.2f s", rw.SQLiteSeconds)
	}
	if rw.CloneSeconds > 0 || rw.SQLiteSeconds > 0 {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%-26s du -s %5.2f s  find %5.2f s", "", rw.DuSeconds, rw.FindSeconds)
	if rw.TreePeakRSS > 0 {
		fmt.Fprintf(w, " (peak RSS %3.0f MB)", float64(rw.TreePeakRSS)/1e6)
	}
	if rw.BuildSeconds > 0 {
		fmt.Fprintf(w, "  go build %5.2f s", rw.BuildSeconds)
	}
	fmt.Fprintln(w)
}

// benchJSON is the bench's JSON output: the report with errors as text.
func benchJSON(rep mountbench.Report) any {
	type result struct {
		mountbench.Result
		Err string `json:",omitempty"`
	}
	conv := func(rs []mountbench.Result) []result {
		out := make([]result, len(rs))
		for i, r := range rs {
			out[i].Result = r
			if r.Err != nil {
				out[i].Err = r.Err.Error()
			}
		}
		return out
	}
	type ratios struct {
		Target, Base string
		Ratios       map[string]float64
	}
	out := struct {
		Gocryptfs string `json:",omitempty"`
		Targets   []string
		Rounds    [][]result
		Medians   []result
		Ratios    []ratios
	}{Gocryptfs: rep.Gocryptfs, Targets: rep.Targets, Medians: conv(rep.Medians)}
	for _, round := range rep.Rounds {
		out.Rounds = append(out.Rounds, conv(round))
	}
	for _, base := range ratioBases(rep) {
		for _, t := range rep.Targets {
			if t == base {
				continue
			}
			m := map[string]float64{}
			for i, v := range rep.Ratios(t, base) {
				m[mountbench.Metrics[i].Name] = v
			}
			out.Ratios = append(out.Ratios, ratios{t, base, m})
		}
	}
	return out
}

// ratioBases are the targets the others are compared with: gocryptfs, then the passthrough.
func ratioBases(rep mountbench.Report) []string {
	var bases []string
	for _, prefix := range []string{"gocryptfs", "loopback"} {
		for _, t := range rep.Targets {
			if strings.HasPrefix(t, prefix) {
				bases = append(bases, t)
			}
		}
	}
	return bases
}

// printRatios prints every target relative to gocryptfs and to the passthrough, medians of
// per-round ratios: a row per workload, a column per target (warm, and cold when measured),
// and the real-world workloads' geometric mean.
func printRatios(w io.Writer, rep mountbench.Report) {
	cold := slices.ContainsFunc(rep.Medians, func(r mountbench.Result) bool { return r.Cold != nil })
	for _, base := range ratioBases(rep) {
		title := base
		if strings.HasPrefix(base, "gocryptfs") && rep.Gocryptfs != "" {
			title = rep.Gocryptfs
		}
		fmt.Fprintf(w, "\nRatio to %s, median of %d per-round ratios (higher is better):\n", title, len(rep.Rounds))
		var others [][]float64
		tw := newTable(w)
		fmt.Fprint(tw, "WORKLOAD")
		for _, t := range rep.Targets {
			if t == base {
				continue
			}
			others = append(others, rep.Ratios(t, base))
			fmt.Fprintf(tw, "\t%s", t)
			if cold {
				fmt.Fprint(tw, "\tcold")
			}
		}
		fmt.Fprintln(tw)
		cell := func(v float64) {
			if v > 0 {
				fmt.Fprintf(tw, "\t%.2fx", v)
			} else {
				fmt.Fprint(tw, "\t-")
			}
		}
		warm := len(mountbench.Metrics) / 2 // the cold twins follow the warm metrics
		for m := 0; m < warm; m++ {
			fmt.Fprint(tw, mountbench.Metrics[m].Name)
			for _, ratios := range others {
				cell(ratios[m])
				if cold {
					cell(ratios[m+warm])
				}
			}
			fmt.Fprintln(tw)
		}
		for _, row := range []struct {
			label    string
			cpuBound bool
		}{{"real world (geometric mean)", true}, {"real world without go build", false}} {
			fmt.Fprint(tw, row.label)
			for _, t := range rep.Targets {
				if t == base {
					continue
				}
				cell(rep.GeoMean(t, base, false, row.cpuBound))
				if cold {
					cell(rep.GeoMean(t, base, true, row.cpuBound))
				}
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
}

// parseSize reads "1GiB", "256MiB", "4096".
func parseSize(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mult, nil
}

// defaultUntarSource is Go's source tree when this machine has it: many small files, as in a
// home directory.
func defaultUntarSource() string {
	src := filepath.Join(runtime.GOROOT(), "src")
	if _, err := os.Stat(src); err != nil {
		return ""
	}
	return src
}
