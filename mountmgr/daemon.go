package mountmgr

import (
	"context"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/internal/buildinfo"
	"github.com/vaultui/vaultui/mountmgr/vfs"
	"github.com/vaultui/vaultui/registry"
	"github.com/vaultui/vaultui/vault"
)

// ServeOptions configures [Serve].
type ServeOptions struct {
	// SocketPath defaults to SocketPath().
	SocketPath string
	// Logger receives the daemon's log; nil: see openLogSink (the log file LogPath,
	// rotated at LogMax, or stderr).
	Logger *log.Logger
	// LogMax is the log file's rotation size; 0 means DefaultLogMax.
	LogMax int64
	// IdleExit stops the daemon once nothing has been mounted and no client connected for
	// that long (clients start it again when needed); 0 never stops it.
	IdleExit time.Duration
	// ShutdownGrace bounds how long a stopping daemon keeps serving the open files of busy
	// mounts (detached at once) before it exits; 0 means DefaultShutdownGrace.
	ShutdownGrace time.Duration
	// Automount mounts the registry's (registry.DefaultPath) automount vaults with their
	// keyring passwords once the socket is up, once per login (see automount).
	Automount bool
	// Build is the build the daemon reports (DaemonInfo.Build); "" means buildinfo.ID(), this
	// executable's. A client of another build replaces the daemon when it is idle.
	Build string
}

// Serve runs the mount daemon until ctx is done (or it has been idle for IdleExit), then
// unmounts every vault and returns; see [daemon.shutdown] for busy mounts. Only one daemon
// runs per socket directory: a second one fails at start.
func Serve(ctx context.Context, opts ServeOptions) (err error) {
	opts.setDefaults()
	dlog := openLogSink(opts)
	defer dlog.Close()
	defer func() { dlog.startFailed(err) }()
	opts.Logger = dlog.logger
	dir := filepath.Dir(opts.SocketPath)
	if err := ensureSocketDir(dir); err != nil {
		return err
	}
	lock, err := lockDaemon(dir)
	if err != nil {
		return err
	}
	defer lock.Close()

	ctx, stop := context.WithCancel(ctx)
	defer stop()
	d := newDaemon(ctx, opts, dir, dlog, stop)
	d.cleanStale()
	ln, err := d.listen(opts.SocketPath)
	if err != nil {
		return err
	}
	d.log.Printf("daemon pid %d listening on %s (protocol %d, build %s)", os.Getpid(), opts.SocketPath, ProtocolVersion, opts.Build)
	dlog.ready()
	registryPath, _ := registry.DefaultPath()
	if opts.Automount {
		go d.automount(ctx, dir, registryPath)
	}
	go d.watchSession(ctx, registryPath)

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); d.tick() }()
	go func() { defer wg.Done(); d.accept(ln) }()
	<-ctx.Done()
	// The socket stays open while busy mounts drain, so "vaultui status" can tell.
	err = d.shutdown()
	ln.Close()
	close(d.quit)
	wg.Wait()
	d.log.Printf("daemon stopped")
	return err
}

// setDefaults fills in what opts leaves to Serve.
func (opts *ServeOptions) setDefaults() {
	if opts.SocketPath == "" {
		opts.SocketPath = SocketPath()
	}
	if opts.LogMax <= 0 {
		opts.LogMax = DefaultLogMax
	}
	if opts.ShutdownGrace <= 0 {
		opts.ShutdownGrace = DefaultShutdownGrace
	}
	if opts.Build == "" {
		opts.Build = buildinfo.ID()
	}
}

// lockDaemon takes the lock file in the socket directory dir that makes this the only daemon
// there, and writes its pid into it. The lock is held for the daemon's lifetime (until the
// file is closed); the kernel drops it when the process dies, so a crashed daemon never
// blocks the next one. A daemon that is just exiting (idle) may still hold it for a moment,
// hence the short retry.
func lockDaemon(dir string) (*os.File, error) {
	lockPath := filepath.Join(dir, "daemon.lock")
	lock, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	for try := 0; ; try++ {
		err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if try == 20 {
			// From the open lock, not the path: reopening what is there could block on a FIFO.
			pid := make([]byte, 32)
			n, _ := lock.ReadAt(pid, 0)
			lock.Close()
			return nil, fmt.Errorf("another daemon is running (pid %s, lock %s)", strings.TrimSpace(string(pid[:n])), lockPath)
		}
		time.Sleep(100 * time.Millisecond)
	}
	lock.Truncate(0)
	fmt.Fprintf(lock, "%d\n", os.Getpid())
	return lock, nil
}

