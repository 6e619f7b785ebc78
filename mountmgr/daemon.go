package mountmgr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/mountmgr/vfs"
	"github.com/vaultui/vaultui/vault"
)

// ServeOptions configures [Serve].
type ServeOptions struct {
	// SocketPath defaults to SocketPath().
	SocketPath string
	// Logger receives the daemon's log; nil logs to stderr. When stderr is the log file
	// (LogPath, as Connect starts the daemon), the daemon rotates it at LogMax.
	Logger *log.Logger
	// LogMax is the log file's rotation size; 0 means DefaultLogMax.
	LogMax int64
	// IdleExit stops the daemon once nothing has been mounted and no client connected for
	// that long (clients start it again when needed); 0 never stops it.
	IdleExit time.Duration
	// ShutdownGrace bounds how long a stopping daemon keeps serving the open files of busy
	// mounts (detached at once) before it exits; 0 means DefaultShutdownGrace.
	ShutdownGrace time.Duration
	// Ready, if set, is called once the socket accepts connections.
	Ready func()
	// EventsPath is the event log's file; "" means EventsPath(). EventsMax bounds the log
	// (0: DefaultEventsMax).
	EventsPath string
	EventsMax  int
	// Automount mounts the registry's automount vaults with their keyring passwords once
	// the socket is up, once per login (see automount). RegistryPath is the registry; ""
	// means vault.DefaultRegistryPath().
	Automount    bool
	RegistryPath string
}

// Serve runs the mount daemon until ctx is done (or it has been idle for IdleExit), then
// unmounts every vault and returns; see [daemon.shutdown] for busy mounts. Only one daemon
// runs per socket directory: a second one fails at start.
func Serve(ctx context.Context, opts ServeOptions) error {
	if opts.SocketPath == "" {
		opts.SocketPath = SocketPath()
	}
	if opts.LogMax <= 0 {
		opts.LogMax = DefaultLogMax
	}
	if opts.ShutdownGrace <= 0 {
		opts.ShutdownGrace = DefaultShutdownGrace
	}
	if opts.Logger == nil {
		opts.Logger = log.New(os.Stderr, "", log.LstdFlags)
		if p, err := LogPath(); err == nil && isFile(2, p) {
			fds := []int{2}
			if isFile(1, p) {
				fds = append(fds, 1)
			}
			rl, err := openRotatingLog(p, opts.LogMax, fds...)
			if err != nil {
				return err
			}
			defer rl.Close()
			opts.Logger = log.New(rl, "", log.LstdFlags)
		}
	}
	opts.Logger = escapingLogger(opts.Logger)
	dir := filepath.Dir(opts.SocketPath)
	if err := ensureSocketDir(dir); err != nil {
		return err
	}
	// The lock is held for the daemon's lifetime; the kernel drops it when the process dies,
	// so a crashed daemon never blocks the next one. A daemon that is just exiting (idle) may
	// still hold it for a moment, hence the short retry.
	lockPath := filepath.Join(dir, "daemon.lock")
	lock, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("mountmgr: %w", err)
	}
	defer lock.Close()
	for try := 0; ; try++ {
		err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if try == 20 {
			pid, _ := os.ReadFile(lockPath)
			return fmt.Errorf("mountmgr: another daemon is running (pid %s, lock %s)", strings.TrimSpace(string(pid)), lockPath)
		}
		time.Sleep(100 * time.Millisecond)
	}
	lock.Truncate(0)
	fmt.Fprintf(lock, "%d\n", os.Getpid())

	ctx, stop := context.WithCancel(ctx)
	defer stop()
	d := &daemon{
		log:         opts.Logger,
		uid:         os.Getuid(),
		mounts:      map[string]*mount{},
		quit:        make(chan struct{}),
		ledger:      ledgerPath(dir),
		idleExit:    opts.IdleExit,
		grace:       opts.ShutdownGrace,
		unmountWait: defaultUnmountWait,
		lastUsed:    time.Now(),
		stop:        stop,
	}
	if opts.EventsPath == "" {
		opts.EventsPath, _ = EventsPath()
	}
	d.events = openEventLog(opts.EventsPath, opts.EventsMax, d.log)
	if d.owned, err = readLedger(d.ledger); err != nil {
		d.log.Printf("%v; stale mounts of an earlier daemon will not be cleaned up", err)
	}
	d.cleanStale()

	os.Remove(opts.SocketPath) // a leftover from a dead daemon; we hold the lock
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: opts.SocketPath, Net: "unix"})
	if err != nil {
		return fmt.Errorf("mountmgr: listening on %s: %w", opts.SocketPath, err)
	}
	ln.SetUnlinkOnClose(true)
	if err := os.Chmod(opts.SocketPath, 0o600); err != nil {
		ln.Close()
		return fmt.Errorf("mountmgr: %w", err)
	}
	var sockSt syscall.Stat_t
	if syscall.Stat(opts.SocketPath, &sockSt) == nil {
		d.sockPath, d.sockIno = opts.SocketPath, sockSt.Ino
	}
	d.log.Printf("daemon pid %d listening on %s (protocol %d)", os.Getpid(), opts.SocketPath, ProtocolVersion)
	if opts.Ready != nil {
		opts.Ready()
	}
	if opts.RegistryPath == "" {
		opts.RegistryPath, _ = vault.DefaultRegistryPath()
	}
	if opts.Automount {
		go d.automount(ctx, dir, opts.RegistryPath)
	}
	go d.watchSession(ctx, opts.RegistryPath)

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

