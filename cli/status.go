package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/mountmgr"
)

var statusCommand = &command{
	name:    "status",
	group:   groupMounts,
	summary: "Show every mount with its live throughput",
	args:    "[--json] [--watch [--count N]]",
	help: `Lists each mounted vault: mount point, cipherdir, cipher, since when, bytes
read and written, and the current read and write rates (averaged over the
last 3 seconds). When a mount manager stopped without unmounting (crash,
kill -9), the next one cleans up the mounts it left ("transport endpoint is
not connected") and status reports each once; one it could not clean up is
listed as stale until it is gone. When the mount manager cannot write its log
file or event log (an unusable XDG_STATE_HOME), a note on stderr says so and
where it logs instead. --watch refreshes every second until
interrupted, or for N snapshots with --count (N at least 1) (with --json:
one JSON array per line).

examples:
  vaultui status
  vaultui status --watch
  vaultui status --json`,
	setup: func(fs *flag.FlagSet) runFunc {
		asJSON := fs.Bool("json", false, "print JSON")
		watch := fs.Bool("watch", false, "refresh every second")
		count := fs.Int("count", 0, "with --watch: stop after `N` snapshots (N >= 1)")
		return func(e *env, args []string) error {
			// As for events --follow: leaving --count out is "until interrupted".
			if flagSet(fs, "count") && (*count < 1 || !*watch) {
				return e.usage("--count takes a number of snapshots of at least 1 and needs --watch (without --count, --watch runs until interrupted)")
			}
			// The daemon hands out its stale mount report once, so it is fetched once, as late
			// as possible, and shown with the first snapshot (and kept under a refreshing
			// terminal view).
			var report []mountmgr.StaleMount
			redraw := *watch && !*asJSON && terminalFile(e.stdout) != nil
			frames := 0
			show := func(mounts []mountmgr.MountInfo) error {
				r := report
				if frames > 0 && !redraw {
					r = nil
				}
				frames++
				if *asJSON && *watch {
					return json.NewEncoder(e.stdout).Encode(statusJSON(mounts, r)) // a line a snapshot
				}
				if *asJSON {
					return writeJSON(e.stdout, statusJSON(mounts, r))
				}
				if redraw {
					fmt.Fprint(e.stdout, "\x1b[H\x1b[2J") // home, clear screen
				}
				printStatus(e.stdout, mounts, time.Now())
				printStaleReport(e.stdout, r)
				if *watch && !redraw {
					fmt.Fprintln(e.stdout)
				}
				return nil
			}
			if info, err := e.app.DaemonInfo(e.ctx); err == nil {
				printDaemonNotes(e.stderr, info)
			}
			if !*watch {
				mounts, err := e.app.Status(e.ctx)
				if err != nil {
					return err
				}
				if report, err = e.app.Stale(e.ctx); err != nil {
					return err
				}
				return show(mounts)
			}
			var err error
			if report, err = e.app.Stale(e.ctx); err != nil {
				return err
			}
			err = showStream(e.ctx, *count, e.app.Watch, show)
			if frames == 0 && !*asJSON {
				printStaleReport(e.stdout, report) // not lost if the watch failed at once
			}
			return err
		}
	},
}

// printDaemonNotes tells, on stderr, what does not work as it should in how the mount manager
// runs: a log file or event log it cannot write (an unusable XDG_STATE_HOME).
func printDaemonNotes(w io.Writer, info mountmgr.DaemonInfo) {
	if info.LogError != "" {
		where := "its stderr"
		if info.StderrNull {
			where = "its stderr, which is /dev/null since a client started it (run \"vaultui daemon\" in a terminal, or under systemd with \"vaultui autostart enable\", to see it)"
		}
		fmt.Fprintf(w, "note: the mount manager (pid %d) cannot write its log file: %s; it logs to %s.\n", info.PID, info.LogError, where)
	}
	if info.EventsError != "" {
		fmt.Fprintf(w, "note: the mount manager cannot save its event log: %s; events are kept in memory only, until it stops.\n", info.EventsError)
	}
}

// printStaleReport tells what the daemon found left behind by one that stopped without
// unmounting.
func printStaleReport(w io.Writer, report []mountmgr.StaleMount) {
	for _, s := range report {
		if s.Cleaned {
			fmt.Fprintf(w, "Cleaned up stale mount %s (vault %s): the previous mount manager stopped without unmounting.\n",
				s.MountPoint, s.CipherDir)
			continue
		}
		fmt.Fprintf(w, "Could not clean up stale mount %s (vault %s) left by a mount manager that stopped without unmounting: %s. The mount manager retries every second; \"vaultui unmount %s\" tries now.\n",
			s.MountPoint, s.CipherDir, s.Error, s.MountPoint)
	}
}

