package mountmgr

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
)

// Client talks to the daemon over its control socket. Its methods are safe for concurrent use;
// requests on one Client are answered in turn, and Watch uses a connection of its own.
type Client struct {
	path string

	mu     sync.Mutex
	conn   net.Conn // nil after an I/O error: the next call dials again
	r      *bufio.Reader
	nextID uint64
	closed bool

	// daemon is what the daemon said of itself when dialled; notice is Notice.
	daemon DaemonInfo
	notice string
}

// DaemonCommand builds the command that starts the daemon; Connect runs it detached when no
// daemon answers. The default runs this executable with the argument "daemon". Tests replace it.
var DaemonCommand = func() (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "daemon")
	// argv[0] "vaultui": harmless for the real binary, and what lets a test binary that
	// dispatches on argv[0] (testscript) run the daemon.
	cmd.Args[0] = "vaultui"
	return cmd, nil
}

// daemonStartTimeout bounds how long Connect waits for a freshly started daemon.
const daemonStartTimeout = 15 * time.Second

// Connect connects to the user's daemon, starting it when nothing answers on the socket, and
// replacing it when it is an idle daemon of another build (see builds.go).
func Connect(ctx context.Context) (*Client, error) {
	build := clientBuild()
	path := SocketPath()
	c, err := dial(ctx, path)
	if err == nil {
		if c.sameBuild(build) {
			return c, nil
		}
		c.Close() // dialled again under the start lock
	}
	var unsafe *unsafeSocketError
	var version *versionError
	if errors.As(err, &unsafe) || errors.As(err, &version) {
		// Never start a daemon next to someone else's socket, nor beside one of another
		// version, which holds the lock (the error says how to stop it).
		return nil, err
	}
	if err := ensureSocketDir(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDaemon, err)
	}
	// One starter at a time: whoever holds the lock starts the daemon, the others find it
	// answering once they get the lock.
	lock, err := os.OpenFile(filepath.Join(filepath.Dir(path), "start.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDaemon, err)
	}
	defer lock.Close()
	if err := flockContext(ctx, lock); err != nil {
		return nil, fmt.Errorf("%w: waiting for the daemon start lock: %w", ErrDaemon, err)
	}
	defer unix.Flock(int(lock.Fd()), unix.LOCK_UN)
	if c, err := dial(ctx, path); err == nil {
		if c.sameBuild(build) {
			return c, nil
		}
		gone, err := c.replaceOrKeep(ctx, build)
		if err != nil {
			c.Close()
			return nil, err
		}
		if !gone {
			return c, nil
		}
	} else if errors.As(err, &unsafe) || errors.As(err, &version) {
		return nil, err
	}
	started, err := startDaemon()
	if err != nil {
		return nil, fmt.Errorf("%w: starting the daemon: %w", ErrDaemon, err)
	}
	defer started.stderr.Close()
	deadline := time.Now().Add(daemonStartTimeout)
	var lastErr error
	for time.Now().Before(deadline) {
		c, err := dial(ctx, path)
		if err == nil {
			return c, nil
		}
		if errors.As(err, &unsafe) {
			return nil, err
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case exitErr := <-started.done:
			return nil, started.failure(exitErr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil, fmt.Errorf("%w: the daemon did not answer on %s: %w", ErrDaemon, path, lastErr)
}

func flockContext(ctx context.Context, f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// startedDaemon is a daemon Connect started and waits for.
type startedDaemon struct {
	done <-chan error // its exit
	// stderr is the read end of its stderr until it is ready; said is what it wrote there,
	// delivered once it closes it (ready, or gone).
	stderr *os.File
	said   <-chan string
}

// startDaemon runs the daemon in a new session, in /, with stdin and stdout on /dev/null and
// stderr on a pipe until it is ready (see detachedEnv): what it says there before it can
// answer is why it could not start, which the client tells the user.
func startDaemon() (*startedDaemon, error) {
	cmd, err := DaemonCommand()
	if err != nil {
		return nil, err
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer devnull.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer pw.Close()
	cmd.Stdin = devnull
	cmd.Stdout = devnull
	cmd.Stderr = pw
	cmd.Env = append(cmd.Environ(), detachedEnv+"=1")
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true
	// Not the client's working directory: the daemon would keep it busy (perhaps a mount).
	cmd.Dir = "/"
	if err := cmd.Start(); err != nil {
		pr.Close()
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	said := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(pr, 16<<10))
		said <- string(b)
	}()
	return &startedDaemon{done: done, stderr: pr, said: said}, nil
}

// failure is the error for a daemon that exited (exitErr) before it answered: what it said on
// stderr, or where to look.
func (s *startedDaemon) failure(exitErr error) error {
	var said string
	select {
	case said = <-s.said:
	case <-time.After(time.Second): // a child of the daemon holds the pipe
	}
	if said = strings.TrimSpace(said); said != "" {
		return fmt.Errorf("%w: the daemon could not start (%v): %s", ErrDaemon, exitErr, said)
	}
	logPath, _ := LogPath()
	return fmt.Errorf("%w: the daemon exited at start (%v); see %s", ErrDaemon, exitErr, logPath)
}

// Dial connects to the daemon listening on the socket at path, without starting one: for
// callers that run a daemon of their own (the bench, with private XDG dirs).
func Dial(ctx context.Context, path string) (*Client, error) {
	c, err := dial(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDaemon, err)
	}
	return c, nil
}

// dial connects and checks that the daemon speaks our protocol version.
func dial(ctx context.Context, path string) (*Client, error) {
	conn, err := dialSocket(ctx, path)
	if err != nil {
		return nil, err
	}
	c := &Client{path: path, conn: conn, r: bufio.NewReaderSize(conn, 64<<10)}
	resp, err := c.call(ctx, request{Op: opPing})
	if err != nil {
		conn.Close()
		return nil, err
	}
	c.daemon.PID = resp.PID
	if resp.Daemon != nil {
		c.daemon = *resp.Daemon
	}
	return c, nil
}

// call sends one request and waits for its response.
func (c *Client) call(ctx context.Context, req request) (*response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, fmt.Errorf("%w: client is closed", ErrDaemon)
	}
	if c.conn == nil {
		// The last call broke the connection (cancelled mid-answer, or the daemon restarted).
		conn, err := dialSocket(ctx, c.path)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrDaemon, err)
		}
		c.conn, c.r = conn, bufio.NewReaderSize(conn, 64<<10)
	}
	c.nextID++
	req.V, req.ID, req.Target = ProtocolVersion, c.nextID, absolute(req.Target)
	dl, _ := ctx.Deadline() // none: the zero time, no deadline
	c.conn.SetDeadline(dl)
	// A cancelled context interrupts the blocking read. The func may run after ioError has
	// dropped c.conn, so it holds on to this call's connection.
	conn := c.conn
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	line, err := marshalRequest(req)
	if err != nil {
		return nil, err
	}
	if len(line) > maxRequestLine+1 {
		crypto.Wipe(line)
		return nil, fmt.Errorf("request of %d bytes is over the limit of %d (a password that long?)", len(line), maxRequestLine)
	}
	_, err = c.conn.Write(line)
	crypto.Wipe(line)
	if err != nil {
		return nil, c.ioError(ctx, err)
	}
	for {
		resp, err := readReply(c.r)
		if err != nil {
			return nil, c.ioError(ctx, err)
		}
		if resp.ID != 0 && resp.ID != req.ID {
			continue // a late answer to a request whose caller gave up
		}
		if resp.Error != nil {
			return nil, fromWire(resp.Error)
		}
		return resp, nil
	}
}

