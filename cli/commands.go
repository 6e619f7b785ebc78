package cli

import (
	"flag"
	"slices"
	"strings"
)

// command is one subcommand: the data that "vaultui help", its --help, the man page and the
// shell completions are generated from (and docs/reference.md is tested against), and the
// function that runs it.
type command struct {
	name    string
	group   string // heading in "vaultui help" and the man page
	summary string // one line, starts with a capital, no period
	args    string // usage after the name, e.g. "[options] CIPHERDIR"
	help    string // longer description and examples, shown by --help
	// operands name the positional arguments in order, as args spells them; the last one
	// ends in "..." when it repeats. Their names say what completes them (argShells).
	operands []string
	// values names what completes a flag's value where the placeholder in its help does not
	// say: "a|b" lists the words to offer, "" offers nothing.
	values map[string]string
	hidden bool // left out of help, the man page, the reference and completion
	// anyArgs: run checks the number of positional arguments itself; otherwise there must be
	// one per operand, which dispatch checks.
	anyArgs bool
	// setup defines the command's flags (name, `PLACEHOLDER` and help text) on fs and returns
	// the function that runs it with the positional arguments once fs is parsed.
	setup func(fs *flag.FlagSet) runFunc
}

type runFunc func(e *env, args []string) error

// noFlags is the setup of a command without flags of its own.
func noFlags(run runFunc) func(*flag.FlagSet) runFunc {
	return func(*flag.FlagSet) runFunc { return run }
}

// Groups in "vaultui help".
const (
	groupVaults   = "Vaults"
	groupRegistry = "Registry of known vaults"
	groupMounts   = "Mounting"
	groupOther    = "Other"
)

// groups lists the groups in the order help shows them.
var groups = []string{groupVaults, groupRegistry, groupMounts, groupOther}

// commands is the command table, in the order help lists the commands (grouped as in groups).
// The commands that describe the table (help, man, completion) find it in env.commands: a
// command defined with a reference to this table would be part of its own initialisation.
var commands = []*command{
	initCommand,
	infoCommand,
	passwdCommand,
	fsckCommand,
	exportCommand,
	convertCommand,
	conflictsCommand,
	pathCommand,

	listCommand,
	addCommand,
	forgetCommand,
	editCommand,

	mountCommand,
	unmountCommand,
	statusCommand,
	daemonCommand,
	benchCommand,
	autostartCommand,
	eventsCommand,
	forgetPasswordCommand,

	speedCommand,
	versionCommand,
	helpCommand,
	manCommand,
	completionCommand,
	completeCommand,
	kdfHelperCommand,
}

// visibleCommands are the commands help, the man page and completion present.
func visibleCommands(table []*command) []*command {
	return slices.DeleteFunc(slices.Clone(table), func(c *command) bool { return c.hidden })
}

func lookup(table []*command, name string) *command {
	if i := slices.IndexFunc(table, func(c *command) bool { return c.name == name }); i >= 0 {
		return table[i]
	}
	return nil
}

// wrongArgs is the usage error of c given n positional arguments instead of one per operand.
func (c *command) wrongArgs(n int) error {
	switch len(c.operands) {
	case 0:
		return usageErrorf(c, "takes no arguments, got %d", n)
	case 1:
		return usageErrorf(c, "expected one %s argument, got %d", c.operands[0], n)
	}
	return usageErrorf(c, "expected %s arguments, got %d argument(s)", strings.Join(c.operands, " and "), n)
}

// flagInfo is one flag as help, the man page and completion present it.
type flagInfo struct {
	name        string
	placeholder string // the argument's name from the help's `backquotes`, "" for a switch
	usage       string // the help text, without the backquotes
	def         string // the default worth showing, "" for none
}

// spelling is the flag as typed: --name, or -o for one letter as mount(8) spells it.
func (f flagInfo) spelling() string {
	if len(f.name) == 1 {
		return "-" + f.name
	}
	return "--" + f.name
}

// flags returns c's flags in name order, from the flag set its setup defines.
func (c *command) flags() []flagInfo {
	fs := newFlagSet(c.name)
	c.setup(fs)
	var out []flagInfo
	fs.VisitAll(func(f *flag.Flag) {
		placeholder, usage := flag.UnquoteUsage(f)
		info := flagInfo{name: f.Name, placeholder: strings.ToUpper(placeholder), usage: usage}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			info.def = f.DefValue
		}
		out = append(out, info)
	})
	return out
}

// valueArg names what completes the value of flag f of c: its entry in c.values, else its
// placeholder.
func (c *command) valueArg(f flagInfo) string {
	if v, ok := c.values[f.name]; ok {
		return v
	}
	return f.placeholder
}