// accept serves connections until ln is closed.
func (d *daemon) accept(ln *net.UnixListener) {
	for {
		conn, err := ln.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			d.log.Printf("accept: %v", err)
			time.Sleep(50 * time.Millisecond)
			continue
		}
		d.mu.Lock()
		if d.exiting {
			// Idle exit decided: the client finds no daemon and starts a new one.
			d.mu.Unlock()
			conn.Close()
			continue
		}
		d.active++
		d.mu.Unlock()
		d.conns.Add(1)
		go func() {
			defer d.conns.Done()
			d.serveConn(conn)
			d.mu.Lock()
			d.active--
			d.lastUsed = time.Now()
			d.mu.Unlock()
		}()
	}
}

type daemon struct {
	log    *log.Logger
	events *eventLog
	uid    int
	quit   chan struct{}
	conns  sync.WaitGroup
	// inflight counts mount requests being served, so shutdown waits for them.
	inflight sync.WaitGroup
	// stop ends Serve (idle exit).
	stop func()
	// idleExit, grace, unmountWait: see ServeOptions.IdleExit, ShutdownGrace and
	// defaultUnmountWait.
	idleExit, grace, unmountWait time.Duration
	// sockPath and sockIno identify the socket, to notice when it is gone.
	sockPath string
	sockIno  uint64

	// cleanMu serialises the cleanup of stale mounts (start, the retries of tick, unmount).
	cleanMu sync.Mutex
	// findStaleFn and detachStaleFn replace findStale and detach in tests of the cleanup.
	findStaleFn   func(uid int, skip func(mountPoint string) bool) ([]mountEntry, error)
	detachStaleFn func(mountPoint string) error

	mu       sync.Mutex
	quitting bool              // set at shutdown; no new mounts after it
	mounts   map[string]*mount // by mount point; pending mounts have m == nil
	// detached are file systems no longer mounted here that still have users (a lazy
	// unmount, a busy mount at shutdown, a copy in another mount namespace); they are served
	// until the kernel lets go of them.
	detached []*mount
	// drainUntil is when a stopping daemon stops serving detached mounts.
	drainUntil time.Time
	// active counts connected clients; lastUsed is when something was last mounted or
	// connected; exiting is set once the idle exit is decided.
	active   int
	lastUsed time.Time
	exiting  bool
	stale    []StaleMount // stale mounts that could not be cleaned yet; retried by tick
	// unreported is the stale mount report not yet delivered: each stale mount found (cleaned
	// or not) and each later successful retry, kept until a status request that asks for the
	// report (Client.Stale) has been answered with it. So the user is told once, by the first
	// "vaultui status" or "vaultui mount" after the daemon started, however long it lives.
	unreported []StaleMount
	// ledger is the file listing the mount points this socket directory's daemons mounted
	// (ledger.go); owned is its content: the only stale mounts cleanStale touches.
	ledger string
	owned  map[string]bool
}