func printStatus(w io.Writer, mounts []mountmgr.MountInfo, now time.Time) {
	if len(mounts) == 0 {
		fmt.Fprintln(w, "No vaults mounted.")
		return
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "MOUNTPOINT\tCIPHERDIR\tCIPHER\tSINCE\tREAD\tWRITTEN\tREAD/s\tWRITE/s")
	for _, m := range mounts {
		if m.Stale {
			fmt.Fprintf(tw, "%s\t%s\tstale (daemon died; being cleaned up)\t\t\t\t\t\n", m.MountPoint, m.CipherDir)
			continue
		}
		cipher := m.Cipher
		if m.ReadOnly {
			cipher += " (ro)"
		}
		if m.SharedStorage {
			cipher += " (shared)"
		}
		if m.Detached {
			// Unmounted, but files opened before are still served.
			cipher += " (detached: open files served until closed"
			if !m.Until.IsZero() {
				cipher += ", at most until " + m.Until.Local().Format(time.TimeOnly) + " (daemon stopping)"
			}
			cipher += ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.MountPoint, m.CipherDir, cipher,
			app.Age(now.Sub(m.Since)), formatBytes(float64(m.Stats.BytesRead)),
			formatBytes(float64(m.Stats.BytesWritten)), formatBytes(m.Stats.ReadBps), formatBytes(m.Stats.WriteBps))
	}
	tw.Flush()
}

// formatBytes prints a byte count in decimal units, as MB/s figures are.
func formatBytes(n float64) string {
	units := []string{"B", "kB", "MB", "GB", "TB"}
	i := 0
	for n >= 1000 && i < len(units)-1 {
		n /= 1000
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f %s", n, units[i])
	}
	return fmt.Sprintf("%.1f %s", n, units[i])
}

// The shape of "status --json": stable for scripts.
type mountJSON struct {
	MountPoint  string    `json:"mountpoint"`
	CipherDir   string    `json:"cipherdir"`
	Cipher      string    `json:"cipher,omitempty"`
	ReadOnly    bool      `json:"readonly"`
	Shared      bool      `json:"sharedstorage,omitempty"`
	Since       time.Time `json:"since,omitzero"`
	IdleSeconds float64   `json:"idle_seconds,omitempty"`
	Stale       bool      `json:"stale"`
	// Detached: unmounted, files opened before still served until closed (or until Until,
	// when the daemon is stopping).
	Detached     bool      `json:"detached,omitempty"`
	Until        time.Time `json:"until,omitzero"`
	BytesRead    uint64    `json:"bytes_read"`
	BytesWritten uint64    `json:"bytes_written"`
	Ops          uint64    `json:"ops"`
	Errors       uint64    `json:"errors"`
	ReadBps      float64   `json:"read_bytes_per_second"`
	WriteBps     float64   `json:"write_bytes_per_second"`
	OpsPerSec    float64   `json:"ops_per_second"`
	// Stale mounts of the daemon's report (shown once): cleaned up, or why not.
	Cleaned      bool      `json:"cleaned,omitempty"`
	Found        time.Time `json:"found,omitzero"`
	CleanupError string    `json:"cleanup_error,omitempty"`
}

// statusJSON lists the mounts, then the stale mounts of the report that are gone (cleaned up);
// a reported one that is still there adds its details to its stale mount entry.
func statusJSON(mounts []mountmgr.MountInfo, report []mountmgr.StaleMount) []mountJSON {
	out := make([]mountJSON, 0, len(mounts)+len(report))
	reported := map[string]bool{}
	for _, m := range mounts {
		j := mountJSON{
			MountPoint: m.MountPoint, CipherDir: m.CipherDir, Cipher: m.Cipher, ReadOnly: m.ReadOnly,
			Shared: m.SharedStorage, Since: m.Since, IdleSeconds: m.Idle.Seconds(), Stale: m.Stale, Detached: m.Detached, Until: m.Until,
			BytesRead: m.Stats.BytesRead, BytesWritten: m.Stats.BytesWritten, Ops: m.Stats.Ops,
			Errors: m.Stats.Errors, ReadBps: m.Stats.ReadBps, WriteBps: m.Stats.WriteBps,
			OpsPerSec: m.Stats.OpsPerSec,
		}
		for _, s := range report {
			if m.Stale && !s.Cleaned && s.MountPoint == m.MountPoint {
				j.Found, j.CleanupError = s.Found, s.Error
				reported[s.MountPoint] = true
			}
		}
		out = append(out, j)
	}
	for _, s := range report {
		if !reported[s.MountPoint] {
			out = append(out, mountJSON{MountPoint: s.MountPoint, CipherDir: s.CipherDir, Stale: true,
				Cleaned: s.Cleaned, Found: s.Found, CleanupError: s.Error})
		}
	}
	return out
}
