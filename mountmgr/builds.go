package mountmgr

// One build on both ends of the socket. A daemon keeps running the executable it was started
// from, even when that file is deleted or replaced (go run's temporary binary, a package
// upgrade), and the protocol version alone does not tell that a later build talks to it. So
// the daemon reports its build (buildinfo.ID: the version stamp, else the executable's Go
// build ID) in DaemonInfo, and Connect compares it with its own:
//
//   - the same build: used as is;
//   - another build, idle (nothing mounted, as for the idle exit): asked to exit, and this
//     client starts a daemon of its own build;
//   - another build with mounts: kept, since replacing it would unmount vaults in use, and
//     the client's Notice says so and how to restart it, once per daemon and build (the
//     daemon remembers whom it told).
//
// A daemon that predates the build field reports none; it is replaced with SIGTERM when its
// status lists nothing, and kept with a notice otherwise.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/internal/buildinfo"
)

// clientBuild is this client's build: this executable's, but tests claim others. A daemon of
// another build is replaced when idle, else kept and named in Client.Notice.
var clientBuild = buildinfo.ID

// replaceTimeout bounds the wait for a replaced daemon to exit (it has nothing mounted).
const replaceTimeout = 20 * time.Second

// Notice is a note for the user about the daemon this client talks to, or "": that it is of
// another build of vaultui and was kept because vaults are mounted through it. Connect sets it
// once per daemon and build: a later client of the same build gets "".
func (c *Client) Notice() string { return c.notice }

// sameBuild reports whether c's daemon is of the build ours, or ours is unknown (then there
// is no telling, and the daemon is used as is).
func (c *Client) sameBuild(ours string) bool {
	return ours == "" || c.daemon.Build == ours
}

// replaceOrKeep deals with c's daemon of another build than ours, the caller holding the
// start lock: it returns true when the daemon has gone (the caller starts one), false when it
// is kept (with c.notice set if the user is to be told).
func (c *Client) replaceOrKeep(ctx context.Context, ours string) (gone bool, err error) {
	info := c.daemon
	if info.Build == "" {
		return c.replaceOld(ctx, ours)
	}
	resp, err := c.call(ctx, request{Op: opReplace, Build: ours})
	if err != nil {
		return false, err
	}
	if resp.Replace == nil {
		return false, fmt.Errorf("%w: replace reply without an answer", ErrDaemon)
	}
	if !resp.Replace.Exiting {
		if !resp.Replace.Told {
			c.notice = otherBuildNotice(info, ours, resp.Replace.Mounts)
		}
		return false, nil
	}
	c.Close()
	return true, waitDaemonGone(ctx, filepath.Dir(c.path), info.PID)
}

// replaceOld deals with a daemon that predates builds (and the replace request): stopped with
// SIGTERM when it lists no mounts, kept otherwise. It cannot remember whom it told, so the
// notice comes each time.
func (c *Client) replaceOld(ctx context.Context, ours string) (gone bool, err error) {
	if c.daemon.PID <= 0 {
		return false, nil // no pid to signal (not a vaultui daemon we know): used as is
	}
	mounts, err := c.Status(ctx)
	if err != nil {
		return false, err
	}
	if len(mounts) > 0 {
		c.notice = otherBuildNotice(c.daemon, ours, len(mounts))
		return false, nil
	}
	c.Close()
	if err := syscall.Kill(c.daemon.PID, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return false, fmt.Errorf("%w: stopping the mount manager of an older vaultui (pid %d): %w", ErrDaemon, c.daemon.PID, err)
	}
	return true, waitDaemonGone(ctx, filepath.Dir(c.path), c.daemon.PID)
}

// otherBuildNotice tells the user that the daemon is of another build and why it stays.
func otherBuildNotice(info DaemonInfo, ours string, mounts int) string {
	theirs := info.Build
	if theirs == "" {
		theirs = "an older one"
	}
	what := fmt.Sprintf("%d vaults mounted", mounts)
	switch mounts {
	case 0:
		what = "stale mounts to clean up"
	case 1:
		what = "1 vault mounted"
	}
	return fmt.Sprintf("the mount manager (pid %d) is from another build of vaultui (%s; this is %s) and keeps running "+
		"while it has %s; to run this build's: vaultui unmount --all, then any vaultui command", info.PID, theirs, ours, what)
}

// waitDaemonGone waits until the daemon of the socket directory dir (pid, for the error) has
// exited: until its lock (lockDaemon) is free. The lock, not the pid, since a dead daemon
// may linger as a zombie of whoever started it.
func waitDaemonGone(ctx context.Context, dir string, pid int) error {
	lock, err := os.OpenFile(filepath.Join(dir, "daemon.lock"), os.O_RDWR|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrDaemon, err)
	}
	defer lock.Close()
	ctx, cancel := context.WithTimeout(ctx, replaceTimeout)
	defer cancel()
	if err := flockContext(ctx, lock); err != nil {
		return fmt.Errorf("%w: the mount manager of another build (pid %d) did not exit: %w", ErrDaemon, pid, err)
	}
	return unix.Flock(int(lock.Fd()), unix.LOCK_UN)
}

// replaceFor answers a client of build that asks this daemon to make way: when idle (nothing
// mounted, as idleExitDue decides) it exits once the answer is sent (serveConn), refusing
// connections from now on; otherwise it
// stays and says whether a client of that build was told so before.
func (d *daemon) replaceFor(build string) *replaceReply {
	d.clients.Lock()
	defer d.clients.Unlock()
	d.mu.Lock()
	quitting := d.quitting
	mounts := len(d.mounts) + len(d.detached)
	d.mu.Unlock()
	if d.clients.exiting || quitting {
		return &replaceReply{Exiting: true}
	}
	if !d.inUse() {
		d.clients.exiting = true
		d.log.Printf("a client of build %q asks for a daemon of its own; this one (build %q) is idle: exiting", build, d.build)
		return &replaceReply{Exiting: true}
	}
	if d.clients.told == nil {
		d.clients.told = map[string]bool{}
	}
	told := d.clients.told[build]
	if !told {
		d.log.Printf("a client of build %q asks for a daemon of its own; this one (build %q) stays, with mounts (%d)", build, d.build, mounts)
	}
	d.clients.told[build] = true
	return &replaceReply{Mounts: mounts, Told: told}
}