type mount struct {
	info    MountInfo
	v       *unlocked
	fs      *vfs.Mounted
	sampler *sampler
	idle    time.Duration
	// dev is the file system's device number, to find the processes that use it.
	dev uint64
	// done is closed once the file system is gone (its server has ended).
	done chan struct{}
	// closing is set once the daemon itself unmounts, so the exit is not reported as external.
	closing atomic.Bool
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
			var idle []string
			d.mu.Lock()
			for mp, m := range d.mounts {
				if m.fs == nil {
					continue
				}
				m.sampler.add(now)
				if m.idle > 0 && m.sampler.idleFor(now) >= m.idle && !d.quitting {
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

func (d *daemon) staleSnapshot() []StaleMount {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]StaleMount(nil), d.stale...)
}

// cleanStale finds mounts left by a daemon that died and detaches them. Each new one, and each
// earlier failure that now succeeds, goes into the report for the user (d.unreported).
func (d *daemon) cleanStale() {
	d.cleanMu.Lock()
	defer d.cleanMu.Unlock()
	find, detach := findStale, detach
	if d.findStaleFn != nil {
		find, detach = d.findStaleFn, d.detachStaleFn
	}
	found, err := find(d.uid, func(mp string) bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		_, ours := d.mounts[mp]
		return ours || !d.owned[mp]
	})
	if err != nil {
		d.log.Printf("looking for stale mounts: %v", err)
		return
	}
	prev := map[string]StaleMount{}
	for _, s := range d.staleSnapshot() {
		prev[s.MountPoint] = s
	}
	now := time.Now()
	var left, news []StaleMount
	for _, e := range found {
		s, known := prev[e.MountPoint]
		delete(prev, e.MountPoint)
		if !known {
			s = StaleMount{MountPoint: e.MountPoint, CipherDir: e.Source, Found: now}
		}
		if err := detach(e.MountPoint); err != nil {
			s.Error = err.Error()
			left = append(left, s)
			if !known { // not again every second
				d.log.Printf("stale mount %s (from %s): cleanup failed: %v; retrying every second", e.MountPoint, e.Source, err)
				news = append(news, s)
			}
			continue
		}
		s.Cleaned, s.Error = true, ""
		d.log.Printf("stale mount %s (from %s, transport endpoint not connected): unmounted", e.MountPoint, e.Source)
		news = append(news, s)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stale = left
	d.pruneLedger()
	for _, s := range news {
		d.addReport(s)
		d.eventStale(s)
	}
	// Earlier failures that are gone now (unmounted by hand or by "vaultui unmount"): a report
	// not yet delivered must not claim they are still there.
	for _, s := range prev {
		for i := range d.unreported {
			if d.unreported[i].MountPoint == s.MountPoint {
				d.unreported[i].Cleaned, d.unreported[i].Error = true, ""
			}
		}
	}
}

// pruneLedger keeps in the ledger only what may still need cleaning up: live mounts and stale
// ones not cleaned yet. The caller holds d.mu.
func (d *daemon) pruneLedger() {
	owned := map[string]bool{}
	for mp, m := range d.mounts {
		if m != nil && d.owned[mp] {
			owned[mp] = true
		}
	}
	for _, s := range d.stale {
		owned[s.MountPoint] = true
	}
	if !maps.Equal(owned, d.owned) {
		d.owned = owned
		d.saveLedger()
	}
}

// saveLedger writes d.owned to the ledger; a failure is logged (a crash would then leave that
// mount for the user to clean up). The caller holds d.mu.
func (d *daemon) saveLedger() {
	if d.ledger == "" {
		return
	}
	if err := writeLedger(d.ledger, d.owned); err != nil {
		d.log.Printf("%v", err)
	}
}

// addReport adds s to the undelivered report, replacing an entry for the same mount point
// (a failure that a retry has since cleaned). The caller holds d.mu.
func (d *daemon) addReport(s StaleMount) {
	for i := range d.unreported {
		if d.unreported[i].MountPoint == s.MountPoint {
			d.unreported[i] = s
			return
		}
	}
	d.unreported = append(d.unreported, s)
}

// takeReport hands out the undelivered stale mount report and forgets it; giveBackReport
// returns it when the answer could not be sent.
func (d *daemon) takeReport() []StaleMount {
	d.mu.Lock()
	defer d.mu.Unlock()
	r := d.unreported
	d.unreported = nil
	return r
}

func (d *daemon) giveBackReport(r []StaleMount) {
	if len(r) == 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	// Entries added meanwhile are newer news about the same mounts; they win.
	for _, s := range r {
		dup := false
		for _, u := range d.unreported {
			dup = dup || u.MountPoint == s.MountPoint
		}
		if !dup {
			d.unreported = append(d.unreported, s)
		}
	}
}

func (d *daemon) serveConn(conn *net.UnixConn) {
	defer conn.Close()
	uid, err := peerUID(conn)
	if err == nil {
		err = checkPeer(uid, d.uid)
	}
	if err != nil {
		d.log.Printf("connection refused: %v", err)
		d.send(conn, &response{Error: &wireError{Code: codeGeneric, Msg: err.Error()}})
		return
	}
	r := newLineReader(conn)
	defer r.wipe()
	for {
		line, err := r.next()
		if err != nil {
			if err == errLineTooLong {
				d.send(conn, &response{Error: &wireError{Code: codeBadRequest, Msg: "request " + err.Error()}})
			}
			if err != io.EOF {
				d.log.Printf("connection: %v", err)
			}
			return
		}
		var req request
		err = json.Unmarshal(line, &req)
		crypto.Wipe(line) // a mount request's password lives on only in req, which mount wipes
		if err != nil {
			d.send(conn, &response{Error: &wireError{Code: codeBadRequest, Msg: "malformed request: " + err.Error()}})
			return
		}
		if req.V != ProtocolVersion {
			d.send(conn, &response{ID: req.ID, Error: &wireError{Code: codeVersion,
				Msg: fmt.Sprintf("mountmgr: client speaks protocol version %d, daemon %d", req.V, ProtocolVersion)}})
			return
		}
		if req.Op == opWatch {
			d.watch(conn, req.ID)
			return
		}
		if req.Op == opEvents && req.Follow {
			d.followEvents(conn, req.ID, req.After)
			return
		}
		resp := d.handleGuarded(&req)
		resp.ID = req.ID
		if err := d.send(conn, resp); err != nil {
			d.giveBackReport(resp.Stale) // not delivered: the next asker gets it
			return
		}
	}
}

func (d *daemon) send(conn net.Conn, resp *response) error {
	resp.V = ProtocolVersion
	resp.OK = resp.Error == nil
	line, err := json.Marshal(resp)
	if err != nil {
		return err
	}
	_, err = conn.Write(append(line, '\n'))
	return err
}

func (d *daemon) watch(conn net.Conn, id uint64) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		if err := d.send(conn, &response{ID: id, Mounts: d.status()}); err != nil {
			return
		}
		select {
		case <-d.quit:
			return
		case <-t.C:
		}
	}
}