// newDaemon is the daemon of the socket directory dir, with its event log and the ledger
// of an earlier daemon read; stop ends Serve, which ctx is of.
func newDaemon(ctx context.Context, opts ServeOptions, dir string, dlog *logSink, stop func()) *daemon {
	d := &daemon{
		ctx:      ctx,
		mtab:     procMounts{},
		log:      opts.Logger,
		uid:      os.Getuid(),
		mounts:   map[string]*mount{},
		settling: map[chan struct{}]bool{},
		quit:     make(chan struct{}),
		ledger:   ledgerPath(dir),
		idleExit: opts.IdleExit,
		grace:    opts.ShutdownGrace,
		stop:     stop,
		dlog:     dlog,
		build:    opts.Build,
	}
	d.clients.lastUsed = time.Now()
	events, _ := EventsPath()
	d.events = openEventLog(events, DefaultEventsMax, d.log)
	var err error
	if d.owned, err = readLedger(d.ledger); err != nil {
		d.log.Printf("%v; stale mounts of an earlier daemon will not be cleaned up", err)
	}
	return d
}

// listen opens the control socket at path, replacing a dead daemon's leftover (the caller
// holds the daemon lock), and records its identity to notice when it is gone.
func (d *daemon) listen(path string) (*net.UnixListener, error) {
	os.Remove(path)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", path, err)
	}
	ln.SetUnlinkOnClose(true)
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	var st syscall.Stat_t
	if syscall.Stat(path, &st) == nil {
		d.sockPath, d.sockIno = path, st.Ino
	}
	return ln, nil
}

type daemon struct {
	log    *log.Logger
	dlog   *logSink // where log goes, for DaemonInfo
	events *eventLog
	uid    int
	quit   chan struct{}
	// ctx ends when the daemon begins to stop (Serve's context): requests being served,
	// mounts being unlocked among them, end with it.
	ctx   context.Context
	conns sync.WaitGroup
	// inflight counts mount requests being served, so shutdown waits for them.
	inflight sync.WaitGroup
	// stop ends Serve (idle exit).
	stop func()
	// build is the daemon's build (ServeOptions.Build).
	build string
	// idleExit, grace: see ServeOptions.IdleExit and ShutdownGrace.
	idleExit, grace time.Duration
	// sockPath and sockIno identify the socket, to notice when it is gone.
	sockPath string
	sockIno  uint64

	// ledger is the file listing the mount points this socket directory's daemons mounted
	// (ledger.go), to find the stale mounts of a daemon that died.
	ledger string
	// mtab is where stale mounts are found and detached: procMounts but in tests.
	mtab mountTable

	// Locks, always taken in this order: cleanMu, clients, mu, stale. Each but cleanMu
	// guards the fields grouped under it and nothing else.

	// cleanMu serialises the cleanup of stale mounts (start, the retries of tick, unmount).
	cleanMu sync.Mutex

	// clients is what the idle exit is decided from (see idleExitDue).
	clients struct {
		sync.Mutex
		active   int       // connected clients
		lastUsed time.Time // when the daemon was last seen in use (a mount, a client)
		exiting  bool      // the idle exit is decided: connections are refused
		// told are the other builds whose clients were told that this daemon stays (it has
		// mounts), so that each warns its user once (see replaceFor).
		told map[string]bool
	}

	// mu guards the mount table: the fields below up to the next lock, and each mount's
	// movedTo, ended and sampler. The ledger file is written under it too.
	mu       sync.Mutex
	quitting bool // set at shutdown; no new mounts after it
	// mounts are the live mounts by mount point, and the pending ones (a mount request
	// being served reserves its mount point): those have no file system yet (fs == nil).
	mounts map[string]*mount
	// detached are file systems no longer mounted here that still have users (a lazy
	// unmount, a busy mount at shutdown, a copy in another mount namespace); they are served
	// until the kernel lets go of them.
	detached []*mount
	// drainUntil is when a stopping daemon stops serving detached mounts.
	drainUntil time.Time
	// settling holds a channel per mount request being served, closed when it is done: what
	// "unmount --all" waits for, so a mount being set up is not left behind.
	settling map[chan struct{}]bool
	// owned is the ledger's content: the only stale mounts cleanStale touches.
	owned map[string]mountID

	// stale is what is known of stale mounts (left by a daemon that died).
	stale struct {
		sync.Mutex
		// mounts are the stale mounts that could not be cleaned yet; retried by tick.
		mounts []StaleMount
		// unreported is the report not yet delivered: each stale mount found (cleaned or
		// not) and each later successful retry, kept until a status request that asks for
		// the report (Client.Stale) has been answered with it. So the user is told once, by
		// the first "vaultui status" or "vaultui mount" after the daemon started, however
		// long it lives.
		unreported []StaleMount
	}
}

