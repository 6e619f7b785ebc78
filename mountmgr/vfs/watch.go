package vfs

import (
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/hanwen/go-fuse/v2/fs"
	"golang.org/x/sys/unix"
)

// Changes behind the mount. The kernel caches entries and attributes for cacheTimeout, and a
// file's pages across opens (FOPEN_KEEP_CACHE); on a local cipherdir it drops them only when
// told (fsys.pagesTold), elsewhere also when it sees a new size or modification time.
// A sync tool changes the cipherdir behind the mount, and may keep both: rsync -t renames a
// new file over the old one, rsync --inplace -t rewrites it in place, and either restores
// the old modification time. So the mount watches, with inotify, every cipher directory it
// has worked in (the directories whose descriptor dirFd opened, the root from the start),
// and tells the kernel what changed: NotifyEntry for a name that now holds another file or
// none or a new one (which also drops the directory's cached listing), NotifyContent for a
// file rewritten in place (its pages and attributes) and for a directory whose entries
// changed (its attributes).
//
// Each event is checked against what the mount knows rather than trusted: the entry is
// statted, and the kernel is told only where it holds something that is now wrong. The
// mount's own changes raise events too; they match what the mount knows (go-fuse's tree has
// the new entry, or the file's change time is the one the mount's last change of it left,
// watcher.own), so they cost a stat and no notification. A file the mount is changing at
// that moment (watcher.begin to watcher.end: a write, a truncation, a change of attributes)
// is checked again once the change is done. A change the mount makes to a file that someone
// else changed since the mount's last change (the file's change time is not the one the
// mount left) marks the file stale: its pages were stale before the mount's change and stay
// so after it, though its change time is then the mount's, so the kernel is told all the
// same. What differs is checked once more watchRecheck later before the kernel is told (run
// says why). Events are read in batches, one every watchSettle at most, so a burst of writes
// costs one check, and a change shows through the mount within a tenth of a second or so,
// where the cache timeouts alone took up to a second and never dropped the pages of a file
// rewritten in place.
//
// Not seen: a change made by someone else to a file while the mount is changing it (during
// one request: two writers of one file without a lock lose writes anyway), and one made
// within the same tick of the cipher file system's clock as the mount's own last change of
// the file (their change times are equal; kernels with fine-grained timestamps give the
// change after a stat a new time), or less than ownFresh after it when the mount changes the
// file's attributes again within that time (begin); the cache timeouts (watchedCacheTimeout) still end the
// wrong entries and attributes. Entries of directories without a watch are cached for
// cacheTimeout only (node.cacheTimeout).
//
// A format whose entries are folders (Cryptomator: a .c9s folder holding a long-named file's
// contents.c9r, a directory's folder holding its dir.c9r, a symlink's holding symlink.c9r;
// tree.entryFolder) has what an entry is, and where its contents are, one level down from
// its directory's folder. So the folder of each such entry the kernel knows is watched too
// (watcher.addEntry, from node.newChild), and its events count as events of the entry's name
// in its directory's watch (watcher.entryEvents): a contents.c9r rewritten in place, a
// dir.c9r naming another directory now, a payload renamed over another's. A directory's own
// folder is its object there (its d/ folder, not in its parent's folder), so the attributes
// of a watched directory's own folder are followed too (selfEvent). A new entry folder that
// does not hold its payload yet (tree.beingMade: a sync tool makes the folder first) is
// watched until something comes into it (watcher.watchMaking), then its name is checked again.
//
// Where no watch can be added (fs.inotify.max_user_watches reached, or no inotify), the
// kernel's caches still expire after cacheTimeout; only the pages of a file rewritten in
// place keeping size and modification time then stay stale until the kernel drops them.
// Network storage (Options.SharedStorage) caches nothing and needs no watcher: inotify does
// not see other machines' changes anyway.

