package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/termsafe"
	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/registry"
	"github.com/vaultui/vaultui/vault"
)

// Exit codes: a stable contract for scripts. The man page lists exitStatuses; the table in
// docs/reference.md ("Exit codes") is written by hand and checked by TestReadmeDocumentsCommands.
const (
	exitOK             = 0
	exitError          = 1 // anything not listed below
	exitUsage          = 2
	exitWrongPassword  = 3
	exitCorrupt        = 4 // vault corrupt; also: fsck found problems
	exitMountpoint     = 5 // mount point missing, not a directory, not empty, or nested with the cipherdir
	exitAlreadyMounted = 6
	exitBusy           = 7
	exitDaemon         = 8  // daemon unreachable or protocol version mismatch
	exitNoSuchVault    = 9  // not in the registry and not a cipherdir
	exitUnsupported    = 10 // a valid vault using a feature vaultui does not support

	// exitInterrupted is the shell's convention for death by SIGINT (128+2),
	// used when an interrupt cannot wait for a clean stop.
	exitInterrupted = 130
)

// exitStatuses says what each exit code means, in the man page and docs/reference.md
// (Markdown: `code` marks literal text).
var exitStatuses = []struct {
	code    int
	meaning string
}{
	{exitOK, "success"},
	{exitError, "any other error"},
	{exitUsage, "usage error (unknown command, bad flag or argument)"},
	{exitWrongPassword, "wrong password (nothing was changed)"},
	{exitCorrupt, "vault corrupt (also: scrypt parameters gocryptfs never writes, a `gocryptfs.conf` that is not a regular file, a conflict copy that does not decrypt), or `fsck` found problems"},
	{exitMountpoint, "mount point missing, not a directory, not empty, or nested with the vault's cipherdir"},
	{exitAlreadyMounted, "already mounted (also: `convert` refuses a mounted vault)"},
	{exitBusy, "mount busy"},
	{exitDaemon, "mount manager (daemon) unreachable, protocol version mismatch, or its socket refused as unsafe"},
	{exitNoSuchVault, "no such vault (not in the registry and not a cipherdir)"},
	{exitUnsupported, "a valid vault that vaultui cannot open: FIDO2, another format version or an unknown feature flag (gocryptfs may open it), scrypt needing more memory than is available here, or a conversion into a format that cannot hold some entries (`convert --drop-unsupported`)"},
	{exitInterrupted, "interrupted (Ctrl+C or SIGTERM before the command could finish)"},
}

// exitCodes gives each kind of error (mountmgr.KindOf) its exit code; other kinds exit with
// exitError.
var exitCodes = map[mountmgr.Kind]int{
	mountmgr.KindWrongPassword:  exitWrongPassword,
	mountmgr.KindKDFMemory:      exitUnsupported,
	mountmgr.KindKDFCostly:      exitUnsupported,
	mountmgr.KindUnsupported:    exitUnsupported,
	mountmgr.KindCorrupt:        exitCorrupt,
	mountmgr.KindNotFound:       exitNoSuchVault,
	mountmgr.KindMountpoint:     exitMountpoint,
	mountmgr.KindAlreadyMounted: exitAlreadyMounted,
	mountmgr.KindBusy:           exitBusy,
	mountmgr.KindDaemon:         exitDaemon,
}

// exitCoder is an error that knows its exit code.
type exitCoder interface{ ExitCode() int }

func exitCode(err error) int {
	var ec exitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	if code, ok := exitCodes[mountmgr.KindOf(err)]; ok {
		return code
	}
	return exitError
}

// usageError is a mistake in the command line itself: exit code 2.
type usageError struct {
	msg  string
	hint string
}

func (u *usageError) Error() string { return u.msg }
func (u *usageError) ExitCode() int { return exitUsage }

// usageErrorf reports a usage mistake in command c, with a hint to its help.
func usageErrorf(c *command, format string, args ...any) error {
	return &usageError{
		msg:  c.name + ": " + fmt.Sprintf(format, args...),
		hint: fmt.Sprintf(`run "vaultui %s --help" for usage`, c.name),
	}
}

// hintError adds a hint line to an error without changing what it wraps.
type hintError struct {
	err  error
	hint string
}

func (h *hintError) Error() string { return h.err.Error() }
func (h *hintError) Unwrap() error { return h.err }

// withHint wraps err so that Main prints hint below it.
func withHint(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return &hintError{err: err, hint: fmt.Sprintf(format, args...)}
}

// codeError gives err an explicit exit code.
type codeError struct {
	err  error
	code int
}

func (c *codeError) Error() string { return c.err.Error() }
func (c *codeError) Unwrap() error { return c.err }
func (c *codeError) ExitCode() int { return c.code }

// printError writes err as age does: "error: ..." then any "hint: ..." lines.
func printError(w io.Writer, err error) {
	// Messages quote vault-controlled text (names, config fields): escape it for the terminal.
	fmt.Fprintf(w, "error: %s\n", termsafe.Escape(app.OneLine(err.Error())))
	for _, h := range hints(err) {
		fmt.Fprintf(w, "hint: %s\n", termsafe.Escape(h))
	}
}

// hints collects every hint attached anywhere in err's chain, outermost
// first, plus the standard hints for well-known failures.
func hints(err error) []string {
	var out []string
	for e := err; e != nil; e = errors.Unwrap(e) {
		switch h := e.(type) {
		case *hintError:
			out = append(out, h.hint)
		case *usageError:
			if h.hint != "" {
				out = append(out, h.hint)
			}
		}
	}
	if errors.Is(err, crypto.ErrKDFCostly) {
		// Whatever else was said ("nothing was created"): the way on is this option.
		out = append(out, "if you chose this cost, give --"+allowCostlyFlag+" (vaultui add --"+allowCostlyFlag+" records it for a vault); if not, the vault's config was changed by someone else")
		return out
	}
	if len(out) == 0 {
		switch {
		case errors.Is(err, vault.ErrNotFound):
			out = append(out, `run "vaultui list" to see registered vaults, or give the vault's directory`)
		case errors.Is(err, crypto.ErrKDFMemory):
			out = append(out, "the vault is fine; open it on a machine with more free memory (gocryptfs needs as much)")
		case errors.Is(err, vault.ErrUnsupported):
			// The error itself names what the folder is and what opens it (vault.Identify).
		case errors.Is(err, registry.ErrCorrupt):
			out = append(out, "vaultui leaves the file alone; repair it by hand or move it away to start a new list")
		}
	}
	return out
}

// explain gives a wrong password without a hint of its own the one that names where the
// password came from (env.passFrom): the passfile's first line, the program's output, or
// what was typed; --passfile is not named where none was given.
func (e *env) explain(err error) error {
	if !errors.Is(err, vault.ErrWrongPassword) || len(hints(err)) > 0 {
		return err
	}
	if e.passFrom == "" {
		return withHint(err, "nothing was changed; check the password")
	}
	return withHint(err, "nothing was changed; check %s", e.passFrom)
}
