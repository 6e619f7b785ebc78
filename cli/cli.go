// Package cli is vaultui's command line: every vault operation as a plain
// subcommand for scripts, with the same packages the terminal app uses.
//
// # Commands
//
// All commands live in one table (commands.go). Each command defines its
// flags on a flag.FlagSet and returns the function that runs it, so help
// text, flag parsing and running come from one place. Flags may appear
// before or after positional arguments; "--" ends the flags.
//
// # Errors and exit codes
//
// Commands return errors; Main alone prints them, as an "error:" line and
// optional "hint:" lines, and maps them to the exit codes documented in
// README.md with errors.Is on the libraries' sentinel errors (exitcode.go).
//
// # Passwords
//
// Passwords come from the terminal without echo, from a file named by --passfile (its first
// line), or from a program named by --extpass (the first line it prints). They never come
// from the command line or the environment, where other users and logs could see them
// (password.go, passsource.go).
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/mountmgr/extpass"
)

// env is what a running command may use instead of globals: its streams and
// a context cancelled on SIGINT/SIGTERM.
type env struct {
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	cmd    *command // the running command, for usage errors
	// tty is the terminal device asked for passwords when stdin is not a terminal ("": none).
	tty string
	// app is the product core the commands present.
	app *app.App
	// speed is the speed test with its cache; nil means app.NewSpeed's (tests give their own).
	speed *app.Speed
}

// usage reports a mistake in the running command's arguments (exit code 2).
func (e *env) usage(format string, args ...any) error {
	return usageErrorf(e.cmd, format, args...)
}

// Main runs the command line with args (without the program name) and
// returns the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := interruptContext(stderr)
	defer stop()
	// A password program may ask on the terminal (keepassxc-cli asks for its database's
	// password) and its messages go where ours do.
	programs := extpass.Options{Terminal: stdinTerminal(stdin), Stderr: stderr}
	e := &env{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr, tty: "/dev/tty",
		app: app.New(app.Options{PasswordPrograms: programs})}
	defer e.app.Close()
	if isMountHelperCall(args) {
		args = MountHelperArgs(args)
	}
	err := dispatch(e, args)
	if err == nil {
		return exitOK
	}
	if errors.Is(err, errHelpShown) {
		return exitOK
	}
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "error: interrupted")
		return exitInterrupted
	}
	printError(stderr, err)
	return exitCode(err)
}

// interruptContext returns a context cancelled by the first SIGINT or
// SIGTERM, so long operations (fsck, export, the daemon) stop cleanly. A
// signal while a password prompt has the terminal's echo off restores the
// terminal and exits at once: the prompt's read cannot be cancelled. A
// second signal exits at once too.
func interruptContext(stderr io.Writer) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		for n := 0; ; n++ {
			select {
			case <-done:
				return
			case <-sigs:
			}
			if restorePrompt() || n > 0 {
				fmt.Fprintln(stderr, "\ninterrupted")
				os.Exit(exitInterrupted)
			}
			cancel()
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}

// errHelpShown ends a command after --help was printed.
var errHelpShown = errors.New("help shown")

func dispatch(e *env, args []string) error {
	if len(args) == 0 {
		printOverview(e.stdout)
		return nil
	}
	name, rest := args[0], args[1:]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(rest) == 0 {
			printOverview(e.stdout)
			return nil
		}
		c := lookup(rest[0])
		if c == nil {
			return unknownCommand(rest[0])
		}
		printCommandHelp(e.stdout, c)
		return nil
	}
	c := lookup(name)
	if c == nil {
		return unknownCommand(name)
	}
	fs := newFlagSet(c.name)
	run := c.setup(fs)
	e.cmd = c
	positional, err := parseInterspersed(fs, rest)
	if errors.Is(err, flag.ErrHelp) {
		printCommandHelp(e.stdout, c)
		return errHelpShown
	}
	if err != nil {
		return usageErrorf(c, "%v", err)
	}
	return run(e, positional)
}

func unknownCommand(name string) error {
	if strings.HasPrefix(name, "-") {
		return &usageError{msg: fmt.Sprintf("unknown option %q before the command", name),
			hint: `run "vaultui help" for the list of commands`}
	}
	return &usageError{msg: fmt.Sprintf("unknown command %q", name),
		hint: `run "vaultui help" for the list of commands`}
}

// newFlagSet returns a silent flag set: Main prints errors and help itself.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseInterspersed parses flags anywhere among the arguments, as users
// expect ("vaultui info work --json"); the standard flag package stops at
// the first positional argument. "--" ends flag parsing.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		// Parse stops either after consuming "--" or at a positional
		// argument, which it leaves in rest.
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// printOverview prints "vaultui help".
func printOverview(w io.Writer) {
	fmt.Fprint(w, `vaultui manages gocryptfs-compatible encrypted vaults.

usage: vaultui                 open the terminal app
       vaultui COMMAND [options] [arguments]
       vaultui COMMAND --help  show a command's options
`)
	groups := map[string][]*command{}
	for _, c := range allCommands() {
		groups[c.group] = append(groups[c.group], c)
	}
	for _, g := range groupOrder() {
		cs := groups[g]
		// Commands registered from init functions arrive in file order;
		// list the everyday ones first.
		sort.SliceStable(cs, func(i, j int) bool { return helpRank(cs[i].name) < helpRank(cs[j].name) })
		if len(cs) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", g)
		for _, c := range cs {
			fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
		}
	}
	fmt.Fprint(w, `
VAULT is a registered vault's name or the path of its encrypted directory.
Exit codes are listed in README.md.
`)
}

// helpRank orders commands within a group in "vaultui help".
func helpRank(name string) int {
	order := []string{"init", "info", "passwd", "fsck", "export", "convert", "conflicts", "path", "list", "add", "forget",
		"mount", "unmount", "status", "daemon", "bench", "speed"}
	for i, n := range order {
		if n == name {
			return i
		}
	}
	return len(order)
}

// groupOrder lists command groups: the known ones first, any others after,
// sorted, so a group added later still shows up.
func groupOrder() []string {
	order := []string{groupVaults, groupRegistry, groupMounts, groupOther}
	seen := map[string]bool{}
	for _, g := range order {
		seen[g] = true
	}
	var extra []string
	for _, c := range allCommands() {
		if !seen[c.group] {
			seen[c.group] = true
			extra = append(extra, c.group)
		}
	}
	sort.Strings(extra)
	return append(order, extra...)
}

// printCommandHelp prints "vaultui COMMAND --help".
func printCommandHelp(w io.Writer, c *command) {
	fmt.Fprintf(w, "usage: vaultui %s %s\n\n%s\n", c.name, c.args, c.summary)
	if c.help != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(c.help, "\n"))
	}
	fs := newFlagSet(c.name)
	c.setup(fs)
	lines := [][2]string{}
	fs.VisitAll(func(f *flag.Flag) {
		valueName, usage := flag.UnquoteUsage(f)
		left := "--" + f.Name
		if len(f.Name) == 1 {
			left = "-" + f.Name // mount -o, as mount(8) spells it
		}
		if valueName != "" {
			left += " " + strings.ToUpper(valueName)
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		lines = append(lines, [2]string{left, usage})
	})
	lines = append(lines, [2]string{"--help", "show this help"})
	width := 0
	for _, l := range lines {
		width = max(width, len(l[0]))
	}
	fmt.Fprintln(w, "\noptions:")
	for _, l := range lines {
		fmt.Fprintf(w, "  %-*s  %s\n", width, l[0], l[1])
	}
}
