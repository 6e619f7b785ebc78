package mountmgr

// Mounting and unmounting vaults on request, and the checks a mount point must pass.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"syscall"
	"time"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/mountmgr/vfs"
	"github.com/vaultui/vaultui/vault"
	"golang.org/x/sys/unix"
)

// mount unlocks and mounts one vault. The vault and the mount point are compared with the
// other mounts by identity (vault.ID): a second path to a mounted vault, or to a mount point
// in use, is refused, as is a vault that gocryptfs or another daemon has mounted. The mount
// point is reserved in d.mounts while the (slow: scrypt) unlock runs so two requests cannot
// race for it.
//
// The unlock stops, its key derivation killed and the reservation released, when ctx ends (the
// client left, the daemon stops) or the mount is aborted (an unmount of the vault or the
// mount point while it unlocks: abortPending). Its key derivation costs at most r.KDFCost.
func (d *daemon) mount(ctx context.Context, r *MountRequest) (MountInfo, error) {
	defer crypto.Wipe(r.Password)
	defer crypto.Wipe(r.MasterKey)
	settled, err := d.startRequest()
	if err != nil {
		return MountInfo{}, err
	}
	defer settled()
	if !filepath.IsAbs(r.CipherDir) || !filepath.IsAbs(r.MountPoint) {
		return MountInfo{}, errors.New("cipherdir and mount point must be absolute paths")
	}
	cipherDir, mountPoint := filepath.Clean(r.CipherDir), filepath.Clean(r.MountPoint)
	// What cannot be stat'ed is reported by the checks below (missing vault or mount point).
	vid, _ := vault.IDOf(cipherDir)
	ctx, abort := context.WithCancelCause(crypto.WithCostBound(ctx, crypto.CostBound(r.KDFCost)))
	defer abort(nil)
	pending, err := d.reserve(ctx, abort, cipherDir, mountPoint, vid)
	if err != nil {
		return MountInfo{}, err
	}
	ok := false
	defer func() {
		d.mu.Lock()
		if !ok && d.mounts[mountPoint] == pending {
			delete(d.mounts, mountPoint)
		}
		d.mu.Unlock()
		close(pending.pending.released)
	}()
	if err := checkUnused(cipherDir, mountPoint, vid); err != nil {
		return MountInfo{}, err
	}
	if r.Reverse {
		if r.SharedStorage {
			return MountInfo{}, errors.New("shared storage is for vaults mounted from several machines, not for a reverse view (which only reads its local folder)")
		}
		r.ReadOnly = true // the encrypted view has no writes
	}
	v, err := unlockRequest(ctx, r)
	if ctx.Err() != nil {
		// Stopped, or aborted just as the unlock ended: the mount nobody waits for is not made.
		if err == nil {
			v.Close()
		}
		return MountInfo{}, fmt.Errorf("mounting %s stopped: %w", cipherDir, context.Cause(ctx))
	}
	if err != nil {
		return MountInfo{}, err
	}
	badNames := r.BadNames
	if r.ForceDecode && len(badNames) == 0 {
		badNames = []string{"*"}
	}
	// fusermount3 (the way in without root) refuses a mount point that is a symlink, where
	// mount(2) as root follows it: follow it ourselves, so both mount in the same place.
	at := mountPoint
	if real, err := filepath.EvalSymlinks(mountPoint); err == nil {
		at = real
	}
	mnt, err := v.mount(at, vfs.Options{
		ReadOnly:      r.ReadOnly || r.ForceDecode,
		AllowOther:    r.AllowOther,
		NoExec:        r.NoExec,
		Logger:        d.log,
		AuthFailed:    d.authFailedHook(cipherDir, mountPoint),
		ForceDecode:   r.ForceDecode,
		BadNames:      badNames,
		SharedStorage: r.SharedStorage,
	})
	if err != nil {
		v.Close()
		return MountInfo{}, fmt.Errorf("mounting %s at %s: %w", cipherDir, mountPoint, explainFuseFailure(err, fuseDevice))
	}
	m := d.newMount(r, cipherDir, mountPoint, vid, v, mnt)
	d.mu.Lock()
	d.mounts[mountPoint] = m
	d.owned[mountPoint] = m.mnt
	d.saveLedger()
	d.mu.Unlock()
	ok = true
	recovery := ""
	if r.ForceDecode {
		recovery = ", read-only for recovery: blocks that fail authentication read as zeros, each logged"
	}
	d.log.Printf("mounted %s (%s) at %s%s", cipherDir, m.info.Cipher, m.info.MountPoint, recovery)
	d.events.add(Event{Kind: EventMounted, CipherDir: cipherDir, MountPoint: m.info.MountPoint, Reverse: r.Reverse})
	if v.notice != "" {
		d.log.Printf("%s: %s", cipherDir, v.notice)
	}
	go d.watchEnd(m, mountPoint)
	return m.info, nil
}

