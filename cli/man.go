package cli

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/vaultui/vaultui/app"
)

var manCommand = &command{
	name:    "man",
	group:   groupOther,
	summary: "Print the manual page vaultui.1 (roff), generated like help",
	help: `To install it for your user (man finds it through ~/.local/bin on PATH):

  mkdir -p ~/.local/share/man/man1
  vaultui man > ~/.local/share/man/man1/vaultui.1

or read it at once with "vaultui man | man -l -".`,
	setup: noFlags(func(e *env, args []string) error {
		writeMan(e.stdout, e.commands)
		return nil
	}),
}

// writeMan writes the manual page: the overview, every command with its options, and the
// exit codes.
func writeMan(w io.Writer, table []*command) {
	fmt.Fprintf(w, `.TH VAULTUI 1 "" vaultui "User Commands"
.SH NAME
vaultui \- manage encrypted vaults in the %s formats
.SH SYNOPSIS
`, app.FormatNames("and"))
	for i, u := range overviewUsage {
		if i > 0 {
			fmt.Fprintln(w, ".br")
		}
		fmt.Fprintln(w, ".B vaultui")
		if u[0] != "" {
			fmt.Fprintln(w, roffLine(u[0]))
		}
	}
	fmt.Fprintf(w, `.SH DESCRIPTION
vaultui creates, checks and mounts vaults in the gocryptfs v2 format.
Without arguments it opens the terminal app; with a command it runs that command, for scripts.
%s
Flags may come before or after the arguments;
.B \-\-
ends the flags.
`, roffLine(vaultArgNote))
	for _, g := range byGroup(visibleCommands(table)) {
		fmt.Fprintf(w, ".SH %s\n", roffLine(strings.ToUpper(g.name)))
		for _, c := range g.commands {
			writeManCommand(w, c)
		}
	}
	fmt.Fprintln(w, ".SH EXIT STATUS")
	for _, s := range exitStatuses {
		fmt.Fprintf(w, ".TP\n.B %d\n%s\n", s.code, roffMarkdown(s.meaning))
	}
	fmt.Fprint(w, `.SH SEE ALSO
.BR gocryptfs (1),
.BR fusermount3 (1),
and docs/reference.md in vaultui's source.
`)
}

// writeManCommand writes one command: its usage, summary, help and options.
func writeManCommand(w io.Writer, c *command) {
	fmt.Fprintf(w, ".SS %s\n.B vaultui %s\n", c.name, c.name)
	if c.args != "" {
		fmt.Fprintln(w, roffLine(c.args))
	}
	fmt.Fprintf(w, ".PP\n%s.\n", roffLine(c.summary))
	if c.help != "" {
		fmt.Fprintln(w, ".PP")
		writeRoffText(w, c.help)
	}
	fmt.Fprintln(w, ".PP\nOptions:")
	for _, f := range c.flags() {
		fmt.Fprintf(w, ".TP\n\\fB%s\\fR", roffEscape(f.spelling()))
		if f.placeholder != "" {
			fmt.Fprintf(w, " \\fI%s\\fR", roffEscape(f.placeholder))
		}
		fmt.Fprintf(w, "\n%s\n", roffLine(f.description()))
	}
	fmt.Fprint(w, ".TP\n\\fB\\-\\-help\\fR\nshow this help\n")
}

// writeRoffText writes help text: paragraphs of running text, which roff fills, and indented
// lines (examples), which it keeps as they are.
func writeRoffText(w io.Writer, text string) {
	literal := false
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		indented := strings.HasPrefix(line, " ")
		if line == "" {
			if literal {
				fmt.Fprintln(w, ".fi")
				literal = false
			}
			fmt.Fprintln(w, ".PP")
			continue
		}
		if indented != literal {
			if indented {
				fmt.Fprintln(w, ".nf")
			} else {
				fmt.Fprintln(w, ".fi")
			}
			literal = indented
		}
		fmt.Fprintln(w, roffLine(line))
	}
	if literal {
		fmt.Fprintln(w, ".fi")
	}
}

// roffEscape makes text print as itself: backslashes escaped, and hyphens as the minus signs
// that options and paths are typed with.
func roffEscape(s string) string {
	return strings.NewReplacer(`\`, `\e`, "-", `\-`).Replace(s)
}

// roffLine escapes a line of text, which must not start like a roff request.
func roffLine(s string) string {
	s = roffEscape(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		return `\&` + s
	}
	return s
}

var markdownCode = regexp.MustCompile("`([^`]*)`")

// roffMarkdown is roffLine for text with Markdown's `code`, set in bold.
func roffMarkdown(s string) string {
	return markdownCode.ReplaceAllString(roffLine(s), `\fB$1\fR`)
}