type mount struct {
	info MountInfo
	v    *unlocked
	fs   *vfs.Mounted
	// sampler (under d.mu) keeps the statistics.
	sampler *sampler
	// dev is the file system's device number, to find the processes that use it.
	dev uint64
	// The identities this mount is known by (see vault.ID and mountID), never its spelling:
	// vid the vault's cipherdir, dir the mount point directory under the mount (set while
	// pending), root the mounted file system's root, mnt the mount itself.
	vid, dir, root vault.ID
	mnt            mountID
	// mntType and mntSource are the mount's type and source as the kernel listed them when
	// it was made: the kernel hands an unmounted mount's ID and device number to the next
	// mount made, which these tell apart (inKernel). Empty if it was not listed.
	mntType, mntSource string
	// movedTo (under d.mu) is where the kernel lists the mount now when that differs from
	// info.MountPoint (a parent directory renamed since), for status; info itself is fixed
	// once the mount is published, so it is read without the lock.
	movedTo string
	// ended is set (under d.mu) once the file system's server has ended; done is closed
	// after that, once the end is logged and the keys are wiped.
	ended bool
	done  chan struct{}
	// closing is set once the daemon itself unmounts, so the exit is not reported as external.
	closing atomic.Bool
	// pending is set while the mount is only a reservation: its request is unlocking the
	// vault (fs is nil). See tryReserve.
	pending *pendingMount
	// walks counts the fsck and export walks running on the vault (walks.go): they use it
	// without going through the mount, and it is not idle while they run.
	walks atomic.Int32
}

// tick samples statistics once a second and unmounts idle vaults.
func (d *daemon) tick() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-d.quit:
			return
		case now := <-t.C:
			d.refreshMountPoints()
			var idle []string
			d.mu.Lock()
			for mp, m := range d.mounts {
				if m.fs == nil {
					continue
				}
				m.sampler.add(now)
				if m.info.Idle > 0 && m.sampler.idleFor(now) >= m.info.Idle && m.walks.Load() == 0 && !d.quitting {
					idle = append(idle, mp)
				}
			}
			for _, m := range d.detached {
				m.sampler.add(now)
			}
			d.mu.Unlock()
			if d.idleExitDue(now) {
				d.stop()
			}
			for _, mp := range idle {
				if err := d.unmountFor(mp, false, ReasonIdle); err != nil {
					// Busy: try again after another idle period rather than every second.
					d.log.Printf("idle unmount: %s; trying again later", logSafe(err))
					d.mu.Lock()
					if m := d.mounts[mp]; m != nil && m.sampler != nil {
						m.sampler.lastChange = now
					}
					d.mu.Unlock()
				} else {
					d.log.Printf("unmounted %s after being idle", mp)
				}
			}
			if len(d.staleSnapshot()) > 0 {
				d.cleanStale()
			}
		}
	}
}