// startRequest counts a mount request in (d.inflight, d.settling) unless the daemon is
// quitting; settled counts it out.
func (d *daemon) startRequest() (settled func(), err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.quitting {
		return nil, errors.New("the mount manager is shutting down")
	}
	d.inflight.Add(1)
	ch := make(chan struct{})
	d.settling[ch] = true
	return func() {
		d.mu.Lock()
		delete(d.settling, ch)
		close(ch)
		d.mu.Unlock()
		d.inflight.Done()
	}, nil
}

// reserve enters a pending mount of the vault cipherDir (identity vid) at mountPoint in
// d.mounts, unless the vault or the mount point is in the table already.
//
// A mount in the table that is gone from the kernel was unmounted behind the daemon's back
// ("umount" by hand, or mount(8) in "umount MP && mount MP"), and its server is ending:
// watchEnd takes it out of the table a moment later. A request in that moment waits for it
// (up to endWait) instead of failing. A server that does not end in that time still serves
// files opened before a lazy unmount ("umount -l", or "vaultui unmount --lazy": a detached
// mount), and a second server of the vault would corrupt the blocks both write: that request
// is refused, saying so.
//
// A pending mount in the way whose request was stopped (its client left, or it was aborted)
// is waited for too: its key derivation is being killed, and the next try must not be told
// the vault is already mounted. So is, for a moment (remountWait), the very mount asked for
// (the vault at the mount point) while still in the kernel's table: an unmount of it may be
// on its way ("umount MP & mount MP", xfstests generic/604); if none comes, the request is
// refused. The reservation made is returned; ctx and abort are its request's, for
// abortPending.
func (d *daemon) reserve(ctx context.Context, abort context.CancelCauseFunc, cipherDir, mountPoint string, vid vault.ID) (*mount, error) {
	for {
		ending, m, err := d.tryReserve(ctx, abort, cipherDir, mountPoint, vid)
		if ending == nil {
			return m, err // reserved, or refused
		}
		limit := endWait
		if err != nil {
			limit = remountWait // err refuses the request unless ending goes meanwhile
		}
		select {
		case <-ending.outOfWay():
		case <-ctx.Done():
			return nil, fmt.Errorf("mounting %s stopped: %w", cipherDir, context.Cause(ctx))
		case <-time.After(limit):
			if err != nil {
				return nil, err
			}
			if ending.pending != nil {
				return nil, ErrorOf(ErrAlreadyMounted, "vault %s is still being unlocked for %s", cipherDir, ending.info.MountPoint)
			}
			return nil, ErrorOf(ErrAlreadyMounted, "vault %s was unmounted lazily from %s and still serves the files opened on it before: close them first",
				ending.info.CipherDir, ending.info.MountPoint)
		}
	}
}

// endWait bounds how long a mount request waits for the vault's earlier server, unmounted
// by hand or detached, to end (see reserve).
const endWait = 5 * time.Second

// remountWait bounds how long a mount request waits for the same mount, still in the kernel's
// table, to be unmounted (see reserve). As long as endWait: the server's end can take over 2 s
// to be seen on a busy machine (TestMountRacingUnmountByHand failed 1 run in 6 at 2 s).
const remountWait = endWait