func (d *daemon) handle(req *request) *response {
	switch req.Op {
	case opPing:
		return &response{PID: os.Getpid()}
	case opStatus:
		resp := &response{Mounts: d.status()}
		if req.StaleReport {
			resp.Stale = d.takeReport()
		}
		return resp
	case opMount:
		if req.Mount == nil {
			return &response{Error: &wireError{Code: codeBadRequest, Msg: "mount request without parameters"}}
		}
		info, err := d.mount(req.Mount)
		if err != nil {
			d.log.Printf("mount %s at %s: %v", req.Mount.CipherDir, req.Mount.MountPoint, err)
			d.eventMountFailed(req.Mount, err)
			return &response{Error: toWire(err)}
		}
		return &response{Info: &info}
	case opUnmount:
		if err := d.unmountTargetFor(req.Target, req.Lazy); err != nil {
			d.log.Printf("unmount %s: %s", req.Target, logSafe(err))
			return &response{Error: toWire(err)}
		}
		return &response{}
	case opEvents:
		evs, _ := d.events.since(req.After)
		return &response{Events: evs}
	case opUnmountAll:
		if err := d.unmountAll(); err != nil {
			d.log.Printf("unmount all: %s", logSafe(err))
			return &response{Error: toWire(err)}
		}
		return &response{}
	}
	return &response{Error: &wireError{Code: codeBadRequest, Msg: fmt.Sprintf("unknown op %q", req.Op)}}
}