// watchSettle is how long the watcher collects events before acting on them; watchRecheck
// how long a name found changed waits for its second check (run says why).
const (
	watchSettle  = 10 * time.Millisecond
	watchRecheck = 50 * time.Millisecond
)

// watchMask is what a directory watch reports: changes of its entries, and of the contents
// and attributes of its files. IN_EXCL_UNLINK: nothing about files once they are unlinked.
const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_ATTRIB | unix.IN_ONLYDIR | unix.IN_EXCL_UNLINK

// contentEvents are the events that say a file's contents or attributes changed.
const contentEvents = unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_ATTRIB

// selfEvent is the name under which a change of a watched directory's own attributes is
// kept (inotify reports it without a name; an empty name stands for every child).
const selfEvent = "."

// ownMax bounds watcher.own. Only the changes of the last batch or two need their change time
// kept; one evicted too early costs one needless notification.
const ownMax = 1024

// watcher is what a mount watches, through the process's inotify instance (inotifyHub).
type watcher struct {
	f       *fsys
	hub     *inotifyHub
	started bool
	quit    chan struct{} // closed by close
	done    chan struct{} // closed when run returns

	// inbox collects the events the hub hands over (post) until run takes them; wake tells
	// run that there are some.
	inboxMu sync.Mutex
	inbox   map[eventKey]uint32
	wake    chan struct{}

	mu     sync.Mutex
	closed bool
	max    int             // Options.maxWatches
	dirs   map[int32]*node // watch descriptor -> directory node
	// entries maps the watch descriptor of an entry folder (tree.entryFolder) to the node
	// of the entry.
	entries map[int32]*node
	// making maps the watch descriptor of an entry folder being made (tree.beingMade) to
	// the entry's name in its directory's watch (watchMaking).
	making map[int32]eventKey
	// own maps a file to what the mount's last change of it left, so that the events of
	// that change are known for the mount's own; busy counts the changes of a file that the
	// mount has under way (begin to end).
	own      boundedMap[fs.StableAttr, ownChange]
	busy     map[fs.StableAttr]int
	limitLog sync.Once
}

// newWatcher watches root's cipherdir; nil (and a log line) when inotify is not there. It
// acts on events once started, when the mount is up.
func newWatcher(f *fsys, root *node, maxWatches int) *watcher {
	w := &watcher{f: f, quit: make(chan struct{}), done: make(chan struct{}), wake: make(chan struct{}, 1),
		dirs: map[int32]*node{}, entries: map[int32]*node{}, making: map[int32]eventKey{}, busy: map[fs.StableAttr]int{}, max: maxWatches}
	h, err := joinHub(w)
	if err != nil {
		f.log.Printf("vfs: no inotify (%v): changes behind the mount show after the cache timeouts", err)
		return nil
	}
	w.hub = h
	w.add(root, f.rootDir)
	return w
}

// start acts on events from now on: the mount is up, so its inodes can be notified.
func (w *watcher) start() {
	w.started = true
	go w.run()
}

// close stops the watcher and waits for it, then lets its watches go.
func (w *watcher) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	close(w.quit)
	if w.started {
		<-w.done
	}
	w.hub.leave(w)
}

