package mountmgr

// Stale mounts (left by a daemon that died): finding and detaching them, and the report that
// tells the user about them once.

import (
	"slices"
	"time"
)

func (d *daemon) staleSnapshot() []StaleMount {
	d.stale.Lock()
	defer d.stale.Unlock()
	return append([]StaleMount(nil), d.stale.mounts...)
}

// cleanStale finds mounts left by a daemon that died and detaches them. Each new one, and each
// earlier failure that now succeeds, goes into the report for the user (d.stale.unreported).
func (d *daemon) cleanStale() {
	d.cleanMu.Lock()
	defer d.cleanMu.Unlock()
	found, err := d.mtab.findStale(d.uid, func(e mountEntry) bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		_, ours := d.mounts[e.MountPoint] // being set up there
		for _, m := range d.mounts {
			ours = ours || m.mnt.known() && m.mnt == e.identity()
		}
		// Found by identity: a mount whose parent was renamed is still ours to clean.
		return ours || !d.owns(e)
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
		s.id = e.identity()
		if err := d.mtab.detach(e.MountPoint); err != nil {
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
	d.pruneLedger(left)
	d.mu.Unlock()
	d.stale.Lock()
	defer d.stale.Unlock()
	d.stale.mounts = left
	for _, s := range news {
		d.addReport(s)
		detail := "cleaned up"
		if !s.Cleaned {
			detail = "cleanup failed: " + s.Error
		}
		d.events.add(Event{Kind: EventStale, CipherDir: s.CipherDir, MountPoint: s.MountPoint, Detail: detail})
	}
	// Earlier failures that are gone now (unmounted by hand or by "vaultui unmount"): a report
	// not yet delivered must not claim they are still there.
	for i, u := range d.stale.unreported {
		if _, gone := prev[u.MountPoint]; gone {
			d.stale.unreported[i].Cleaned, d.stale.unreported[i].Error = true, ""
		}
	}
}

// addReport adds s to the undelivered report, replacing an entry for the same mount point
// (a failure that a retry has since cleaned). The caller holds d.stale.
func (d *daemon) addReport(s StaleMount) {
	if i := slices.IndexFunc(d.stale.unreported, func(u StaleMount) bool { return u.MountPoint == s.MountPoint }); i >= 0 {
		d.stale.unreported[i] = s
	} else {
		d.stale.unreported = append(d.stale.unreported, s)
	}
}

// takeReport hands out the undelivered stale mount report and forgets it; giveBackReport
// returns it when the answer could not be sent.
func (d *daemon) takeReport() []StaleMount {
	d.stale.Lock()
	defer d.stale.Unlock()
	r := d.stale.unreported
	d.stale.unreported = nil
	return r
}

func (d *daemon) giveBackReport(r []StaleMount) {
	if len(r) == 0 {
		return
	}
	d.stale.Lock()
	defer d.stale.Unlock()
	// Entries added meanwhile are newer news about the same mounts; they win.
	for _, s := range r {
		if !slices.ContainsFunc(d.stale.unreported, func(u StaleMount) bool { return u.MountPoint == s.MountPoint }) {
			d.stale.unreported = append(d.stale.unreported, s)
		}
	}
}

// detachStale detaches the stale mount at mp unless a retry of tick got there first.
func (d *daemon) detachStale(mp string) error {
	d.cleanMu.Lock()
	defer d.cleanMu.Unlock()
	if slices.ContainsFunc(d.staleSnapshot(), func(s StaleMount) bool { return s.MountPoint == mp }) {
		return d.mtab.detach(mp)
	}
	return nil
}