func (d *daemon) status() []MountInfo {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]MountInfo, 0, len(d.mounts)+len(d.stale))
	for _, m := range d.mounts {
		if m.fs == nil {
			continue
		}
		info := m.info
		info.Stats = m.sampler.stats()
		out = append(out, info)
	}
	for _, m := range d.detached {
		info := m.info
		info.Stats = m.sampler.stats()
		info.Detached, info.Until = true, d.drainUntil
		out = append(out, info)
	}
	for _, s := range d.stale {
		out = append(out, MountInfo{CipherDir: s.CipherDir, MountPoint: s.MountPoint, Stale: true})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].MountPoint < out[j].MountPoint })
	return out
}

// mount unlocks and mounts one vault. The mount point is reserved in d.mounts while the
// (slow: scrypt) unlock runs so two requests cannot race for it.
func (d *daemon) mount(r *MountRequest) (MountInfo, error) {
	defer crypto.Wipe(r.Password)
	d.mu.Lock()
	if d.quitting {
		d.mu.Unlock()
		return MountInfo{}, fmt.Errorf("mountmgr: the daemon is shutting down")
	}
	d.inflight.Add(1)
	d.mu.Unlock()
	defer d.inflight.Done()
	if !filepath.IsAbs(r.CipherDir) || !filepath.IsAbs(r.MountPoint) {
		return MountInfo{}, fmt.Errorf("mountmgr: cipherdir and mount point must be absolute paths")
	}
	cipherDir, mountPoint := filepath.Clean(r.CipherDir), filepath.Clean(r.MountPoint)
	d.mu.Lock()
	for mp, m := range d.mounts {
		if mp == mountPoint {
			d.mu.Unlock()
			return MountInfo{}, fmt.Errorf("mountmgr: %s: %w", mountPoint, ErrAlreadyMounted)
		}
		if m.info.CipherDir == cipherDir {
			d.mu.Unlock()
			return MountInfo{}, fmt.Errorf("mountmgr: vault %s is already mounted at %s: %w", cipherDir, mp, ErrAlreadyMounted)
		}
	}
	d.mounts[mountPoint] = &mount{info: MountInfo{CipherDir: cipherDir, MountPoint: mountPoint}}
	d.mu.Unlock()
	ok := false
	defer func() {
		if !ok {
			d.mu.Lock()
			delete(d.mounts, mountPoint)
			d.mu.Unlock()
		}
	}()

	if err := CheckNesting(cipherDir, mountPoint); err != nil {
		return MountInfo{}, err
	}
	if err := checkMountPoint(mountPoint); err != nil {
		return MountInfo{}, err
	}
	v, err := unlock(cipherDir, r.Password)
	if err != nil {
		return MountInfo{}, err
	}
	mnt, err := vfs.Mount(mountPoint, v.volume, vfs.Options{
		ReadOnly:   r.ReadOnly,
		AllowOther: r.AllowOther,
		Logger:     d.log,
		AuthFailed: d.authFailedHook(cipherDir, mountPoint),
	})
	if err != nil {
		v.Close()
		return MountInfo{}, fmt.Errorf("mountmgr: mounting %s at %s: %w", cipherDir, mountPoint, explainFuseFailure(err, fuseDevice))
	}
	var st unix.Stat_t
	if err := unix.Stat(mountPoint, &st); err != nil {
		d.log.Printf("mounted %s but cannot stat it: %v; its users cannot be named", mountPoint, err)
	}
	now := time.Now()
	m := &mount{
		dev:  st.Dev,
		done: make(chan struct{}),
		info: MountInfo{
			CipherDir:  cipherDir,
			MountPoint: mountPoint,
			Cipher:     v.cipher,
			ReadOnly:   r.ReadOnly,
			Since:      now,
			Idle:       r.Idle,
			Notice:     v.notice,
		},
		v:       v,
		fs:      mnt,
		sampler: newSampler(mnt.Stats, now),
		idle:    r.Idle,
	}
	d.mu.Lock()
	d.mounts[mountPoint] = m
	d.owned[mountPoint] = true
	d.saveLedger()
	d.mu.Unlock()
	ok = true
	d.log.Printf("mounted %s (%s) at %s", cipherDir, m.info.Cipher, mountPoint)
	d.eventMounted(cipherDir, mountPoint)
	if v.notice != "" {
		d.log.Printf("%s: %s", cipherDir, v.notice)
	}
	// If the file system goes away behind our back (fusermount -u by hand), forget it.
	// A detached one is forgotten, and its keys wiped, once its last user is gone.
	go func() {
		mnt.Wait()
		d.mu.Lock()
		external := d.mounts[mountPoint] == m && !m.closing.Load()
		if d.mounts[mountPoint] == m {
			delete(d.mounts, mountPoint)
		}
		wasDetached := d.dropDetached(m)
		close(m.done)
		d.mu.Unlock()
		if external {
			d.log.Printf("%s was unmounted externally", mountPoint)
			d.eventUnmounted(cipherDir, mountPoint, ReasonExternal)
		}
		if wasDetached {
			d.log.Printf("%s (detached): its last user is gone; file system closed", mountPoint)
			d.eventUnmounted(cipherDir, mountPoint, ReasonReleased)
		}
		v.Close()
	}()
	return m.info, nil
}

