package mountmgr

// Mounting and unmounting vaults on request, and the checks a mount point must pass.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"syscall"
	"time"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/mountmgr/vfs"
	"golang.org/x/sys/unix"
)

// mount unlocks and mounts one vault. The mount point is reserved in d.mounts while the
// (slow: scrypt) unlock runs so two requests cannot race for it.
func (d *daemon) mount(r *MountRequest) (MountInfo, error) {
	defer crypto.Wipe(r.Password)
	d.mu.Lock()
	if d.quitting {
		d.mu.Unlock()
		return MountInfo{}, errors.New("the mount manager is shutting down")
	}
	d.inflight.Add(1)
	d.mu.Unlock()
	defer d.inflight.Done()
	if !filepath.IsAbs(r.CipherDir) || !filepath.IsAbs(r.MountPoint) {
		return MountInfo{}, errors.New("cipherdir and mount point must be absolute paths")
	}
	cipherDir, mountPoint := filepath.Clean(r.CipherDir), filepath.Clean(r.MountPoint)
	d.mu.Lock()
	for mp, m := range d.mounts {
		if mp == mountPoint {
			d.mu.Unlock()
			return MountInfo{}, errorOf(ErrAlreadyMounted, "%s is already mounted", mountPoint)
		}
		if m.info.CipherDir == cipherDir {
			d.mu.Unlock()
			return MountInfo{}, errorOf(ErrAlreadyMounted, "vault %s is already mounted at %s", cipherDir, mp)
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
		return MountInfo{}, fmt.Errorf("mounting %s at %s: %w", cipherDir, mountPoint, explainFuseFailure(err, fuseDevice))
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
		sampler: newSampler(mnt.Counters, now),
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
		detached := slices.Contains(d.detached, m)
		m.ended = true // from now on it cannot be detached
		d.mu.Unlock()
		if external {
			d.log.Printf("%s was unmounted externally", mountPoint)
			d.eventUnmounted(cipherDir, mountPoint, ReasonExternal)
		}
		if detached {
			d.log.Printf("%s (detached): its last user is gone; file system closed", mountPoint)
			d.eventUnmounted(cipherDir, mountPoint, ReasonReleased)
		}
		v.Close()
		// Only now is the mount done: a shutdown waiting for its detached mounts exits once
		// this one is logged and its keys are wiped, not before.
		d.mu.Lock()
		d.dropDetached(m)
		close(m.done)
		d.mu.Unlock()
	}()
	return m.info, nil
}

func checkMountPoint(mp string) error {
	fi, err := os.Stat(mp)
	if errors.Is(err, os.ErrNotExist) {
		return errorOf(ErrMountpoint, "mount point %s does not exist", mp)
	}
	if err != nil {
		if errors.Is(err, syscall.ENOTCONN) {
			return errorOf(ErrAlreadyMounted, "%s is a stale mount (transport endpoint is not connected)", mp)
		}
		return errorOf(ErrMountpoint, "mount point %s: %v", mp, err)
	}
	if !fi.IsDir() {
		return errorOf(ErrMountpoint, "mount point %s is not a directory", mp)
	}
	if isMountPoint(mp) {
		return errorOf(ErrAlreadyMounted, "%s is already a mount point", mp)
	}
	f, err := os.Open(mp)
	if err != nil {
		return errorOf(ErrMountpoint, "mount point %s: %v", mp, err)
	}
	defer f.Close()
	if names, _ := f.Readdirnames(1); len(names) > 0 {
		return errorOf(ErrMountpoint, "mount point %s is not empty", mp)
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
					return fmt.Errorf("stale mount %s: %w", s.MountPoint, err)
				}
				d.cleanStale()
				return nil
			}
		}
		return errorOf(ErrNotMounted, "%s is not mounted", target)
	}
	return d.unmount(mp, lazy)
}

// unmount unmounts the vault at mp. A busy mount fails with a busyError (ErrBusy) unless lazy,
// which detaches it now: its users keep their open files, the daemon serves them until the
// last one is closed, then wipes the keys. No wait here is unbounded: see unmountFS.
func (d *daemon) unmount(mp string, lazy bool) error {
	d.mu.Lock()
	m := d.mounts[mp]
	d.mu.Unlock()
	if m == nil || m.fs == nil {
		return errorOf(ErrNotMounted, "%s is not mounted", mp)
	}
	m.closing.Store(true)
	if lazy {
		if err := detach(mp); err != nil {
			m.closing.Store(false)
			return fmt.Errorf("unmounting %s: %w", mp, err)
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
				return fmt.Errorf("unmounting %s: it did not finish in time", mp)
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
