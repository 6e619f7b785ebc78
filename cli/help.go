package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/vaultui/vaultui/app"
)

var helpCommand = &command{
	name:     "help",
	anyArgs:  true,
	group:    groupOther,
	summary:  "List the commands, or show one command's usage and options",
	args:     "[COMMAND]",
	operands: []string{"COMMAND"},
	help:     `"vaultui help COMMAND" prints the same as "vaultui COMMAND --help".`,
	setup: noFlags(func(e *env, args []string) error {
		switch len(args) {
		case 0:
			printOverview(e.stdout, e.commands)
			return nil
		case 1:
			c := lookup(e.commands, args[0])
			if c == nil {
				return unknownCommand(args[0])
			}
			printCommandHelp(e.stdout, c)
			return nil
		}
		return e.usage("expected at most one COMMAND, got %d arguments", len(args))
	}),
}

// overviewUsage is the top of "vaultui help" and of the man page's synopsis.
var overviewUsage = [][2]string{
	{"", "open the terminal app"},
	{"COMMAND [options] [arguments]", ""},
	{"COMMAND --help", "show a command's options"},
}

// vaultArgNote is what every presentation of the commands says about VAULT.
const vaultArgNote = "VAULT is a registered vault's name or the path of its encrypted directory."

// printOverview prints "vaultui help".
func printOverview(w io.Writer, table []*command) {
	fmt.Fprintf(w, "vaultui manages encrypted vaults in the %s formats.\n", app.FormatNames("and"))
	fmt.Fprintln(w)
	for i, u := range overviewUsage {
		lead := "usage: "
		if i > 0 {
			lead = "       "
		}
		line := strings.TrimSpace("vaultui " + u[0])
		if u[1] != "" {
			line = fmt.Sprintf("%-22s  %s", line, u[1])
		}
		fmt.Fprintln(w, lead+line)
	}
	t := newTable(w) // one table, so every group's summaries line up
	for _, g := range byGroup(visibleCommands(table)) {
		fmt.Fprintf(t, "\n%s:\n", g.name)
		for _, c := range g.commands {
			fmt.Fprintf(t, "  %s\t%s\n", c.name, c.summary)
		}
	}
	t.Flush()
	fmt.Fprintf(w, "\n%s\nExit codes are listed in the man page (\"vaultui man\") and docs/reference.md.\n", vaultArgNote)
}

// commandGroup is a group's heading and its commands, in table order.
type commandGroup struct {
	name     string
	commands []*command
}

// byGroup splits cs into the groups that have commands, in the order of groups.
func byGroup(cs []*command) []commandGroup {
	var out []commandGroup
	for _, g := range groups {
		group := commandGroup{name: g}
		for _, c := range cs {
			if c.group == g {
				group.commands = append(group.commands, c)
			}
		}
		if len(group.commands) > 0 {
			out = append(out, group)
		}
	}
	return out
}

// printCommandHelp prints "vaultui COMMAND --help".
func printCommandHelp(w io.Writer, c *command) {
	fmt.Fprintf(w, "%s\n\n%s\n", usageLine(c), c.summary)
	if c.help != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(c.help, "\n"))
	}
	fmt.Fprintln(w, "\noptions:")
	printOptions(w, c)
}

// usageLine is "usage: vaultui NAME ARGS".
func usageLine(c *command) string {
	return "usage: vaultui " + strings.TrimSpace(c.name+" "+c.args)
}

// printOptions prints the flags of c, one a line, with --help last.
func printOptions(w io.Writer, c *command) {
	t := newTable(w)
	for _, f := range c.flags() {
		fmt.Fprintf(t, "  %s\t%s\n", f.synopsis(), f.description())
	}
	fmt.Fprint(t, "  --help\tshow this help\n")
	t.Flush()
}

// synopsis is the flag with its argument: "--passfile FILE".
func (f flagInfo) synopsis() string {
	if f.placeholder == "" {
		return f.spelling()
	}
	return f.spelling() + " " + f.placeholder
}

// description is the flag's help with its default.
func (f flagInfo) description() string {
	if f.def == "" {
		return f.usage
	}
	return fmt.Sprintf("%s (default %s)", f.usage, f.def)
}
