package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/vaultui/vaultui/mountmgr"
)

func init() { registerCommand(statusCommand) }

var statusCommand = &command{
	name:    "status",
	group:   groupMounts,
	summary: "Show every mount with its live throughput",
	args:    "[--json] [--watch]",
	help: `Lists each mounted vault: mount point, cipherdir, cipher, since when, bytes
read and written, and the current read and write rates (averaged over the
last 3 seconds). Stale mounts left by a crashed daemon are marked; the
daemon cleans them up. --watch refreshes every second until interrupted
(with --json: one JSON array per line).

examples:
  vaultui status
  vaultui status --watch
  vaultui status --json`,
	setup: func(fs *flag.FlagSet) runFunc {
		asJSON := fs.Bool("json", false, "print JSON")
		watch := fs.Bool("watch", false, "refresh every second")
		return func(e *env, args []string) error {
			if len(args) != 0 {
				return e.usage("takes no arguments, got %d", len(args))
			}
			client, err := mountmgr.Connect(e.ctx)
			if err != nil {
				return err
			}
			defer client.Close()
			show := func(mounts []mountmgr.MountInfo) error {
				if *asJSON {
					return writeJSONLine(e.stdout, statusJSON(mounts), !*watch)
				}
				if *watch && isTerminal(e.stdout) {
					fmt.Fprint(e.stdout, "\x1b[H\x1b[2J") // home, clear screen
				}
				printStatus(e.stdout, mounts, time.Now())
				if *watch && !isTerminal(e.stdout) {
					fmt.Fprintln(e.stdout)
				}
				return nil
			}
			if !*watch {
				mounts, err := client.Status(e.ctx)
				if err != nil {
					return err
				}
				return show(mounts)
			}
			var showErr error
			err = client.Watch(e.ctx, func(m []mountmgr.MountInfo) {
				if showErr == nil {
					showErr = show(m)
				}
			})
			if err == nil {
				err = showErr
			}
			return err
		}
	},
}

func printStatus(w io.Writer, mounts []mountmgr.MountInfo, now time.Time) {
	if len(mounts) == 0 {
		fmt.Fprintln(w, "No vaults mounted.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.MountPoint, m.CipherDir, cipher,
			formatDuration(now.Sub(m.Since)), formatBytes(float64(m.Stats.BytesRead)),
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
	MountPoint   string    `json:"mountpoint"`
	CipherDir    string    `json:"cipherdir"`
	Cipher       string    `json:"cipher,omitempty"`
	ReadOnly     bool      `json:"readonly"`
	Since        time.Time `json:"since,omitzero"`
	IdleSeconds  float64   `json:"idle_seconds,omitempty"`
	Stale        bool      `json:"stale"`
	BytesRead    uint64    `json:"bytes_read"`
	BytesWritten uint64    `json:"bytes_written"`
	Ops          uint64    `json:"ops"`
	Errors       uint64    `json:"errors"`
	ReadBps      float64   `json:"read_bytes_per_second"`
	WriteBps     float64   `json:"write_bytes_per_second"`
	OpsPerSec    float64   `json:"ops_per_second"`
}

func statusJSON(mounts []mountmgr.MountInfo) []mountJSON {
	out := make([]mountJSON, 0, len(mounts))
	for _, m := range mounts {
		out = append(out, mountJSON{
			MountPoint: m.MountPoint, CipherDir: m.CipherDir, Cipher: m.Cipher, ReadOnly: m.ReadOnly,
			Since: m.Since, IdleSeconds: m.Idle.Seconds(), Stale: m.Stale,
			BytesRead: m.Stats.BytesRead, BytesWritten: m.Stats.BytesWritten, Ops: m.Stats.Ops,
			Errors: m.Stats.Errors, ReadBps: m.Stats.ReadBps, WriteBps: m.Stats.WriteBps,
			OpsPerSec: m.Stats.OpsPerSec,
		})
	}
	return out
}

// writeJSONLine writes v indented, or compact on one line (for --watch streams).
func writeJSONLine(w io.Writer, v any, indent bool) error {
	if indent {
		return writeJSON(w, v)
	}
	return json.NewEncoder(w).Encode(v)
}
