package mountmgr

import (
	"fmt"
	"os"
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
