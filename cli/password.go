package cli

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/userfile"
)

// maxPasswordLen bounds what we read from a passfile or terminal; scrypt
// takes any length, but a multi-megabyte "password" is a mistake.
const maxPasswordLen = 4096

// errNoTerminal means a password was needed but there is no terminal to ask.
var errNoTerminal = errors.New("no terminal to ask for the password")

// noTerminalHint says how to give a password without a terminal.
const noTerminalHint = "give the password in a file with --passfile FILE (its first line is used), or from a program with --extpass PROGRAM"

// readPassword returns the password from the source the user named (a passfile, "-" = first
// line of stdin, or a password program) or, when none, asks for it on the terminal without
// echo. For a password being set (isNew) the terminal rates it (app.RatePassword, as the TUI
// does; related are words such as the vault's name), asks twice and refuses a mismatch before
// anything is written. The caller wipes the result with crypto.Wipe.
func (e *env) readPassword(src *passSource, prompt string, isNew bool, related ...string) ([]byte, error) {
	if src.given() {
		return e.fromSource(src)
	}
	return e.askTerminal(prompt, isNew, related...)
}

// readPassfile reads the password from a passfile: "-" is standard input; anything else
// must be a regular file the user owns (see userfile.Open) or a pipe, as `<(pass show
// x)` gives (/dev/fd/N). Reading a pipe, named or not, waits for a writer but can be
// interrupted: a named FIFO that nothing writes to used to hang the command past SIGTERM.
func (e *env) readPassfile(path string) ([]byte, error) {
	var r io.Reader
	name := path
	if path == "-" {
		r, name = e.stdin, "standard input"
	} else {
		f, err := userfile.OpenPipeOrFile(path)
		if err != nil {
			return nil, fmt.Errorf("reading password: %w", err)
		}
		defer f.Close()
		r = f
		if fi, err := f.Stat(); err == nil && fi.Mode()&fs.ModeNamedPipe != 0 {
			pr := &pipeReader{ctx: cmp.Or(e.ctx, context.Background()), f: f, waiting: func() {
				if e.stderr != nil {
					fmt.Fprintf(e.stderr, "Waiting for the password to be written to %s (Ctrl+C to stop)...\n", path)
				}
			}}
			defer pr.close()
			r = pr
		}
	}
	// Like gocryptfs's -passfile: the first line, without its newline.
	// Keeping the same rule keeps vaults made with gocryptfs openable with
	// the same file.
	pw, err := readFirstLine(r, maxPasswordLen+1)
	if errors.Is(err, context.Canceled) {
		return nil, fmt.Errorf("waiting for the password from %s: %w", name, err)
	}
	if err != nil {
		return nil, fmt.Errorf("reading password from %s: %w", name, err)
	}
	if len(pw) == 0 {
		return nil, fmt.Errorf("password from %s is empty", name)
	}
	if len(pw) > maxPasswordLen {
		crypto.Wipe(pw)
		return nil, fmt.Errorf("password from %s is longer than %d bytes", name, maxPasswordLen)
	}
	return pw, nil
}

// readFirstLine reads r's first line, without its newline, into one buffer it allocates
// (no bufio.Reader, whose buffer would keep a copy of the password after the call, never
// wiped): a line longer than max comes back cut at max+1 bytes. Whatever was read past the
// newline (the rest of a passfile) is wiped; so is everything on an error. Best effort: the
// kernel's page cache and the writer's buffers are out of reach.
func readFirstLine(r io.Reader, max int) ([]byte, error) {
	buf := make([]byte, max+1)
	n := 0
	for n < len(buf) {
		k, err := r.Read(buf[n:])
		if i := bytes.IndexByte(buf[n:n+k], '\n'); i >= 0 {
			crypto.Wipe(buf[n+i:])
			return buf[: n+i : n+i], nil
		}
		n += k
		if err == io.EOF {
			break
		}
		if err != nil {
			crypto.Wipe(buf)
			return nil, err
		}
	}
	return buf[:n:n], nil
}

// pipeReader reads a pipe opened non-blocking (userfile.OpenPipeOrFile) until ctx is done.
// A named FIFO that no writer has opened yet reads as end of file, so each read first waits,
// in Go's poller, until the pipe has data or a writer that has come and gone: ctx's end
// interrupts that wait (the deadline wakes the poller), which a blocking open or read could
// not be.
type pipeReader struct {
	ctx     context.Context
	f       *os.File
	waiting func() // called once, the first time the pipe has nothing to read
	said    bool
	stop    func() bool
}

