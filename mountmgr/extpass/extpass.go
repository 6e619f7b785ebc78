// Package extpass gets a vault's password from a program the user names (gocryptfs's
// -extpass): `pass show vault`, `secret-tool lookup vault work`, `keepassxc-cli show ...`.
// The CLI (through package app) and the daemon's automount both run it, so it lives here,
// below both, as the keyring does.
//
// The program runs without a shell: the command is an argument vector. As gocryptfs does, a
// single string is split on spaces (Split), and several --extpass flags are taken as the
// arguments, unsplit. It runs in its own process group, with standard input from /dev/null
// unless the caller hands it a terminal. The password is the first line of its standard
// output, without the newline; the rest of the output is read and thrown away (so a program
// that prints more, as `pass show` of a multi-line entry does, is not killed by a closed
// pipe). It must exit with status 0 within the timeout; otherwise its whole process group is
// killed. Its group is killed when it exits too, with a password or without: a child it left
// in the background does not outlive it. Errors name the program (its first word, never its output) and say what went
// wrong: its exit status and the first line of its standard error, a timeout, or no
// password printed.
//
// It imports only crypto (to wipe what it read); app, cli and mountmgr import it.
package extpass

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
)

// MaxLen bounds the password line, as vaultui's passfiles are bounded: a longer first line is
// refused, never cut.
const MaxLen = 4096

// DefaultTimeout bounds a program's run. It is long because a program may wait for a person
// (a pinentry, a password manager's unlock dialog) and short enough that a daemon at login
// does not wait forever for a program that hangs.
const DefaultTimeout = 60 * time.Second

// ErrFailed is wrapped by every error of a password program: it failed, hung, or printed no
// password.
var ErrFailed = errors.New("password program failed")

// Options are the run's surroundings; the zero value suits a daemon (no terminal, the
// program's standard error kept only for the error message).
type Options struct {
	// Timeout bounds the run; 0 is DefaultTimeout.
	Timeout time.Duration
	// Terminal, when set, is the terminal the program may ask on: its standard input, and the
	// terminal's foreground while it runs (so it can read it and turn echo off), given back
	// after. nil: standard input is /dev/null.
	Terminal *os.File
	// Stderr also receives the program's standard error as it comes (a front end shows its
	// prompts and messages); nil: only its first line is kept, for the error.
	Stderr io.Writer
}

// Split makes a command string an argument vector the way gocryptfs's -extpass does: on
// spaces, with no quoting and no shell. Empty words (two spaces) are dropped.
func Split(s string) []string {
	return strings.Fields(s)
}

// String shows argv for messages and the registry listing: the words joined by spaces.
func String(argv []string) string { return strings.Join(argv, " ") }

