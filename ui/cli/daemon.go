package cli

import (
	"flag"
	"log"

	"github.com/vaultui/vaultui/mountmgr"
)

func init() { registerCommand(daemonCommand) }

var daemonCommand = &command{
	name:    "daemon",
	group:   groupMounts,
	summary: "Run the mount manager in the foreground (clients start it on demand)",
	args:    "",
	help: `The mount manager owns every mount and every unlocked key. "vaultui mount"
and the terminal app start it when it is not running, detached, logging to
$XDG_STATE_HOME/vaultui/daemon.log; run it by hand only to watch its log.
It listens on $XDG_RUNTIME_DIR/vaultui/ctl.sock (socket 0600 in a 0700
directory, connections from other users refused). At start it cleans up
mounts left by a daemon of the same runtime dir that crashed, and the next
"vaultui status" or "vaultui mount" reports them once. SIGTERM or SIGINT
unmounts every vault and exits. One daemon runs per user; a second one exits with an error.`,
	setup: func(fs *flag.FlagSet) runFunc {
		return func(e *env, args []string) error {
			if len(args) != 0 {
				return e.usage("takes no arguments, got %d", len(args))
			}
			return mountmgr.Serve(e.ctx, mountmgr.ServeOptions{
				Logger: log.New(e.stderr, "", log.LstdFlags),
			})
		}
	},
}
