package mountmgr

import (
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// DefaultLogMax is the size at which the daemon's log file is rotated: daemon.log becomes
// daemon.log.1 (replacing the older one) and a new daemon.log begins. So the log never
// takes more than about twice this.
const DefaultLogMax = 1 << 20

// rotatingLog is the daemon's log file, rotated at max bytes. The descriptors fds are made to
// point at the current file after each rotation: the daemon's stderr (where the Go runtime
// writes a panic) and stdout, when they are the log, stay in the current log.
type rotatingLog struct {
	mu   sync.Mutex
	path string
	max  int64
	f    *os.File
	fds  []int
}

func openRotatingLog(path string, max int64, fds ...int) (*rotatingLog, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the log: %w", err)
	}
	return &rotatingLog{path: path, max: max, f: f, fds: fds}, nil
}

// Write appends p, first rotating when p would take the file over max. The size is the
// file's own (fstat), so writes that bypass this writer (the runtime's, on stderr) count too.
func (l *rotatingLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if fi, err := l.f.Stat(); err == nil && fi.Size() > 0 && fi.Size()+int64(len(p)) > l.max {
		if err := l.rotate(); err != nil {
			// Keep logging to the old file rather than lose the line; say why once per line.
			fmt.Fprintf(l.f, "log rotation failed: %v\n", err)
		}
	}
	return l.f.Write(p)
}

func (l *rotatingLog) rotate() error {
	if err := os.Rename(l.path, l.path+".1"); err != nil {
		return err
	}
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	for _, fd := range l.fds {
		if err := unix.Dup3(int(f.Fd()), fd, 0); err != nil {
			f.Close()
			return fmt.Errorf("pointing fd %d at %s: %w", fd, l.path, err)
		}
	}
	l.f.Close()
	l.f = f
	return nil
}

func (l *rotatingLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}

// isFile reports whether descriptor fd is the file at path (Connect starts the daemon with
// stdout and stderr on the log file).
func isFile(fd int, path string) bool {
	var a, b syscall.Stat_t
	if syscall.Fstat(fd, &a) != nil || syscall.Stat(path, &b) != nil {
		return false
	}
	return a.Dev == b.Dev && a.Ino == b.Ino
}

// detachedEnv marks a daemon that Connect started: its stdin and stdout are /dev/null and its
// stderr is a pipe the client reads until the daemon is ready, so that whatever the daemon
// says before it can answer (why it cannot start, a panic) reaches the user. Once ready, the
// daemon points stdout and stderr at its log file, or at /dev/null when it has none, and
// closes every descriptor it inherited by accident: it keeps nothing of the client's.
const detachedEnv = "VAULTUI_DAEMON_DETACHED"

// logSink is where the daemon logs, and how it got there.
type logSink struct {
	logger *log.Logger
	// file is the log file ("" when the daemon logs to its stderr); fileErr why the log file
	// could not be opened, if that is why.
	file    string
	fileErr error
	rl      *rotatingLog
	// detached: started by Connect (detachedEnv); see ready. isReady: ready was called.
	detached, isReady bool
}

// openLogSink sets up the daemon's log: opts.Logger if set; a daemon started by Connect
// logs to the log file (LogPath) and, when that cannot be opened (a read-only or unusable
// XDG_STATE_HOME), to its stderr, which is /dev/null once it is ready; a daemon run by hand or
// by systemd logs to its stderr (the terminal, the journal), rotating it if it is the log file.
// The daemon runs either way.
func openLogSink(opts ServeOptions) *logSink {
	dl := &logSink{detached: os.Getenv(detachedEnv) == "1"}
	os.Unsetenv(detachedEnv) // not for the daemon's children
	if dl.detached {
		// A write to a client's pipe that is gone (stderr before ready) fails with EPIPE,
		// rather than killing the daemon with SIGPIPE.
		signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	}
	if opts.Logger != nil {
		dl.logger = escapingLogger(opts.Logger)
		return dl
	}
	dl.logger = log.New(os.Stderr, "", log.LstdFlags)
	p, err := LogPath()
	switch {
	case err != nil:
		dl.fileErr = err
	case dl.detached:
		if err = os.MkdirAll(filepath.Dir(p), 0o700); err == nil {
			dl.rl, err = openRotatingLog(p, opts.LogMax, 1, 2)
		}
		dl.fileErr = err
	case isFile(2, p):
		fds := []int{2}
		if isFile(1, p) {
			fds = append(fds, 1)
		}
		dl.rl, dl.fileErr = openRotatingLog(p, opts.LogMax, fds...)
	}
	if dl.rl != nil {
		dl.file = p
		dl.logger = log.New(dl.rl, "", log.LstdFlags)
	}
	dl.logger = escapingLogger(dl.logger)
	if dl.fileErr != nil {
		dl.logger.Printf("cannot use the log file: %v; logging to stderr", dl.fileErr)
	}
	return dl
}

// ready detaches a daemon started by Connect from its client, once the socket answers:
// stdout and stderr go to the log file (where a panic then lands) or /dev/null, which ends the
// client's pipe, and descriptors inherited by accident are closed.
func (dl *logSink) ready() {
	dl.isReady = true
	if !dl.detached {
		return
	}
	closeInherited()
	var target *os.File
	if dl.rl != nil {
		dl.rl.mu.Lock()
		defer dl.rl.mu.Unlock()
		target = dl.rl.f
	} else {
		null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			dl.logger.Printf("detaching stderr: %v", err)
			return
		}
		defer null.Close()
		target = null
	}
	for _, fd := range []int{1, 2} {
		if err := unix.Dup3(int(target.Fd()), fd, 0); err != nil {
			dl.logger.Printf("detaching fd %d: %v", fd, err)
		}
	}
}

// startFailed records in the log file why the daemon could not start (err, if not nil); the
// caller prints it on stderr, which goes to the client that started the daemon, or the user.
func (dl *logSink) startFailed(err error) {
	if err != nil && !dl.isReady && dl.rl != nil {
		dl.logger.Printf("cannot start: %v", err)
	}
}

// stderrNull says whether the daemon's stderr, where it logs without a log file, is /dev/null.
func (dl *logSink) stderrNull() bool { return dl.detached && dl.rl == nil }

func (dl *logSink) Close() {
	if dl.rl != nil {
		dl.rl.Close()
	}
}

// closeInherited closes the descriptors above stderr that the process inherited: those
// without close-on-exec, which everything Go opens has. A client's shell may leave such a
// descriptor open (a pipe another program waits to see closed); the daemon outlives the client
// and must not keep it.
func closeInherited() {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil && flags&unix.FD_CLOEXEC == 0 {
			unix.Close(fd)
		}
	}
}