// tryReserve is one attempt of reserve. ending is a mount in the way whose end is to be
// awaited (gone from the kernel, detached, or a stopped pending one); err refuses the request
// for another in the way; else reserved is the pending mount entered. Both ending and err:
// the mount asked for is there already, refused unless it ends within remountWait.
func (d *daemon) tryReserve(ctx context.Context, abort context.CancelCauseFunc, cipherDir, mountPoint string, vid vault.ID) (ending, reserved *mount, err error) {
	dir, _ := vault.IDOf(mountPoint)
	d.mu.Lock()
	defer d.mu.Unlock()
	for mp, m := range d.mounts {
		samePlace := mp == mountPoint || !dir.IsZero() && (m.dir == dir || m.root == dir)
		sameVault := !vid.IsZero() && m.vid == vid
		switch {
		case !samePlace && !sameVault:
			continue
		case m.pending != nil && m.pending.ctx.Err() != nil:
			return m, nil, nil // stopped: its reservation is about to go
		case m.pending != nil && samePlace:
			return nil, nil, ErrorOf(ErrAlreadyMounted, "%s is being mounted (vault %s is being unlocked)", mountPoint, m.info.CipherDir)
		case m.pending != nil:
			return nil, nil, ErrorOf(ErrAlreadyMounted, "vault %s is being unlocked for a mount at %s", cipherDir, m.info.MountPoint)
		case m.goneFromKernel():
			return m, nil, nil
		case samePlace && sameVault:
			return m, nil, ErrorOf(ErrAlreadyMounted, "%s is already mounted (vault %s)", mountPoint, m.info.CipherDir)
		case samePlace:
			return nil, nil, ErrorOf(ErrAlreadyMounted, "%s is already mounted (vault %s)", mountPoint, m.info.CipherDir)
		default:
			return nil, nil, ErrorOf(ErrAlreadyMounted, "vault %s is already mounted at %s", cipherDir, d.whereNow(m))
		}
	}
	for _, m := range d.detached {
		if !vid.IsZero() && m.vid == vid && !m.ended {
			return m, nil, nil
		}
	}
	reserved = &mount{info: MountInfo{CipherDir: cipherDir, MountPoint: mountPoint}, vid: vid, dir: dir,
		pending: &pendingMount{ctx: ctx, abort: abort, released: make(chan struct{})}}
	d.mounts[mountPoint] = reserved
	return nil, reserved, nil
}

// pendingMount is what a reservation in d.mounts knows of the request that made it.
type pendingMount struct {
	// ctx is the request's; abort stops it (abortPending), killing its key derivation.
	ctx   context.Context
	abort context.CancelCauseFunc
	// released is closed once the request is over and the reservation is gone (or replaced by
	// the mount it made).
	released chan struct{}
}

// outOfWay is closed once m is out of the way of a new mount of its vault: its server ended,
// or, for a pending mount, its request is over.
func (m *mount) outOfWay() <-chan struct{} {
	if m.pending != nil {
		return m.pending.released
	}
	return m.done
}

// errAborted stops a mount request whose vault or mount point was unmounted while it unlocked.
var errAborted = fmt.Errorf("unmounted while it was being unlocked: %w", context.Canceled)

// abortPending stops the mount requests still unlocking whose vault or mount point target
// names (by identity, or by the mount point's spelling), and waits for their reservations to
// go (at most endWait). It reports whether there were any.
func (d *daemon) abortPending(target string) bool {
	tid, err := idTimeout(target, time.Second)
	clean := filepath.Clean(target)
	var stopped []*pendingMount
	d.mu.Lock()
	for mp, m := range d.mounts {
		if m.pending == nil || m.fs != nil {
			continue
		}
		if mp == clean || m.info.CipherDir == clean || err == nil && (tid == m.vid || tid == m.dir) {
			m.pending.abort(errAborted)
			stopped = append(stopped, m.pending)
		}
	}
	d.mu.Unlock()
	limit := time.After(endWait)
	for _, p := range stopped {
		select {
		case <-p.released:
		case <-limit:
			return true
		}
	}
	return len(stopped) > 0
}

// goneFromKernel reports whether m, a published mount, is no longer in the kernel's mount
// table. A pending one (no done channel yet) or one without a known identity never is.
func (m *mount) goneFromKernel() bool {
	if m.done == nil || !m.mnt.known() {
		return false
	}
	_, found, err := m.inKernel()
	return err == nil && !found
}

// inKernel returns m's line in the kernel's mount table, found by its identity. The kernel
// hands an unmounted mount's ID and anonymous device number to the next mount made (xfstests
// mounting gocryptfs beside vaultui met that): a mount of another type or source that holds
// m's identity is not m, which is then gone.
func (m *mount) inKernel() (mountEntry, bool, error) {
	e, found, err := findMount(m.mnt)
	if found && m.mntSource != "" && (e.FSType != m.mntType || e.Source != m.mntSource) {
		return mountEntry{}, false, err
	}
	return e, found, err
}

