package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/vaultui/vaultui/app"
)

var eventsCommand = &command{
	name:    "events",
	group:   groupMounts,
	summary: "Show what happened to the mounts (mounted, unmounted and why, errors)",
	args:    "[--json] [--follow [--count N]]",
	help: `Prints the mount manager's event log, oldest first: vaults mounted, mounts
that failed, unmounts with their reason (user, lazy, idle, SIGTERM, external,
released: a detached mount's last file was closed), stale mounts cleaned up
after a crash, and files with a block that failed authentication (by their
path in the cipherdir: encrypted names). The log keeps the last 500 events in
$XDG_STATE_HOME/vaultui/events.jsonl, so it survives a restart of the manager.
--follow prints new events as they happen until interrupted, or until N events
were printed with --count (N at least 1; leave it out to follow until
interrupted). --json prints one JSON object per line.

examples:
  vaultui events
  vaultui events --follow
  vaultui events --json`,
	setup: func(fs *flag.FlagSet) runFunc {
		asJSON := fs.Bool("json", false, "print one JSON object per event")
		follow := fs.Bool("follow", false, "keep printing new events")
		count := fs.Int("count", 0, "with --follow: stop after `N` events (N >= 1)")
		return func(e *env, args []string) error {
			// --count 0 once meant "until interrupted", which leaving it out says; any count
			// given must be one to stop at.
			if flagSet(fs, "count") && (*count < 1 || !*follow) {
				return e.usage("--count takes a number of events of at least 1 and needs --follow (without --count, --follow runs until interrupted)")
			}
			show := func(ev app.NamedEvent) error {
				if *asJSON {
					return json.NewEncoder(e.stdout).Encode(ev)
				}
				printEvent(e.stdout, ev)
				return nil
			}
			if !*follow {
				evs, err := e.app.Events(e.ctx, 0)
				if err != nil {
					return err
				}
				if len(evs) == 0 && !*asJSON {
					fmt.Fprintln(e.stdout, "No events yet.")
				}
				for _, ev := range evs {
					if err := show(ev); err != nil {
						return err
					}
				}
				return nil
			}
			return showStream(e.ctx, *count, func(ctx context.Context, each func(app.NamedEvent)) error {
				return e.app.FollowEvents(ctx, 0, func(evs []app.NamedEvent) {
					for _, ev := range evs {
						each(ev)
					}
				})
			}, show)
		}
	},
}

// showStream shows each item stream passes on (app.Watch's snapshots, app.FollowEvents's
// events) until show fails, or n were shown (n 0: until ctx ends or the stream does).
func showStream[T any](ctx context.Context, n int, stream func(context.Context, func(T)) error, show func(T) error) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	shown := 0
	var showErr error
	err := stream(ctx, func(item T) {
		if showErr == nil && (n == 0 || shown < n) {
			showErr = show(item)
			shown++
		}
		if showErr != nil || n > 0 && shown >= n {
			stop()
		}
	})
	return cmp.Or(err, showErr)
}

// printEvent prints one event on one line: local time, vault, what happened. The daemon
// escaped its text already.
func printEvent(w io.Writer, ev app.NamedEvent) {
	vault := cmp.Or(ev.Name, ev.CipherDir, "-")
	fmt.Fprintf(w, "%s  %s  %s\n", ev.Time.Local().Format("2006-01-02 15:04:05"), vault, ev.Summary())
}