func checkMountPoint(mp string) error {
	fi, err := os.Stat(mp)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("mountmgr: mount point %s does not exist: %w", mp, ErrMountpoint)
	}
	if err != nil {
		if errors.Is(err, syscall.ENOTCONN) {
			return fmt.Errorf("mountmgr: %s is a stale mount (transport endpoint is not connected): %w", mp, ErrAlreadyMounted)
		}
		return fmt.Errorf("mountmgr: mount point %s: %v: %w", mp, err, ErrMountpoint)
	}
	if !fi.IsDir() {
		return fmt.Errorf("mountmgr: mount point %s is not a directory: %w", mp, ErrMountpoint)
	}
	if isMountPoint(mp) {
		return fmt.Errorf("mountmgr: %s is already a mount point: %w", mp, ErrAlreadyMounted)
	}
	f, err := os.Open(mp)
	if err != nil {
		return fmt.Errorf("mountmgr: mount point %s: %v: %w", mp, err, ErrMountpoint)
	}
	defer f.Close()
	if names, _ := f.Readdirnames(1); len(names) > 0 {
		return fmt.Errorf("mountmgr: mount point %s is not empty: %w", mp, ErrMountpoint)
	}
	return nil
}

// unmountTarget unmounts by mount point or cipherdir; a stale mount is detached.
func (d *daemon) unmountTarget(target string, lazy bool) error {
	target = filepath.Clean(target)
	d.mu.Lock()
	mp := ""
	for p, m := range d.mounts {
		if m.fs != nil && (p == target || m.info.CipherDir == target) {
			mp = p
			break
		}
	}
	d.mu.Unlock()
	if mp == "" {
		for _, s := range d.staleSnapshot() {
			if s.MountPoint == target || s.CipherDir == target {
				if err := d.detachStale(s.MountPoint); err != nil {
					return fmt.Errorf("mountmgr: stale mount %s: %w", s.MountPoint, err)
				}
				d.cleanStale()
				return nil
			}
		}
		return fmt.Errorf("mountmgr: %s: %w", target, ErrNotMounted)
	}
	return d.unmount(mp, lazy)
}

