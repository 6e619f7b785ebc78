package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/mountmgr/mountbench"
)

func init() { registerCommand(benchCommand) }

var benchCommand = &command{
	name:    "bench",
	group:   groupMounts,
	summary: "Measure mounted vaults against a FUSE passthrough and gocryptfs",
	args:    "[--size SIZE] [--files N] [--reads N] [--runs N] [--untar DIR] [--ciphers LIST] [--dir DIR] [--no-gocryptfs] [--json]",
	help: `Mounts a fresh vault per cipher on a tmpfs-backed temp dir (--dir, default
/dev/shm) and measures sequential write and read with 1 MiB requests (page
cache dropped before reading), random 4 KiB reads, creating N empty files and
listing them with their attributes ("ls -l"). --runs N repeats each target
and prints the medians (the machine's other load makes single runs noisy). The same run on a plain go-fuse
passthrough mount (FUSE without crypto) is the ceiling, and on gocryptfs
(AES-256-GCM) when /usr/bin/gocryptfs exists; ratios are against both.

examples:
  vaultui bench
  vaultui bench --size 256MiB --ciphers aegis,gcm`,
	setup: func(fs *flag.FlagSet) runFunc {
		size := fs.String("size", "1GiB", "size of the sequential file (`SIZE`: bytes, or with KiB, MiB, GiB)")
		files := fs.Int("files", 10000, "create and list `N` empty files")
		reads := fs.Int("reads", 20000, "time `N` random 4 KiB reads")
		ciphers := fs.String("ciphers", "aegis,gcm,xchacha,siv", "comma-separated `LIST` of ciphers")
		dir := fs.String("dir", "/dev/shm", "put the backing directories in `DIR`")
		untar := fs.String("untar", defaultUntarSource(), "tar `DIR` once and time untarring it into each mount (\"\" skips; default: Go's source tree)")
		runs := fs.Int("runs", 1, "repeat each target `N` times and print the medians")
		noGocryptfs := fs.Bool("no-gocryptfs", false, "skip gocryptfs")
		asJSON := fs.Bool("json", false, "print JSON")
		return func(e *env, args []string) error {
			if len(args) != 0 {
				return e.usage("takes no arguments, got %d", len(args))
			}
			n, err := parseSize(*size)
			if err != nil {
				return e.usage("--size: %v", err)
			}
			cfg := mountbench.Config{Dir: *dir, Size: n, Files: *files, RandomReads: *reads, Runs: *runs, UntarFrom: *untar}
			for _, name := range strings.Split(*ciphers, ",") {
				c, err := crypto.ParseCipher(strings.TrimSpace(name))
				if err != nil {
					return e.usage("--ciphers: %v", err)
				}
				cfg.Ciphers = append(cfg.Ciphers, c)
			}
			if !*noGocryptfs {
				if _, err := os.Stat("/usr/bin/gocryptfs"); err == nil {
					cfg.Gocryptfs = "/usr/bin/gocryptfs"
				}
			}
			var report func(mountbench.Result)
			if !*asJSON {
				fmt.Fprintf(e.stdout, "%s sequential file, %d random 4 KiB reads, %d files, in %s\n\n", *size, cfg.RandomReads, cfg.Files, cfg.Dir)
				report = func(r mountbench.Result) {
					if r.Err != nil {
						fmt.Fprintf(e.stdout, "%-26s failed: %s\n", r.Target, oneLine(r.Err.Error()))
						return
					}
					fmt.Fprintf(e.stdout, "%-26s write %6.0f MB/s  read %6.0f MB/s  4K reads %7.0f IOPS  create %6.2f s  ls -l %6.2f s",
						r.Target, r.WriteMBps, r.ReadMBps, r.RandReadIOPS, r.CreateSeconds, r.ListSeconds)
					if r.UntarSeconds > 0 {
						fmt.Fprintf(e.stdout, "  untar %6.2f s", r.UntarSeconds)
					}
					fmt.Fprintln(e.stdout)
				}
			}
			results := mountbench.Run(e.ctx, cfg, report)
			if err := e.ctx.Err(); err != nil {
				return fmt.Errorf("bench interrupted: %w", err)
			}
			if *asJSON {
				return writeJSON(e.stdout, results)
			}
			printRatios(e.stdout, results)
			return nil
		}
	},
}

// printRatios prints each vaultui result relative to gocryptfs and to the passthrough.
func printRatios(w io.Writer, results []mountbench.Result) {
	find := func(prefix string) *mountbench.Result {
		for i := range results {
			if strings.HasPrefix(results[i].Target, prefix) && results[i].Err == nil {
				return &results[i]
			}
		}
		return nil
	}
	for _, base := range []*mountbench.Result{find("gocryptfs"), find("loopback")} {
		if base == nil {
			continue
		}
		fmt.Fprintf(w, "\nRatio to %s (higher is better):\n", base.Target)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "TARGET\tWRITE\tREAD\t4K READS\tCREATE\tLS -L\tUNTAR")
		for _, r := range results {
			if r.Err != nil || !strings.HasPrefix(r.Target, "vaultui") {
				continue
			}
			untar := "-"
			if r.UntarSeconds > 0 && base.UntarSeconds > 0 {
				untar = fmt.Sprintf("%.2fx", base.UntarSeconds/r.UntarSeconds)
			}
			fmt.Fprintf(tw, "%s\t%.2fx\t%.2fx\t%.2fx\t%.2fx\t%.2fx\t%s\n", r.Target, r.WriteMBps/base.WriteMBps, r.ReadMBps/base.ReadMBps,
				r.RandReadIOPS/base.RandReadIOPS, r.CreatePerSec/base.CreatePerSec, r.ListPerSec/base.ListPerSec, untar)
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