// checkUnused checks what the mount table of this daemon cannot tell: that nobody else has
// mounted the vault, and that the vault and the mount point may be mounted there.
func checkUnused(cipherDir, mountPoint string, vid vault.ID) error {
	// Mounted by someone else: gocryptfs, another vaultui daemon, any file system whose
	// source is this cipherdir. Two servers of one vault corrupt each other's blocks.
	if !vid.IsZero() {
		for _, e := range mountsOf(vid) {
			return ErrorOf(ErrAlreadyMounted, "vault %s is already mounted at %s (%s, from %s)",
				cipherDir, e.MountPoint, e.FSType, e.Source)
		}
	}
	if err := CheckNesting(cipherDir, mountPoint); err != nil {
		return err
	}
	return MountPointReady(mountPoint)
}

// newMount describes the vault v of the request r, just mounted (mnt) at mountPoint.
func (d *daemon) newMount(r *MountRequest, cipherDir, mountPoint string, vid vault.ID, v *unlocked, mnt *vfs.Mounted) *mount {
	var st unix.Stat_t
	if err := unix.Stat(mountPoint, &st); err != nil {
		d.log.Printf("mounted %s but cannot stat it: %v; its users cannot be named", mountPoint, err)
	}
	// The mount's identity, by which it is unmounted and cleaned up wherever its mount point
	// moves. Without it (a kernel before 5.8) the mount point's spelling is all there is.
	id, err := mountAt(mountPoint)
	if err != nil {
		d.log.Printf("mounted %s but cannot identify the mount: %v; it is unmounted by its path", mountPoint, err)
	}
	now := time.Now()
	m := &mount{
		dev:  st.Dev,
		vid:  vid,
		root: vault.ID{Dev: st.Dev, Ino: st.Ino},
		mnt:  id,
		done: make(chan struct{}),
		info: MountInfo{
			CipherDir:     cipherDir,
			MountPoint:    mountPoint,
			Cipher:        v.cipher,
			ReadOnly:      r.ReadOnly || r.ForceDecode,
			ForceDecode:   r.ForceDecode,
			SharedStorage: r.SharedStorage,
			Reverse:       r.Reverse,
			Since:         now,
			Idle:          r.Idle,
			Notice:        v.notice,
		},
		v:       v,
		fs:      mnt,
		sampler: newSampler(mnt.Counters, now),
	}
	if e, found, _ := findMount(id); found {
		m.info.MountPoint = e.MountPoint // where the kernel put it: symlinks resolved
		m.mntType, m.mntSource = e.FSType, e.Source
	}
	return m
}

// watchEnd waits for the file system of m, entered in d.mounts at mountPoint, to end. If it
// goes away behind our back (fusermount -u by hand), it is forgotten. A detached one is
// forgotten, and its keys wiped, once its last user is gone.
func (d *daemon) watchEnd(m *mount, mountPoint string) {
	m.fs.Wait()
	cipherDir := m.info.CipherDir
	d.mu.Lock()
	where := m.info.MountPoint
	external := d.mounts[mountPoint] == m && !m.closing.Load()
	if d.mounts[mountPoint] == m {
		delete(d.mounts, mountPoint)
	}
	// Gone from the kernel: its mount ID and device number are free for the next file
	// system, which a later daemon must not take for this one and "clean up".
	d.pruneLedger(d.staleSnapshot())
	detached := slices.Contains(d.detached, m)
	m.ended = true // from now on it cannot be detached
	d.mu.Unlock()
	if external {
		d.log.Printf("%s was unmounted externally", where)
		d.eventUnmounted(cipherDir, where, ReasonExternal, m.info.Reverse)
	}
	if detached {
		d.log.Printf("%s (detached): its last user is gone; file system closed", where)
		d.eventUnmounted(cipherDir, where, ReasonReleased, m.info.Reverse)
	}
	m.v.Close()
	// Only now is the mount done: a shutdown waiting for its detached mounts exits once
	// this one is logged and its keys are wiped, not before.
	d.mu.Lock()
	if i := slices.Index(d.detached, m); i >= 0 {
		d.detached = slices.Delete(d.detached, i, i+1)
	}
	close(m.done)
	d.mu.Unlock()
}