// post adds the hub's event for key k to w's inbox and wakes run.
func (w *watcher) post(k eventKey, mask uint32) {
	w.inboxMu.Lock()
	if w.inbox == nil {
		w.inbox = map[eventKey]uint32{}
	}
	w.inbox[k] |= mask
	w.inboxMu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// takeInbox returns the events posted since the last call.
func (w *watcher) takeInbox() map[eventKey]uint32 {
	w.inboxMu.Lock()
	defer w.inboxMu.Unlock()
	b := w.inbox
	w.inbox = nil
	if b == nil {
		b = map[eventKey]uint32{}
	}
	return b
}

// add watches directory node n, open as fd, unless it is watched already or cannot be.
func (w *watcher) add(n *node, fd int) {
	x := n.ext()
	if x.wd.Load() != 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	wd, err := w.addWatchLocked(procFdPath(fd), watchMask)
	if err != nil {
		x.wd.Store(-1)
		return
	}
	if old := w.dirs[wd]; old != nil && old != n {
		old.ext().wd.Store(0) // one directory, a new node for it
	}
	w.dirs[wd] = n
	x.wd.Store(wd)
}

// addWatchLocked adds a watch of path, as long as the mount is under its limit
// (Options.maxWatches); the caller holds w.mu.
func (w *watcher) addWatchLocked(path string, mask uint32) (int32, error) {
	wd, err := w.hub.addWatch(w, path, mask)
	if err == nil && w.max > 0 && len(w.dirs)+len(w.entries)+len(w.making) >= w.max {
		w.hub.removeWatch(w, wd)
		err = unix.ENOSPC
	}
	if err == unix.ENOSPC {
		w.limitLog.Do(func() {
			w.f.log.Printf("vfs: inotify watch limit reached (fs.inotify.max_user_watches): changes behind the mount in further directories show after the cache timeouts")
		})
	}
	return wd, err
}

// addEntry watches the entry folder (tree.entryFolder) of node n, stored in directory node
// d, open as dirfd, unless it is watched already, or d is not (its events go to d's watch).
// A watch that cannot be added for the limit marks the node (entryUnwatched); one that fails
// otherwise (the entry went meanwhile) is tried again at the next lookup.
func (w *watcher) addEntry(d, n *node, dirfd int, stored string) {
	x := n.ext()
	if x.ewd.Load() != 0 || !d.watched() {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	// Not following a symlink in the entry's place: the kernel resolves the rest of the path
	// (/proc/self/fd/N, the directory itself) as it does for a directory's watch.
	wd, err := w.addWatchLocked(procFdPath(dirfd)+"/"+stored, watchMask|unix.IN_DONT_FOLLOW)
	if err != nil {
		if err == unix.ENOSPC {
			x.ewd.Store(-1)
		}
		return
	}
	delete(w.making, wd) // the entry's own watch now (inotify gives one folder one wd)
	if old := w.entries[wd]; old != nil && old != n {
		old.ext().ewd.Store(0) // one entry folder, a new node for it
	}
	w.entries[wd] = n
	x.ewd.Store(wd)
}

// entryUnwatched reports whether n's entry folder holds what the watch does not see (the
// watch limit was reached when it was looked up).
func (n *node) entryUnwatched() bool {
	x := n.x.Load()
	return x != nil && x.ewd.Load() < 0
}

// watched reports whether changes behind the mount in directory node n are told to the kernel.
func (n *node) watched() bool {
	x := n.x.Load()
	return x != nil && x.wd.Load() > 0
}

// cacheTimeout is how long the kernel may cache entries of directory node n and their
// attributes: 0 for the mount's default.
func (n *node) cacheTimeout() time.Duration {
	if !n.fsys.longCache || n.watched() {
		return 0
	}
	return cacheTimeout
}

// attrTimeout is how long the kernel may cache n's attributes: 0 for the mount's default.
func (n *node) attrTimeout() time.Duration {
	if !n.fsys.longCache || n.IsRoot() {
		return 0
	}
	if _, parent := n.Parent(); parent != nil {
		return parent.Operations().(*node).cacheTimeout()
	}
	return cacheTimeout
}

// localFS reports whether the file system of the descriptor fd is a local one, whose every
// change inotify sees; a network or FUSE file system's changes made elsewhere it does not.
func localFS(fd int) bool {
	var st unix.Statfs_t
	if unix.Fstatfs(fd, &st) != nil {
		return false
	}
	switch uint32(st.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC,
		unix.F2FS_SUPER_MAGIC, unix.BCACHEFS_SUPER_MAGIC, unix.OVERLAYFS_SUPER_MAGIC, zfsSuperMagic:
		return true
	}
	return false
}

// zfsSuperMagic is ZFS's file system type (not in x/sys/unix).
const zfsSuperMagic = 0x2fc12fc1

// forget stops watching node n (its directory's folder, its entry folder), which the kernel
// forgot.
func (w *watcher) forget(n *node) {
	x := n.x.Load()
	if x == nil {
		return
	}
	wd, ewd := x.wd.Swap(0), x.ewd.Swap(0)
	if wd <= 0 && ewd <= 0 {
		return
	}
	w.mu.Lock()
	if wd > 0 && w.dirs[wd] == n && !w.closed {
		delete(w.dirs, wd)
		w.hub.removeWatch(w, wd)
	}
	if ewd > 0 && w.entries[ewd] == n && !w.closed {
		delete(w.entries, ewd)
		w.hub.removeWatch(w, ewd)
	}
	w.mu.Unlock()
}

// ownChange is what the mount's last change of a file left: the file's change time, and
// whether someone else had changed the file before (stale: the kernel's pages of it are
// stale, whatever the change time says, until the kernel is told). seq counts the records,
// so that the watcher can tell whether the mount changed the file while it looked; ended is
// when the mount's change ended (begin says why).
type ownChange struct {
	ctime unix.Timespec
	stale bool
	seq   uint32
	ended time.Time
}

// record stores c for the file sa; the caller holds w.mu.
func (w *watcher) record(sa fs.StableAttr, c ownChange) {
	c.seq++
	w.own.put(sa, c, ownMax)
}

// changed records the change time the mount's own change of the file known as sa left.
func (w *watcher) changed(sa fs.StableAttr, ctime unix.Timespec) {
	w.mu.Lock()
	c, _ := w.own.get(sa)
	c.ctime = ctime
	w.record(sa, c)
	w.mu.Unlock()
}

// changedAt records the change time of the entry stored in dirfd, which the mount changed.
func (w *watcher) changedAt(dirfd int, stored string) {
	if e, _, err := w.f.tree.stat(dirfd, stored); err == nil {
		w.changed(w.f.stableAttr(&e), e.st.Ctim)
	}
}

// begin tells the watcher that the mount is about to change the file of n, reached as e;
// end, that it is done. In between, the file's events are checked again later. A change time
// other than the one the mount's last change left means that someone else changed the file
// since: its pages may be stale, and stay so after the mount's change. A file the mount has
// no record of is taken as the kernel holds it (else every file's first change through the
// mount would cost a notification): a change behind the mount that the watcher has not seen
// yet when the mount changes the file is then missed, as one within the same clock tick is.
// A nil watcher does nothing.
//
// A change that follows the mount's own last change of the file within ownFresh skips the
// stat, as a change within the same clock tick goes unseen (tar sets a file's times, owner
// and mode in a request each, right after its last write: a third of an untar's stats).
func (w *watcher) begin(n *node, e entry) {
	if w == nil || w.beginFresh(n) {
		return
	}
	st, err := e.stat()
	w.beginWith(n, st.Ctim, err)
}

// ownFresh is how soon after the mount's own change of a file a change of it needs no stat
// to tell whether someone else changed the file in between (begin).
const ownFresh = time.Millisecond

// beginFresh is begin without a stat, if the mount's recorded change of n's file ended within
// ownFresh and none is under way.
func (w *watcher) beginFresh(n *node) bool {
	sa := n.StableAttr()
	w.mu.Lock()
	defer w.mu.Unlock()
	c, ok := w.own.get(sa)
	if !ok || c.stale || w.busy[sa] > 0 || time.Since(c.ended) > ownFresh {
		return false
	}
	w.busy[sa]++
	w.record(sa, c)
	return true
}

// beginWith is begin for a caller that has just statted the file (its change time ctime, or
// the stat's error), sparing a second stat on the write path.
func (w *watcher) beginWith(n *node, ctime unix.Timespec, statErr error) {
	if w == nil {
		return
	}
	sa := n.StableAttr()
	w.mu.Lock()
	w.busy[sa]++
	c, ok := w.own.get(sa)
	switch {
	case statErr != nil || ok && c.ctime != ctime:
		c.stale = true
	case !ok:
		c.ctime = ctime
	}
	w.record(sa, c)
	w.mu.Unlock()
}

// end records the change time the mount's change of the file of n (see begin) left.
func (w *watcher) end(n *node, e entry) {
	if w == nil {
		return
	}
	after, err := e.stat()
	w.endWith(n, after.Ctim, err)
}

// endWith is end for a caller that has just statted the file after its change (its change
// time ctime, or the stat's error): a change of attributes answers with them.
func (w *watcher) endWith(n *node, ctime unix.Timespec, err error) {
	if w == nil {
		return
	}
	sa := n.StableAttr()
	w.mu.Lock()
	if w.busy[sa]--; w.busy[sa] <= 0 {
		delete(w.busy, sa)
	}
	c, _ := w.own.get(sa)
	if err != nil {
		c.stale = true // unknown: tell the kernel rather than miss a change
	} else {
		c.ctime, c.ended = ctime, time.Now()
	}
	w.record(sa, c)
	w.mu.Unlock()
}

// ownership is whether the mount made a file's last change: mine (and nobody changed it
// before without the kernel being told), someone else's, or not known yet because the mount
// is changing it now.
type ownership int

const (
	theirs ownership = iota
	mine
	changing
)

// owner reports whose is the last change of n's file, whose change time is now ctime, and the
// record it went by (for told).
func (w *watcher) owner(n *node, ctime unix.Timespec) (ownership, uint32) {
	sa := n.StableAttr()
	w.mu.Lock()
	defer w.mu.Unlock()
	c, ok := w.own.get(sa)
	switch {
	case w.busy[sa] > 0:
		return changing, c.seq
	case ok && !c.stale && c.ctime == ctime:
		return mine, c.seq
	}
	return theirs, c.seq
}

// seq returns the number of n's file's current record (0 for none).
func (w *watcher) seq(n *node) uint32 {
	w.mu.Lock()
	defer w.mu.Unlock()
	c, _ := w.own.get(n.StableAttr())
	return c.seq
}

// told records that the kernel was told that n's file changed, as of change time ctime,
// after its record seq was read: its pages are no longer stale. If the mount changed the file
// in between, the record stays as it is; the events of that change bring the file back.
func (w *watcher) told(n *node, ctime unix.Timespec, seq uint32) {
	sa := n.StableAttr()
	w.mu.Lock()
	if c, ok := w.own.get(sa); ok && c.seq == seq && w.busy[sa] == 0 {
		w.record(sa, ownChange{ctime: ctime, seq: c.seq})
	}
	w.mu.Unlock()
}

// eventKey is a name in a watched directory; an empty name stands for every child of the
// directory that the kernel knows (the queue overflowed: any of them may have changed).
type eventKey struct {
	wd   int32
	name string
}

// run reads events until the watcher is closed, acting on each batch. A name that differs
// from what the kernel holds is told to the kernel only if it still differs watchRecheck
// later: an event of the mount's own change comes while the change is still on its way
// (go-fuse adds a new entry to its tree, and the mount records a change time, after the
// system call that raised the event), and would otherwise cost a needless notification now
// and then, more often the busier the machine.
func (w *watcher) run() {
	defer close(w.done)
	var recheck map[eventKey]pending
	for {
		// Wait for the first event (unless names wait for their second check), let the
		// burst it starts come in for a while, then take all there is.
		if len(recheck) == 0 {
			select {
			case <-w.wake:
			case <-w.quit:
				return
			}
		}
		select {
		case <-time.After(watchSettle):
		case <-w.quit:
			return
		}
		recheck = w.process(w.takeInbox(), recheck)
	}
}

// parseEvents adds the inotify events in b to batch, a lost event as one for every name.
func parseEvents(b []byte, batch map[eventKey]uint32) {
	for len(b) >= unix.SizeofInotifyEvent {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
		end := unix.SizeofInotifyEvent + int(ev.Len)
		if end > len(b) {
			break
		}
		name := strings.TrimRight(string(b[unix.SizeofInotifyEvent:end]), "\x00")
		b = b[end:]
		switch {
		case ev.Mask&unix.IN_Q_OVERFLOW != 0:
			batch[eventKey{wd: -1}] |= contentEvents
		case ev.Mask&unix.IN_IGNORED != 0 || name != "":
			batch[eventKey{ev.Wd, name}] |= ev.Mask
		case ev.Mask&unix.IN_ATTRIB != 0:
			batch[eventKey{ev.Wd, selfEvent}] |= ev.Mask
		}
	}
}

// pending is a name found changed, to check again once due.
type pending struct {
	mask uint32
	due  time.Time
}

// process acts on a batch of events and on the names found changed before (recheck) that are
// due, and returns the names to check again.
func (w *watcher) process(batch map[eventKey]uint32, recheck map[eventKey]pending) map[eventKey]pending {
	type dirKey struct {
		eventKey
		d     *node
		final bool // checked before: tell the kernel
	}
	now := time.Now()
	next := map[eventKey]pending{}
	var keys []dirKey
	w.entryEvents(batch)
	w.mu.Lock()
	lost := batch[eventKey{wd: -1}]
	for k, mask := range batch {
		switch {
		case mask&unix.IN_IGNORED != 0: // the directory is gone, or its watch was removed
			if n := w.dirs[k.wd]; n != nil {
				delete(w.dirs, k.wd)
				n.ext().wd.CompareAndSwap(k.wd, 0)
			}
		case w.dirs[k.wd] == nil:
		case recheck[k].mask == 0:
			keys = append(keys, dirKey{eventKey: k, d: w.dirs[k.wd]})
		}
	}
	changedDirs := map[*node]bool{}
	if lost != 0 {
		// Names the kernel does not know may have come too: every listing goes.
		for wd, n := range w.dirs {
			all := eventKey{wd: wd}
			batch[all] |= lost
			keys = append(keys, dirKey{eventKey: all, d: n})
			changedDirs[n] = true
		}
	}
	for k, p := range recheck {
		batch[k] |= p.mask
		switch n := w.dirs[k.wd]; {
		case n == nil:
		case now.Before(p.due):
			next[k] = pending{batch[k], p.due}
		default:
			keys = append(keys, dirKey{eventKey: k, d: n, final: true})
		}
	}
	w.mu.Unlock()
	for _, k := range keys {
		mask := batch[k.eventKey]
		found := w.changes(k.d, k.name, mask)
		if len(found) > 0 && (!k.final || slices.ContainsFunc(found, change.busy)) {
			next[k.eventKey] = pending{mask, now.Add(watchRecheck)}
			continue
		}
		for _, c := range found {
			if c.content != nil {
				c.content.NotifyContent(0, 0) // its pages and attributes
				w.told(c.content, c.ctime, c.seq)
				continue
			}
			k.d.NotifyEntry(c.name)
			changedDirs[k.d] = true
		}
	}
	for d := range changedDirs {
		d.NotifyContent(0, 0) // its size, times and link count
	}
	return next
}

// entryEvents moves the events of entry folders in batch to the names of their entries in
// their directories' watches. An entry folder that is gone (IN_IGNORED: the mount moved the
// entry's payload into a new folder, or the entry was removed) is watched again at the
// entry's present place, if its node still has one.
func (w *watcher) entryEvents(batch map[eventKey]uint32) {
	type event struct {
		k eventKey
		n *node
	}
	var evs []event
	w.mu.Lock()
	for k, mask := range batch {
		if n := w.entries[k.wd]; n != nil {
			evs = append(evs, event{k, n})
		} else if entry, ok := w.making[k.wd]; ok {
			// Something came into a folder being made: its name is checked again as new (and
			// watched again while it is still being made).
			delete(batch, k)
			delete(w.making, k.wd)
			if mask&unix.IN_IGNORED == 0 {
				w.hub.removeWatch(w, k.wd)
			}
			batch[entry] |= unix.IN_CREATE
		}
	}
	for _, e := range evs {
		if batch[e.k]&unix.IN_IGNORED != 0 {
			delete(w.entries, e.k.wd)
			e.n.ext().ewd.CompareAndSwap(e.k.wd, 0)
		}
	}
	w.mu.Unlock()
	for _, e := range evs {
		mask := batch[e.k]
		delete(batch, e.k)
		name, parent := e.n.Parent()
		if parent == nil {
			continue
		}
		d := parent.Operations().(*node)
		if mask&unix.IN_IGNORED != 0 {
			w.watchEntryAgain(d, e.n, name)
		}
		if e.k.name == selfEvent || mask&^unix.IN_IGNORED == 0 {
			continue // the entry folder's own attributes are not the entry's
		}
		wd := d.ext().wd.Load()
		if wd <= 0 {
			continue
		}
		if stored, errno := d.storedName(name); errno == 0 {
			batch[eventKey{wd, stored}] |= mask &^ unix.IN_IGNORED
		}
	}
}

// watchEntryAgain watches the entry folder of n, entry name of directory node d, at its
// present place.
func (w *watcher) watchEntryAgain(d, n *node, name string) {
	stored, errno := d.storedName(name)
	if errno != 0 || !w.f.tree.entryFolder(stored, n.StableAttr().Mode) {
		return
	}
	dir, errno := d.dirFd()
	if errno != 0 {
		return
	}
	defer dir.close()
	w.addEntry(d, n, dir.fd, stored)
}

// change is what the kernel holds wrong in a directory: the entry name (gone, replaced, or new
// where the kernel may hold that it does not exist), or the contents of file content, found
// at change time ctime with the mount's record seq of it (watcher.owner), or not known yet
// (owner changing: the mount is changing it).
type change struct {
	name    string
	content *node
	ctime   unix.Timespec
	seq     uint32
	owner   ownership
}

// busy reports whether c cannot be told yet: the mount is changing the file.
func (c change) busy() bool { return c.owner == changing }

// changes returns what the kernel holds wrong about the entry stored as name in directory
// node d, given the events mask reported for it; an empty name checks every child the kernel
// knows.
func (w *watcher) changes(d *node, name string, mask uint32) []change {
	dir, errno := d.dirFd()
	if errno != 0 {
		return nil // gone: its parent's watch tells
	}
	defer dir.close()
	switch name {
	case "":
		var out []change
		for plain := range d.Children() {
			if stored, errno := d.storedName(plain); errno == 0 {
				out = append(out, w.check(d, dir.fd, plain, stored, mask)...)
			}
		}
		return out
	case selfEvent:
		if mask&contentEvents == 0 {
			return nil
		}
		seq := w.seq(d)
		e, err := statFd(dir.fd)
		if err != nil || !d.holds(&e) {
			return nil // the root, whose folder is not its object; or gone
		}
		return w.inPlace(d, e, seq)
	}
	stored := w.f.tree.eventEntry(name)
	if d.IsRoot() && w.f.tree.configFile(stored) {
		return nil
	}
	if mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0 && w.f.tree.beingMade(dir.fd, stored) && w.watchMaking(d, dir.fd, stored) {
		return nil
	}
	plain, ok := w.plainName(d, dir.fd, stored)
	if !ok {
		return nil
	}
	return w.check(d, dir.fd, plain, stored, mask)
}

// watchMaking watches the entry folder stored in directory node d (open as dirfd), which is
// being made (tree.beingMade), until something comes into it: its payload comes after its
// name (a sync tool makes the folder, then the files in it), and unwatched, the new entry
// would show only after the cache timeouts. It reports false, and the name is checked now,
// if the folder is whole by the time it is watched, is an entry the mount watches already,
// or cannot be watched.
func (w *watcher) watchMaking(d *node, dirfd int, stored string) bool {
	pwd := d.ext().wd.Load()
	if pwd <= 0 {
		return false
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return true
	}
	wd, err := w.addWatchLocked(procFdPath(dirfd)+"/"+stored, watchMask|unix.IN_DONT_FOLLOW)
	if err != nil || w.entries[wd] != nil || w.dirs[wd] != nil {
		// Not new: the folder of an entry the kernel knows, which lost its payload (the
		// entry was removed, its folder not yet), and is checked as such.
		w.mu.Unlock()
		return false
	}
	w.making[wd] = eventKey{pwd, stored}
	w.mu.Unlock()
	// What came before the watch raised no event on it.
	return w.f.tree.beingMade(dirfd, stored)
}

// plainName returns the name the mount shows for the cipher entry stored in directory node d
// (open as dirfd); false for the format's own files, whose changes the mount does not show.
// A long name whose .name file is gone, a conflict copy or a bad name is found among the
// children the kernel knows, by their stored names; a name that is none of them is one the
// kernel cannot hold.
func (w *watcher) plainName(d *node, dirfd int, stored string) (string, bool) {
	if key, errno := d.key(); errno == 0 {
		s := dirStream{n: d, dir: dirRef{fd: dirfd}, iv: key}
		plain, _, _, hide, err := w.f.tree.listed(&s, stored, 0)
		if hide {
			return "", false
		}
		if err == nil && !d.byChance(plain) {
			return plain, true
		}
	}
	for plain := range d.Children() {
		if s, errno := d.storedName(plain); errno == 0 && s == stored {
			return plain, true
		}
	}
	return "", false
}

// check compares entry plain of directory node d (stored in dirfd) with what the kernel
// holds, given the events mask reported for it.
func (w *watcher) check(d *node, dirfd int, plain, stored string, mask uint32) []change {
	var child *node
	if ch := d.GetChild(plain); ch != nil {
		child = ch.Operations().(*node)
	}
	if child == nil && mask&(unix.IN_CREATE|unix.IN_MOVED_TO) == 0 {
		// The kernel holds no entry for the name, and none came: at most it holds that
		// there is nothing, which stays true. This is every file "rm -rf" deletes through
		// the mount, so it costs no stat.
		return nil
	}
	var seq uint32
	if child != nil {
		seq = w.seq(child) // what the mount had done to it before the stat
	}
	e, _, err := w.f.tree.stat(dirfd, stored)
	switch {
	case err == unix.ENOENT:
		if child == nil {
			return nil // the kernel holds nothing, or that there is nothing
		}
	case err != nil:
		return nil
	case child == nil || !child.holds(&e):
	default:
		// The same file: changed in place?
		if mask&contentEvents == 0 {
			return nil
		}
		return w.inPlace(child, e, seq)
	}
	if child != nil && child.StableAttr().Mode == syscall.S_IFDIR {
		w.f.dirs.drop(child) // its cached descriptor is of the directory that was there
	}
	return []change{{name: plain}}
}

// inPlace returns the change of n's file, found as e, unless the mount made it; seq is the
// mount's record of the file before the stat (watcher.seq).
func (w *watcher) inPlace(n *node, e entryID, seq uint32) []change {
	owner, now := w.owner(n, e.st.Ctim)
	switch {
	case owner == mine:
		return nil
	case now != seq:
		owner = changing // the mount changed it after the stat: look again
	}
	return []change{{content: n, ctime: e.st.Ctim, seq: now, owner: owner}}
}
