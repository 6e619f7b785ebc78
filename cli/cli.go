// Package cli is vaultui's command line: every vault operation as a plain
// subcommand for scripts, with the same packages the terminal app uses.
//
// # Commands
//
// All commands live in one table (commands.go): name, group, summary, usage,
// help, what completes each argument, and a setup function that defines the
// flags on a flag.FlagSet and returns the function that runs the command.
// "vaultui help", each --help, the man page (man.go) and the shell completions
// (completion.go) are generated from it; docs/reference.md is written by hand
// and tests hold it to the table (reference_test.go). Flags may appear before
// or after positional arguments; "--" ends the flags.
//
// # Errors and exit codes
//
// Commands return errors; Main alone prints them, as an "error:" line and
// optional "hint:" lines, and maps them to the exit codes with errors.Is on the
// libraries' sentinel errors (exitcode.go). The codes are listed in the man page
// and in docs/reference.md's "Exit codes" table, which a test compares with them.
//
// # Passwords
//
// Passwords come from the terminal without echo, from a file named by --passfile (its first
// line), or from a program named by --extpass (the first line it prints). They never come
// from the command line or the environment, where other users and logs could see them
// (password.go, passsource.go).
//
// It imports app and the packages below it (registry, vault and vault/gocryptfs for reverse
// configs, crypto, keyring, mountmgr and its subpackages); only main imports it. It never imports ui.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
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
	// commands is the command table, for the commands that describe it (help, man, completion).
	commands []*command
	// passFrom says where the last password read came from, for the hint of a wrong one:
	// "the first line of FILE", "what PROGRAM prints (...)", "the password typed"; "" when
	// none was read here (the keyring's, or the vault's own program, run by the core).
	passFrom string
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
	programs := extpass.Options{Terminal: terminalFile(stdin), Stderr: stderr}
	e := &env{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr, tty: "/dev/tty",
		app: app.New(app.Options{PasswordPrograms: programs,
			DaemonNotice: func(n string) { fmt.Fprintf(stderr, "note: %s\n", n) }}), commands: commands}
	defer e.app.Close()
	if isMountHelperCall(args) {
		args = MountHelperArgs(args)
	}
	err := dispatch(e, args)
	if err == nil || errors.Is(err, errHelpShown) {
		return exitOK
	}
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "error: interrupted")
		return exitInterrupted
	}
	printError(stderr, e.explain(err))
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
		args = []string{helpCommand.name}
	}
	name, rest := args[0], args[1:]
	switch name {
	case "-h", "-help", "--help":
		name = helpCommand.name
	case "-version", "--version":
		name = versionCommand.name
	}
	c := lookup(e.commands, name)
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
	if !c.anyArgs && len(positional) != len(c.operands) {
		return c.wrongArgs(len(positional))
	}
	if flagSet(fs, "passfile") && flagSet(fs, "extpass") { // passSourceFlags
		return usageErrorf(c, "give either --passfile or --extpass, not both")
	}
	e.ctx = allowsCostlyKDF(e.ctx, fs)
	return run(e, positional)
}

func unknownCommand(name string) error {
	msg := fmt.Sprintf("unknown command %q", name)
	if strings.HasPrefix(name, "-") {
		msg = fmt.Sprintf("unknown option %q before the command", name)
	}
	return &usageError{msg: msg, hint: `run "vaultui help" for the list of commands`}
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
