package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/mountmgr/extpass"
	"github.com/vaultui/vaultui/vault"
)

// passSource is where a command's password comes from when the user names one: --passfile
// or --extpass (one of them); neither means the core's sources, then the terminal.
type passSource struct {
	file string
	prog extpassFlag
}

// extpassFlag collects --extpass as gocryptfs does: given once, the command is split on
// spaces (no quoting, no shell); given several times, each value is one argument, unsplit,
// for arguments with spaces.
type extpassFlag []string

func (f *extpassFlag) String() string { return strings.Join(*f, " ") }
func (f *extpassFlag) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		return fmt.Errorf("empty program")
	}
	*f = append(*f, s)
	return nil
}

func (f extpassFlag) argv() []string {
	if len(f) == 1 {
		return extpass.Split(f[0])
	}
	return f
}

const extpassUsage = "get the password from the first line of `PROGRAM`'s output (run without a shell, split on spaces; repeat the option to give arguments with spaces)"

// passSourceFlags defines --passfile (described by fileUsage) and --extpass on fs.
func passSourceFlags(fs *flag.FlagSet, fileUsage string) *passSource {
	s := &passSource{}
	fs.StringVar(&s.file, "passfile", "", fileUsage)
	fs.Var(&s.prog, "extpass", extpassUsage)
	allowCostlyKDF(fs)
	return s
}

// allowCostlyFlag lets a command derive a key that costs more than crypto.DefaultCostBound
// (1 GiB of memory): every command that derives one defines it (passSourceFlags, add), and
// dispatch applies it to the command's context.
const allowCostlyFlag = "allow-costly-kdf"

func allowCostlyKDF(fs *flag.FlagSet) {
	fs.Bool(allowCostlyFlag, false, "allow a key derivation above 1 GiB of memory (a vault whose scrypt cost was raised on purpose); refused without it, naming the memory and time")
}

// allowsCostlyKDF is ctx allowing any key derivation cost when fs has --allow-costly-kdf set.
func allowsCostlyKDF(ctx context.Context, fs *flag.FlagSet) context.Context {
	if f := fs.Lookup(allowCostlyFlag); f != nil && f.Value.String() == "true" {
		return crypto.WithCostBound(ctx, crypto.AnyCost)
	}
	return ctx
}

func (s *passSource) given() bool { return s != nil && (s.file != "" || len(s.prog) > 0) }

// fromSource reads the password from the named source: the passfile, or the program's first
// line (through the core, which runs it: app.RunPasswordProgram).
func (e *env) fromSource(s *passSource) ([]byte, error) {
	if len(s.prog) > 0 {
		e.passFrom = fmt.Sprintf("what %s prints (its first line is the password)", strings.Join(s.prog.argv(), " "))
		return e.app.RunPasswordProgram(e.ctx, s.prog.argv())
	}
	e.passFrom = "the first line of " + s.file
	if s.file == "-" {
		e.passFrom = "the first line of standard input"
	}
	return e.readPassfile(s.file)
}

// readMasterKey reads a master key from src: "-" asks on the terminal when standard input is
// one, else reads its first line; anything else is a file whose first line is the key (as a
// passfile is read). A key written out on the command line is refused unless hexOK (passwd
// keeps taking it for scripts, with a warning): other users see the process list.
func (e *env) readMasterKey(src string, hexOK bool) ([]byte, error) {
	if key, err := vault.ParseMasterKey(src); err == nil {
		if !hexOK {
			crypto.Wipe(key)
			return nil, withHint(e.usage("the master key is never taken from the command line, where other users see it"),
				"give --masterkey - and type or pipe it, or --masterkey FILE")
		}
		fmt.Fprintln(e.stderr, "warning: a master key on the command line is visible to other users in the process list; use --masterkey - (typed, or piped on standard input) or --masterkey FILE")
		return key, nil
	} else if looksLikeKey(src) {
		return nil, err
	}
	var line []byte
	var err error
	if src == "-" && terminalFile(e.stdin) != nil {
		line, err = e.askTerminal("Master key: ", false)
	} else {
		line, err = e.readPassfile(src)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the master key: %w", err)
	}
	defer crypto.Wipe(line)
	return vault.ParseMasterKey(string(line))
}

// looksLikeKey: hex digits and dashes only, as a master key is written (a mistyped one is
// reported as a malformed key, not as a missing file).
func looksLikeKey(s string) bool {
	return len(s) >= 2 && strings.Trim(s, "0123456789abcdefABCDEF-") == ""
}