// absolute makes a request's target (a cipherdir or a mount point) absolute: the daemon has
// another working directory. "" stays "".
func absolute(target string) string {
	if abs, err := filepath.Abs(target); err == nil && target != "" {
		return abs
	}
	return target
}

// ioError reports a failed exchange and drops the connection, whose stream may now be out of
// step; the next call dials again. The caller holds c.mu.
func (c *Client) ioError(ctx context.Context, err error) error {
	c.conn.Close()
	c.conn = nil
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return daemonIOError(c.path, err)
}

// daemonIOError is err from the daemon at socket path, with advice for a daemon of another
// version: it is stopped by a signal, since this vaultui cannot talk to it.
func daemonIOError(path string, err error) error {
	var ve *versionError
	if errors.As(err, &ve) {
		pid := "its pid"
		if b, rerr := os.ReadFile(filepath.Join(filepath.Dir(path), "daemon.lock")); rerr == nil && len(bytes.TrimSpace(b)) > 0 {
			pid = string(bytes.TrimSpace(b))
		}
		return fmt.Errorf("%w: %s: %w; stop it with kill %s (SIGTERM unmounts its vaults), and this vaultui starts its own", ErrDaemon, path, err, pid)
	}
	return fmt.Errorf("%w: %s: %w", ErrDaemon, path, err)
}