// whereNow is where m is mounted now: its mount point as the kernel lists it today (moved
// with a renamed parent), else the one it was mounted at.
func (d *daemon) whereNow(m *mount) string {
	if m.mnt.known() {
		if e, found, err := m.inKernel(); err == nil && found {
			return e.MountPoint
		}
	}
	return m.info.MountPoint
}

// MountPointReady refuses a mount point that a mount cannot use: missing, not a directory, a
// mount point already (or a stale one), or not empty. The daemon checks it as it mounts; a
// client checks it before it asks for a password (app.CheckMount).
func MountPointReady(mp string) error {
	fi, err := os.Stat(mp)
	if errors.Is(err, os.ErrNotExist) {
		return ErrorOf(ErrMountpoint, "mount point %s does not exist", mp)
	}
	if err != nil {
		if errors.Is(err, syscall.ENOTCONN) {
			return ErrorOf(ErrAlreadyMounted, "%s is a stale mount (transport endpoint is not connected)", mp)
		}
		return ErrorOf(ErrMountpoint, "mount point %s: %v", mp, err)
	}
	if !fi.IsDir() {
		return ErrorOf(ErrMountpoint, "mount point %s is not a directory", mp)
	}
	if isMountPoint(mp) {
		return ErrorOf(ErrAlreadyMounted, "%s is already a mount point", mp)
	}
	f, err := os.Open(mp)
	if err != nil {
		return ErrorOf(ErrMountpoint, "mount point %s: %v", mp, err)
	}
	defer f.Close()
	if names, _ := f.Readdirnames(1); len(names) > 0 {
		return ErrorOf(ErrMountpoint, "mount point %s is not empty", mp)
	}
	return nil
}

// unmountTarget unmounts for the user by mount point or cipherdir, compared by identity: any
// path to the mount point or to the vault will do. A mount still unlocking is stopped. A stale
// mount (its server gone, so nothing can be stat'ed in it) is found by its mount point's real
// path or its source's identity; it is detached.
func (d *daemon) unmountTarget(target string, lazy bool) error {
	why := ReasonUser
	if lazy {
		why = ReasonLazy
	}
	if mp := d.findTarget(target); mp != "" {
		return d.unmountFor(mp, lazy, why)
	}
	if d.abortPending(target) {
		return nil // it was still unlocking: stopped, nothing was mounted
	}
	// One spelling is one place; other spellings are compared by identity.
	tid, _ := idTimeout(target, time.Second)
	real := realPath(target)
	for _, s := range d.staleSnapshot() {
		sid, _ := idTimeout(s.CipherDir, time.Second)
		if s.MountPoint == real || s.CipherDir == filepath.Clean(target) || !tid.IsZero() && sid == tid {
			if err := d.detachStale(s.MountPoint); err != nil {
				return fmt.Errorf("stale mount %s: %w", s.MountPoint, err)
			}
			d.cleanStale()
			return nil
		}
	}
	return ErrorOf(ErrNotMounted, "%s is not mounted", target)
}

// findTarget returns the key in d.mounts of the live mount that target names: the root of
// the mounted file system or the vault's cipherdir, by identity; "" if none.
func (d *daemon) findTarget(target string) string {
	// Bounded: target may be anywhere, a hung file system included.
	tid, err := idTimeout(target, time.Second)
	d.mu.Lock()
	defer d.mu.Unlock()
	for p, m := range d.mounts {
		if m.fs != nil && err == nil && (tid == m.root || tid == m.vid) {
			return p
		}
	}
	return ""
}

// realPath is path with the symlinks of its directory resolved (the last element is kept: it
// may be a mount point that cannot be stat'ed); path itself when that fails.
func realPath(path string) string {
	dir, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return filepath.Clean(path)
	}
	return filepath.Join(dir, filepath.Base(path))
}

