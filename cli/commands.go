package cli

import "flag"

// command is one subcommand.
type command struct {
	name    string
	group   string // heading in "vaultui help"
	summary string // one line, starts with a capital, no period
	args    string // usage after the name, e.g. "[options] CIPHERDIR"
	help    string // longer description and examples, shown by --help
	// setup defines the command's flags on fs and returns the function that
	// runs it with the positional arguments once fs is parsed.
	setup func(fs *flag.FlagSet) runFunc
}

type runFunc func(e *env, args []string) error

// Groups in "vaultui help".
const (
	groupVaults   = "Vaults"
	groupRegistry = "Registry of known vaults"
	groupMounts   = "Mounting"
	groupOther    = "Other"
)

// commands is the command table. The vault commands are defined in
// vaultcmds.go, registrycmds.go and speed.go; the mount commands (mount,
// unmount, status, daemon, bench) in mount*.go, status*.go and daemon*.go
// append themselves with registerCommand from their init functions.
var commands = []*command{
	initCommand,
	infoCommand,
	passwdCommand,
	fsckCommand,
	exportCommand,
	conflictsCommand,
	listCommand,
	addCommand,
	forgetCommand,
	speedCommand,
}

// registerCommand adds c to the table. Call it from an init function.
func registerCommand(c *command) {
	if lookup(c.name) != nil {
		panic("cli: command " + c.name + " registered twice")
	}
	commands = append(commands, c)
}

func allCommands() []*command { return commands }

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}