// Mount unlocks the vault in the daemon and mounts it. It returns once the mount is usable.
func (c *Client) Mount(ctx context.Context, r MountRequest) (MountInfo, error) {
	var err error
	if r.CipherDir, err = filepath.Abs(r.CipherDir); err != nil {
		return MountInfo{}, err
	}
	if r.MountPoint, err = filepath.Abs(r.MountPoint); err != nil {
		return MountInfo{}, err
	}
	resp, err := c.call(ctx, request{Op: opMount, Mount: &r})
	if err != nil {
		return MountInfo{}, err
	}
	if resp.Info == nil {
		return MountInfo{}, fmt.Errorf("%w: mount reply without mount info", ErrDaemon)
	}
	return *resp.Info, nil
}

// Unmount unmounts the vault mounted from or at target (a cipherdir or a mount point). Without
// lazy, a mount in use fails with ErrBusy naming the processes that hold it.
func (c *Client) Unmount(ctx context.Context, target string, lazy bool) error {
	_, err := c.call(ctx, request{Op: opUnmount, Target: target, Lazy: lazy})
	return err
}

// UnmountAll unmounts every vault of this daemon.
func (c *Client) UnmountAll(ctx context.Context) error {
	_, err := c.call(ctx, request{Op: opUnmountAll})
	return err
}

// Status lists the mounts, including stale ones left by a crashed daemon.
func (c *Client) Status(ctx context.Context) ([]MountInfo, error) {
	resp, err := c.call(ctx, request{Op: opStatus})
	if err != nil {
		return nil, err
	}
	return resp.Mounts, nil
}

// Stale returns the report of mounts left behind by a daemon that died without unmounting
// ("transport endpoint is not connected"), which this daemon found at start and cleaned up or
// failed to (and any later retry that succeeded). The daemon delivers each entry once: to the
// first Stale call after it found the mount, which is why the caller should show the result to
// the user. Status and Watch neither include nor consume it. A daemon that predates the report
// answers with none.
func (c *Client) Stale(ctx context.Context) ([]StaleMount, error) {
	resp, err := c.call(ctx, request{Op: opStatus, StaleReport: true})
	if err != nil {
		return nil, err
	}
	return resp.Stale, nil
}

// Watch calls each with a status snapshot about once a second until ctx is done (then it
// returns nil) or the daemon goes away.
func (c *Client) Watch(ctx context.Context, each func([]MountInfo)) error {
	return c.stream(ctx, request{V: ProtocolVersion, ID: 1, Op: opWatch}, func(resp *response) {
		each(resp.Mounts)
	})
}

// stream sends req on a connection of its own and hands each response to each until ctx is
// done (then it returns nil), or the daemon goes away or answers an error.
func (c *Client) stream(ctx context.Context, req request, each func(*response)) error {
	conn, err := dialSocket(ctx, c.path)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrDaemon, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	line, _ := json.Marshal(req)
	if _, err := conn.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("%w: %w", ErrDaemon, err)
	}
	r := bufio.NewReaderSize(conn, 64<<10)
	for {
		resp, err := readReply(r)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return daemonIOError(c.path, err)
		}
		if resp.Error != nil {
			return fromWire(resp.Error)
		}
		each(resp)
	}
}

// Daemon says how the daemon runs: its pid, where it logs, and whether its log file or its
// event log cannot be written (then it logs to stderr and keeps events in memory only).
func (c *Client) Daemon(ctx context.Context) (DaemonInfo, error) {
	resp, err := c.call(ctx, request{Op: opPing})
	if err != nil {
		return DaemonInfo{}, err
	}
	if resp.Daemon == nil {
		return DaemonInfo{PID: resp.PID}, nil
	}
	return *resp.Daemon, nil
}

// Close closes the connection. Mounts stay with the daemon.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.conn == nil {
		return nil
	}
	err := c.conn.Close()
	c.conn = nil
	return err
}