func (p *pipeReader) Read(b []byte) (int, error) {
	if p.stop == nil {
		p.stop = context.AfterFunc(p.ctx, func() { p.f.SetReadDeadline(time.Unix(1, 0)) })
	}
	rc, err := p.f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var rerr error
	err = rc.Read(func(fd uintptr) bool {
		// Readable means data, or a writer that has closed (POLLHUP): then read's 0 is the
		// end. A FIFO never opened for writing reports neither, and the poller waits.
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if k, _ := unix.Poll(pfd, 0); k == 0 {
			if !p.said {
				p.said = true
				p.waiting()
			}
			return false
		}
		n, rerr = unix.Read(int(fd), b)
		return rerr != unix.EAGAIN
	})
	if p.ctx.Err() != nil {
		return 0, p.ctx.Err()
	}
	if err != nil {
		return 0, err
	}
	if rerr != nil {
		return 0, rerr
	}
	if n == 0 && len(b) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

func (p *pipeReader) close() {
	if p.stop != nil {
		p.stop()
	}
}

// terminal returns the terminal to ask the user on: stdin when it is one (prompts then go to
// stderr), else the device e.tty (prompts go there too). done closes what terminal opened.
func (e *env) terminal() (tty *os.File, promptTo io.Writer, done func(), err error) {
	if f := terminalFile(e.stdin); f != nil {
		return f, e.stderr, func() {}, nil
	}
	if e.tty == "" {
		return nil, nil, nil, errNoTerminal
	}
	f, err := os.OpenFile(e.tty, os.O_RDWR, 0)
	if err != nil {
		return nil, nil, nil, err
	}
	return f, f, func() { f.Close() }, nil
}

// askTerminal prompts on stdin when it is a terminal, else on e.tty. With confirm, the
// password is being set: it is rated, then asked again.
func (e *env) askTerminal(prompt string, confirm bool, related ...string) ([]byte, error) {
	tty, promptTo, done, err := e.terminal()
	if err != nil {
		return nil, withHint(errNoTerminal, noTerminalHint)
	}
	defer done()
	e.passFrom = "the password typed (keyboard layout, Caps Lock)"
	pw, err := readNoEcho(tty, promptTo, prompt)
	if err != nil {
		return nil, err
	}
	if confirm {
		// The rating needs a string, a copy this process cannot wipe (as the TUI's field).
		fmt.Fprintf(promptTo, "strength: %s\n", app.RatePassword(string(pw), related...))
		again, err := readNoEcho(tty, promptTo, "Repeat "+strings.ToLower(prompt[:1])+prompt[1:])
		if err != nil {
			crypto.Wipe(pw)
			return nil, err
		}
		same := bytes.Equal(pw, again)
		crypto.Wipe(again)
		if !same {
			crypto.Wipe(pw)
			return nil, errors.New("the passwords do not match; nothing was changed")
		}
	}
	return pw, nil
}

// activePrompt remembers the terminal state while a password prompt has
// echo off, so an interrupt can give the user a working terminal back.
var activePrompt struct {
	sync.Mutex
	fd    int
	state *term.State
}

// restorePrompt restores the terminal if a prompt is active and reports
// whether one was.
func restorePrompt() bool {
	activePrompt.Lock()
	defer activePrompt.Unlock()
	if activePrompt.state == nil {
		return false
	}
	term.Restore(activePrompt.fd, activePrompt.state)
	return true
}

func readNoEcho(tty *os.File, promptTo io.Writer, prompt string) ([]byte, error) {
	fd := int(tty.Fd())
	fmt.Fprint(promptTo, prompt)
	if st, err := term.GetState(fd); err == nil {
		activePrompt.Lock()
		activePrompt.fd, activePrompt.state = fd, st
		activePrompt.Unlock()
	}
	pw, err := term.ReadPassword(fd)
	activePrompt.Lock()
	activePrompt.state = nil
	activePrompt.Unlock()
	fmt.Fprintln(promptTo)
	if err != nil {
		return nil, fmt.Errorf("reading password: %w", err)
	}
	if len(pw) == 0 {
		return nil, errors.New("empty password")
	}
	if len(pw) > maxPasswordLen {
		crypto.Wipe(pw)
		return nil, fmt.Errorf("password is longer than %d bytes", maxPasswordLen)
	}
	return pw, nil
}

// terminalFile returns f (stdin, stdout, stderr) when it is a terminal, else nil: progress
// output goes only there, and a password program may ask on it.
func terminalFile(f any) *os.File {
	if t, ok := f.(*os.File); ok && term.IsTerminal(int(t.Fd())) {
		return t
	}
	return nil
}

// confirmUnverifiedKey asks on the terminal whether to reseal a vault with a master key that
// could not be verified (err wraps vault.ErrKeyUnverifiable); accepted says --unverified-key
// was given. It returns nil only when the user (or the flag) said yes.
func (e *env) confirmUnverifiedKey(err error, accepted bool) error {
	if accepted {
		return nil
	}
	hint := "if you are sure this is the vault's master key, run again with --unverified-key"
	tty, promptTo, done, terr := e.terminal()
	if terr != nil {
		return withHint(fmt.Errorf("%w; nothing was changed", err), "%s", hint)
	}
	defer done()
	fmt.Fprintf(promptTo, "%s.\nA wrong key would make the vault unreadable for good. Reseal it with this key? Type yes to go on: ", app.OneLine(err.Error()))
	answer, rerr := bufio.NewReader(tty).ReadString('\n')
	if rerr != nil && rerr != io.EOF {
		return rerr
	}
	if strings.TrimSpace(strings.ToLower(answer)) != "yes" {
		return withHint(fmt.Errorf("%w; nothing was changed", err), "%s", hint)
	}
	return nil
}