// Run runs argv and returns the first line of its output, to be wiped by the caller
// (crypto.Wipe). ctx ends it early (the program's group is killed).
func Run(ctx context.Context, argv []string, opts Options) ([]byte, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, fmt.Errorf("%w: no program given", ErrFailed)
	}
	name := argv[0]
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	out := &lineWriter{buf: make([]byte, 0, MaxLen+1)}
	errs := &firstLine{also: opts.Stderr}
	cmd := exec.CommandContext(ctx, name, argv[1:]...)
	cmd.Stdout, cmd.Stderr = out, errs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var fg *foreground
	if opts.Terminal != nil {
		cmd.Stdin = opts.Terminal
		if fg = takeForeground(opts.Terminal); fg != nil {
			cmd.SysProcAttr.Foreground = true
			cmd.SysProcAttr.Ctty = fg.fd
		}
	}
	// The whole group: a shell script's children (a sleep, a gpg) go with it.
	cmd.Cancel = func() error { return unix.Kill(-cmd.Process.Pid, unix.SIGKILL) }
	// A child that outlives the program and keeps its output open does not hold us up.
	cmd.WaitDelay = time.Second
	err := cmd.Start()
	if err != nil {
		fg.restore()
		return nil, fmt.Errorf("%w: %s: %w", ErrFailed, name, err)
	}
	// Once the program has exited, its output is complete but for what children it left in
	// its group still write: those (a `sleep &`, an agent started without setsid) are
	// killed, with a password or without, so nothing the program started outlives it.
	// gocryptfs kills the group only on a timeout. The program is waited for without being
	// reaped: while it is a zombie its pid stays its group's ID, so the kill cannot reach a
	// group that reused the number.
	if waitExited(cmd.Process.Pid) == nil {
		unix.Kill(-cmd.Process.Pid, unix.SIGKILL)
	}
	err = cmd.Wait()
	fg.restore()
	pw := out.line()
	fail := func(format string, args ...any) ([]byte, error) {
		crypto.Wipe(out.buf[:cap(out.buf)])
		msg := fmt.Sprintf(format, args...)
		if l := errs.String(); l != "" {
			msg += ": " + l
		}
		return nil, fmt.Errorf("%w: %s %s", ErrFailed, name, msg)
	}
	if errors.Is(err, exec.ErrWaitDelay) {
		err = nil // it exited with status 0; a child of its kept the output open
	}
	switch {
	case err != nil && ctx.Err() != nil && errors.Is(context.Cause(ctx), context.DeadlineExceeded):
		return fail("did not finish within %s and was stopped", timeout)
	case err != nil && ctx.Err() != nil:
		return fail("was stopped: %v", ctx.Err())
	case err != nil:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
				return fail("was killed by signal %s", st.Signal())
			}
			return fail("exited with status %d", ee.ExitCode())
		}
		return fail("failed: %v", err)
	case out.tooLong:
		return fail("printed a first line longer than %d bytes", MaxLen)
	case len(pw) == 0:
		return fail("printed no password")
	}
	return pw, nil
}

// waitExited blocks until process pid has exited, leaving it to be reaped (waitid WNOWAIT).
// A context's Cancel, which exec calls from its own goroutine, ends it too, by killing pid.
func waitExited(pid int) error {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return err
		}
	}
}

// lineWriter keeps the first line written to it, up to MaxLen bytes (tooLong past that), in a
// buffer allocated once so the password is never copied elsewhere; the rest is thrown away.
// As an io.ReaderFrom it reads the pipe itself, so exec's copy buffer never holds the
// password either.
type lineWriter struct {
	buf     []byte
	done    bool // the first line ended (newline, or too long)
	tooLong bool
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	if w.done {
		return n, nil
	}
	if i := bytes.IndexByte(p, '\n'); i >= 0 {
		p, w.done = p[:i], true
	}
	if len(w.buf)+len(p) > MaxLen {
		w.tooLong, w.done = true, true
		return n, nil
	}
	w.buf = append(w.buf, p...)
	return n, nil
}

func (w *lineWriter) ReadFrom(r io.Reader) (int64, error) {
	var scratch [512]byte
	defer crypto.Wipe(scratch[:])
	var total int64
	for {
		n, err := r.Read(scratch[:])
		total += int64(n)
		w.Write(scratch[:n])
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// line is the password: the first line without its newline, or without the carriage return
// of a "\r\n" ending.
func (w *lineWriter) line() []byte {
	if w.tooLong {
		return nil
	}
	return bytes.TrimSuffix(w.buf, []byte("\r"))
}

// firstLine keeps the first line of the program's standard error (at most 200 bytes, control
// characters replaced) for the error message, and passes everything on to also.
type firstLine struct {
	also io.Writer
	buf  []byte
	done bool
}

const maxErrLine = 200

func (f *firstLine) Write(p []byte) (int, error) {
	if f.also != nil {
		f.also.Write(p)
	}
	for _, c := range p {
		if f.done {
			break
		}
		switch {
		case c == '\n':
			f.done = len(bytes.TrimSpace(f.buf)) > 0
			if !f.done {
				f.buf = f.buf[:0]
			}
		case len(f.buf) >= maxErrLine:
			f.done = true
		case c < 0x20 || c == 0x7f:
			f.buf = append(f.buf, '?')
		default:
			f.buf = append(f.buf, c)
		}
	}
	return len(p), nil
}

func (f *firstLine) String() string {
	return strings.ToValidUTF8(strings.TrimSpace(string(f.buf)), "?")
}