// unmount unmounts the vault registered at mp (a key of d.mounts), wherever its mount point
// is now: the kernel is asked by the mount's identity (see locate), not by the path it was
// mounted at, which a renamed parent or a re-pointed symlink may have moved. A busy mount
// fails with a busyError (ErrBusy) unless lazy, which detaches it now: its users keep their
// open files, the daemon serves them until the last one is closed, then wipes the keys. No
// wait here is unbounded: see unmountFS.
func (d *daemon) unmount(mp string, lazy bool) error {
	d.mu.Lock()
	m := d.mounts[mp]
	d.mu.Unlock()
	if m == nil || m.fs == nil {
		return ErrorOf(ErrNotMounted, "%s is not mounted", mp)
	}
	m.closing.Store(true)
	where, here := d.locate(m)
	if !here {
		// Not in this mount namespace any more (detached by hand, a copy elsewhere): serve
		// whoever still uses it until they let go.
		if d.toDetached(mp, m) {
			d.log.Printf("%s (%s) is no longer mounted here; serving its file system until it is released", mp, m.info.CipherDir)
		}
		return nil
	}
	if lazy {
		if err := detach(where); err != nil {
			m.closing.Store(false)
			return fmt.Errorf("unmounting %s: %w", where, err)
		}
		if d.toDetached(mp, m) {
			d.log.Printf("detached %s (%s); serving the files still open on it until they are closed", where, m.info.CipherDir)
			return nil
		}
	} else {
		finished, err := d.unmountFS(m, where)
		if err != nil {
			m.closing.Store(false)
			return &busyError{mountPoint: where, holders: holders(m.dev, 5), cause: err}
		}
		if !finished {
			if _, still := d.locate(m); still {
				m.closing.Store(false)
				return fmt.Errorf("unmounting %s: it did not finish in time", where)
			}
			// Gone from here, but the kernel keeps the file system: a copy of the mount in
			// another mount namespace. It is served as long as that copy lives.
			if d.toDetached(mp, m) {
				d.log.Printf("unmounted %s (%s) here, but its file system stays in use (%s; a copy in another mount namespace?); serving it until it is released",
					where, m.info.CipherDir, pids(holders(m.dev, 5)))
				return nil
			}
		}
	}
	d.mu.Lock()
	if d.mounts[mp] == m {
		delete(d.mounts, mp)
	}
	d.pruneLedger(d.staleSnapshot())
	d.mu.Unlock()
	d.log.Printf("unmounted %s (%s)", where, m.info.CipherDir)
	return nil
}

// refreshMountPoints records in mount.movedTo where the kernel lists each live mount now (a
// parent directory renamed since), from one read of the mount table.
func (d *daemon) refreshMountPoints() {
	entries, err := readMountInfo()
	if err != nil {
		return
	}
	now := make(map[mountID]string, len(entries))
	for _, e := range entries {
		now[e.identity()] = e.MountPoint
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, m := range d.mounts {
		if p, ok := now[m.mnt]; ok && m.fs != nil && m.mnt.known() {
			m.movedTo = p
		}
	}
}

// locate returns where the mount m is now, by its identity, and whether it is still mounted
// in this mount namespace. A mount without an identity (see mount) is where it was mounted.
func (d *daemon) locate(m *mount) (string, bool) {
	if !m.mnt.known() {
		return m.info.MountPoint, isMountPoint(m.info.MountPoint)
	}
	e, found, err := m.inKernel()
	if err != nil {
		d.log.Printf("locating %s: %v; trying its first mount point", m.info.MountPoint, err)
		return m.info.MountPoint, true
	}
	return e.MountPoint, found
}

// unmountAll unmounts every vault; busy ones are reported. Mounts being set up when it is
// asked are stopped if they are still unlocking, else waited for (at most settleWait) and
// unmounted too: "all" means those as well.
func (d *daemon) unmountAll() error {
	d.mu.Lock()
	for _, m := range d.mounts {
		if m.pending != nil && m.fs == nil {
			m.pending.abort(errAborted)
		}
	}
	pending := slices.Collect(maps.Keys(d.settling))
	d.mu.Unlock()
	limit := time.After(settleWait)
	var errs []error
wait:
	for _, ch := range pending {
		select {
		case <-ch:
		case <-limit:
			errs = append(errs, fmt.Errorf("a mount still being set up after %v was not waited for", settleWait))
			break wait
		}
	}
	for _, mp := range d.mountPoints() {
		if err := d.unmountFor(mp, false, ReasonUser); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// settleWait bounds how long unmount --all waits for mounts being set up (an unlock's KDF
// takes a second or so; a mount point on a hung file system would take forever).
const settleWait = 30 * time.Second

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
