package cli

import (
	"flag"
	"io"
	"log"
	"os"
	"runtime/debug"

	"github.com/vaultui/vaultui/mountmgr"
)

var daemonCommand = &command{
	name:    "daemon",
	group:   groupMounts,
	summary: "Run the mount manager in the foreground (clients start it on demand)",
	args:    "[--idle-exit DUR] [--grace DUR] [--autostart]",
	help: `The mount manager owns every mount and every unlocked key. "vaultui mount"
and the terminal app start it when it is not running, detached, logging to
$XDG_STATE_HOME/vaultui/daemon.log; run it by hand only to watch its log.
Run by hand (or by systemd), it logs to stderr. When the state directory is
unusable, a daemon started by a client logs to its stderr too, which is then
/dev/null, and keeps the event log in memory ("vaultui status" says so).
It listens on $XDG_RUNTIME_DIR/vaultui/ctl.sock (socket 0600 in a 0700
directory, connections from other users refused). At start it cleans up
mounts left by a daemon of the same runtime dir that crashed, and the next
"vaultui status" or "vaultui mount" reports them once. SIGTERM or SIGINT
unmounts every vault and exits; a busy vault is detached at once and the
files still open on it are served until they are closed, for at most --grace
("vaultui status" shows it meanwhile), then the daemon exits anyway. With
nothing mounted and no client connected for --idle-exit, it exits (clients
start it again when needed). Its log file is rotated at 1 MiB (daemon.log.1 keeps
the previous one) and holds no file names from inside a vault. One daemon
runs per user; a second one exits with an error. --autostart is how
"vaultui autostart" starts it at login: it never exits when idle, and once
per login it mounts the vaults with the automount option whose password is
in the keyring (reported in "vaultui events" when it cannot).`,
	setup: func(fs *flag.FlagSet) runFunc {
		idleExit := fs.Duration("idle-exit", mountmgr.DefaultIdleExit, "exit after `DURATION` with nothing mounted and no client (0: never)")
		grace := fs.Duration("grace", mountmgr.DefaultShutdownGrace, "on SIGTERM, serve files still open on busy vaults for at most `DURATION`")
		autostart := fs.Bool("autostart", false, "started at login: automount, and no idle exit")
		return func(e *env, args []string) error {
			if *idleExit < 0 || *grace <= 0 {
				return e.usage("--idle-exit must not be negative and --grace must be positive")
			}
			if pct, ok := daemonGCPercent(os.Getenv); ok {
				debug.SetGCPercent(pct)
			}
			opts := mountmgr.ServeOptions{IdleExit: *idleExit, ShutdownGrace: *grace}
			if *autostart {
				opts.IdleExit, opts.Automount = 0, true
			}
			// With the process's own stderr, Serve finds out whether that is the log file
			// (started by a client), which it then rotates, or a terminal.
			if e.stderr != io.Writer(os.Stderr) {
				opts.Logger = log.New(e.stderr, "", log.LstdFlags)
			}
			return mountmgr.Serve(e.ctx, opts)
		}
	},
}

// daemonGCPercent is the garbage collector's target for the daemon process (GOGC), and
// whether to set it: not when the user set GOGC.
//
// The daemon's heap is mostly the nodes of the files the kernel remembers (about 400 bytes
// each, live for as long as the kernel keeps the entry), plus a little garbage per request.
// Go's default, 100, lets the heap grow to twice the live heap before it collects, so at
// 100,000 files the daemon peaked near 105 MB, above gocryptfs's 100 MB; at 50 it peaked at
// 84 to 86 MB (docs/performance.md). The price is twice as many collections; with the
// request path's little garbage that was within the noise of the server's CPU time.
func daemonGCPercent(getenv func(string) string) (int, bool) {
	if getenv("GOGC") != "" {
		return 0, false
	}
	return 50, true
}
