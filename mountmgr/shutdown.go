package mountmgr

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// DefaultShutdownGrace bounds how long a stopping daemon serves the files still open on busy
// mounts. It is below systemd's 90 s stop timeout, so the daemon leaves on its own terms.
const DefaultShutdownGrace = 60 * time.Second

// DefaultIdleExit is how long "vaultui daemon" waits, with nothing mounted and no client
// connected, before it exits.
const DefaultIdleExit = 10 * time.Minute

// unmountWait bounds how long an unmount waits for the kernel to end the file system
// after the umount itself succeeded. It ends at once unless a copy of the mount lives on in
// another mount namespace; then it would wait as long as that copy lives.
const unmountWait = 5 * time.Second

// unmountFS unmounts m's file system, now at where, and waits, at most unmountWait (less
// when a stopping daemon's grace runs out sooner), for its server to end and its keys to be
// wiped. finished is false when that wait ran out; the unmount goes on in the background.
func (d *daemon) unmountFS(m *mount, where string) (finished bool, err error) {
	wait := unmountWait
	d.mu.Lock()
	if !d.drainUntil.IsZero() {
		wait = min(wait, max(time.Until(d.drainUntil), 500*time.Millisecond))
	}
	d.mu.Unlock()
	res := make(chan error, 1)
	go func() { res <- unmountPath(where, m.mnt) }()
	timeout := time.After(wait)
	select {
	case err := <-res:
		if err != nil {
			return true, err
		}
	case <-timeout:
		return false, nil
	}
	select {
	case <-m.done:
		return true, nil
	case <-timeout:
		return false, nil
	}
}

// unmountPath unmounts the mount id at path: umount(2) as root, fusermount3 -u otherwise. It
// first checks that the mount at path is id, so a mount stacked on top by someone else is
// not taken for ours. A file closed just before may keep the mount busy for a moment, so a
// failure is tried again a few times, briefly.
func unmountPath(path string, id mountID) error {
	if id.known() {
		if top, err := mountAt(path); err == nil && top != id {
			return fmt.Errorf("%s: another file system is mounted over it (mount %d)", path, top.ID)
		}
	}
	var err error
	delay := 5 * time.Millisecond
	for try := 0; try < 5; try++ {
		if err = umount(path, false); err == nil {
			return nil
		}
		time.Sleep(delay)
		delay *= 2
	}
	return err
}

// umount unmounts path once, lazy detaching it: umount(2) as root, else (or when that is
// refused) fusermount3 -u, -uz when lazy.
func umount(path string, lazy bool) error {
	flags, opt, args := 0, "-u", []string{"-u", path}
	if lazy {
		flags, opt, args = syscall.MNT_DETACH, "-uz", []string{"-u", "-z", path}
	}
	if os.Geteuid() == 0 {
		err := syscall.Unmount(path, flags)
		if err == nil || !lazy && errors.Is(err, syscall.EBUSY) {
			return err
		}
	}
	bin := "fusermount3"
	if _, err := exec.LookPath(bin); err != nil {
		bin = "fusermount"
	}
	// Bounded like every wait of the daemon: a helper that hangs must not hang it.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s %s: %w: %s", bin, opt, path, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// toDetached moves m, no longer mounted at mp, to the detached mounts, unless its server has
// already ended (then it reports false and the caller forgets m).
func (d *daemon) toDetached(mp string, m *mount) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mounts[mp] == m {
		delete(d.mounts, mp)
	}
	if m.ended {
		return false
	}
	d.detached = append(d.detached, m)
	return true
}

// idleExitDue reports, once, that the daemon has had nothing mounted and no client for
// d.idleExit; from then on connections are refused (the client starts a new daemon).
func (d *daemon) idleExitDue(now time.Time) bool {
	if d.idleExit <= 0 {
		return false
	}
	d.clients.Lock()
	defer d.clients.Unlock()
	d.mu.Lock()
	quitting := d.quitting
	d.mu.Unlock()
	if d.clients.exiting || quitting {
		return false
	}
	if d.clients.active > 0 || d.inUse() {
		d.clients.lastUsed = now
		return false
	}
	if now.Sub(d.clients.lastUsed) < d.idleExit {
		return false
	}
	d.clients.exiting = true
	d.log.Printf("nothing mounted and no client for %v: exiting (a client starts the daemon again when needed)", d.idleExit)
	return true
}

// inUse reports whether the daemon has mounts or stale mounts to look after.
func (d *daemon) inUse() bool {
	d.mu.Lock()
	mounted := len(d.mounts) > 0 || len(d.detached) > 0
	d.mu.Unlock()
	if mounted {
		return true
	}
	// Stale mounts to retry and a report not yet delivered keep it too, as long as a client
	// can still reach it: a daemon whose socket is gone (runtime dir removed) is orphaned.
	d.stale.Lock()
	stale := len(d.stale.mounts) > 0 || len(d.stale.unreported) > 0
	d.stale.Unlock()
	return stale && d.reachable()
}

// reachable reports whether the daemon's socket is still where clients look for it.
func (d *daemon) reachable() bool {
	var st syscall.Stat_t
	return d.sockIno != 0 && syscall.Stat(d.sockPath, &st) == nil && st.Ino == d.sockIno
}

// shutdown unmounts every vault. A busy one is detached at once (no new users can reach it)
// and its open files are served until they are closed or d.grace has passed; then the daemon
// exits and whoever still uses it gets "transport endpoint is not connected". The log and
// "vaultui status" say so meanwhile. Every wait is bounded; what is left is logged and
// returned.
func (d *daemon) shutdown() error {
	d.log.Printf("shutting down: unmounting all vaults")
	d.mu.Lock()
	d.quitting = true
	d.mu.Unlock()
	// A mount that was being set up when the signal came is unmounted too, not left behind.
	inflight := make(chan struct{})
	go func() { d.inflight.Wait(); close(inflight) }()
	select {
	case <-inflight:
	case <-time.After(30 * time.Second):
		d.log.Printf("shutdown: a mount request is still in progress; not waiting for it")
	}
	deadline := time.Now().Add(d.grace)
	d.mu.Lock()
	d.drainUntil = deadline
	d.mu.Unlock()
	var errs []error
	for _, mp := range d.mountPoints() {
		err := d.unmountFor(mp, false, ReasonShutdown)
		if errors.Is(err, ErrBusy) {
			d.log.Printf("shutdown: %s; detaching it and serving its open files until they are closed, until %s at the latest",
				logSafe(err), deadline.Format(time.TimeOnly))
			err = d.unmountFor(mp, true, ReasonShutdown)
		}
		if err != nil {
			d.log.Printf("shutdown: %s", logSafe(err))
			errs = append(errs, err)
		}
	}
	for {
		d.mu.Lock()
		left := slices.Clone(d.detached)
		d.mu.Unlock()
		if len(left) == 0 {
			break
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			var mps []string
			for _, m := range left {
				d.log.Printf("shutdown: %s still in use after %v (%s); exiting anyway: its users now get \"transport endpoint is not connected\"",
					m.info.MountPoint, d.grace, pids(holders(m.dev, 5)))
				m.fs.DropOpenPages() // else the kernel answers reads of cached pages itself
				mps = append(mps, m.info.MountPoint)
			}
			errs = append(errs, fmt.Errorf("left in use at exit: %s", strings.Join(mps, ", ")))
			break
		}
		select {
		case <-left[0].done:
		case <-time.After(min(wait, time.Second)):
		}
	}
	return errors.Join(errs...)
}