// detachStale detaches the stale mount at mp unless a retry of tick got there first.
func (d *daemon) detachStale(mp string) error {
	d.cleanMu.Lock()
	defer d.cleanMu.Unlock()
	for _, s := range d.staleSnapshot() {
		if s.MountPoint == mp {
			if d.detachStaleFn != nil {
				return d.detachStaleFn(mp)
			}
			return detach(mp)
		}
	}
	return nil
}

// unmount unmounts the vault at mp. A busy mount fails with a busyError (ErrBusy) unless lazy,
// which detaches it now: its users keep their open files, the daemon serves them until the
// last one is closed, then wipes the keys. No wait here is unbounded: see unmountFS.
func (d *daemon) unmount(mp string, lazy bool) error {
	d.mu.Lock()
	m := d.mounts[mp]
	d.mu.Unlock()
	if m == nil || m.fs == nil {
		return fmt.Errorf("mountmgr: %s: %w", mp, ErrNotMounted)
	}
	m.closing.Store(true)
	if lazy {
		if err := detach(mp); err != nil {
			m.closing.Store(false)
			return fmt.Errorf("mountmgr: unmounting %s: %w", mp, err)
		}
		if d.toDetached(mp, m) {
			d.log.Printf("detached %s (%s); serving the files still open on it until they are closed", mp, m.info.CipherDir)
			return nil
		}
	} else {
		finished, err := d.unmountFS(m)
		if err != nil {
			m.closing.Store(false)
			return &busyError{mountPoint: mp, holders: holders(m.dev, 5), cause: err}
		}
		if !finished {
			if isMountPoint(mp) {
				m.closing.Store(false)
				return fmt.Errorf("mountmgr: unmounting %s: it did not finish in time", mp)
			}
			// Gone from here, but the kernel keeps the file system: a copy of the mount in
			// another mount namespace. It is served as long as that copy lives.
			if d.toDetached(mp, m) {
				d.log.Printf("unmounted %s (%s) here, but its file system stays in use (%s; a copy in another mount namespace?); serving it until it is released",
					mp, m.info.CipherDir, pids(holders(m.dev, 5)))
				return nil
			}
		}
	}
	d.mu.Lock()
	if d.mounts[mp] == m {
		delete(d.mounts, mp)
	}
	d.mu.Unlock()
	d.log.Printf("unmounted %s (%s)", mp, m.info.CipherDir)
	return nil
}

// unmountAll unmounts every vault; busy ones are reported.
func (d *daemon) unmountAll() error {
	var errs []error
	for _, mp := range d.mountPoints() {
		if err := d.unmountFor(mp, false, ReasonUser); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// mountPoints lists the mount points of the live mounts.
func (d *daemon) mountPoints() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var mps []string
	for mp, m := range d.mounts {
		if m.fs != nil {
			mps = append(mps, mp)
		}
	}
	sort.Strings(mps)
	return mps
}
