package vfs

import (
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"golang.org/x/sys/unix"
)

// Changes behind the mount. The kernel caches entries and attributes for cacheTimeout, and a
// file's pages across opens (FOPEN_KEEP_CACHE); on a local cipherdir it drops them only when
// told (fsys.pagesTold), elsewhere also when it sees a new size or modification time.
// A sync tool changes the cipherdir behind the mount, and may keep both: rsync -t renames a
// new file over the old one, rsync --inplace -t rewrites it in place, and either restores
// the old modification time. So the mount watches, with fanotify, every cipher directory it
// has worked in (the directories whose descriptor dirFd opened, the root from the start),
// and tells the kernel what changed: NotifyEntry for a name that now holds another file or
// none or a new one (which also drops the directory's cached listing), NotifyContent for a
// file rewritten in place (its pages and attributes) and for a directory whose entries
// changed (its attributes).
//
// The mount's own changes raise no work: the hub drops them as it reads them (fanotify.go
// says how). Each event of someone else's is checked against what the mount knows rather
// than trusted: the entry is statted, and the kernel is told about a name only where it
// holds something that is now wrong, about a file whenever its contents or attributes
// changed. Events are read in batches, one every watchSettle at most, so a burst of writes
// costs one check, and a change shows through the mount within a tenth of a second or so,
// where the cache timeouts alone took up to a second and never dropped the pages of a file
// rewritten in place. A change someone else makes while the mount changes the same file is
// told as well (the file then holds what two writers without a lock leave).
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
// Where no watch can be added (the mark limit reached, no fanotify, a file system without
// file handles: fanotify.go), the kernel's caches still expire after cacheTimeout; only the
// pages of a file rewritten in place keeping size and modification time then stay stale
// until the kernel drops them. Network storage (Options.SharedStorage) caches nothing and
// needs no watcher: fanotify does not see other machines' changes anyway.

// watchSettle is how long the watcher collects events before acting on them.
const watchSettle = 10 * time.Millisecond

// contentEvents are the events that say a file's contents or attributes changed.
const contentEvents = unix.FAN_MODIFY | unix.FAN_CLOSE_WRITE | unix.FAN_ATTRIB

// selfEvent is the name under which a change of a watched directory's own attributes is
// kept (fanotify names it so; an empty name stands for every child).
const selfEvent = "."

// watcher is what a mount watches, through the process's fanotify group (fanotifyHub).
type watcher struct {
	f       *fsys
	hub     *fanotifyHub
	ownToo  bool // Options.watchOwn
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
	dirs   map[int32]*node // watch ID -> directory node
	// entries maps the watch ID of an entry folder (tree.entryFolder) to the node
	// of the entry.
	entries map[int32]*node
	// making maps the watch ID of an entry folder being made (tree.beingMade) to
	// the entry's name in its directory's watch (watchMaking).
	making   map[int32]eventKey
	limitLog sync.Once
	markLog  sync.Once
}

// newWatcher watches root's cipherdir; nil (and a log line) when fanotify is not there. It
// acts on events once started, when the mount is up.
func newWatcher(f *fsys, root *node, opts Options) *watcher {
	w := &watcher{f: f, quit: make(chan struct{}), done: make(chan struct{}), wake: make(chan struct{}, 1),
		dirs: map[int32]*node{}, entries: map[int32]*node{}, making: map[int32]eventKey{}, max: opts.maxWatches, ownToo: opts.watchOwn}
	h, err := joinHub(w)
	if err != nil {
		f.log.Printf("vfs: no fanotify (%v): changes behind the mount show after the cache timeouts", err)
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
	wd, err := w.addWatchLocked(fd, "")
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

// addWatchLocked watches the directory name in dirfd ("" for dirfd itself, not following a
// symlink), as long as the mount is under its limit (Options.maxWatches); the caller holds
// w.mu.
func (w *watcher) addWatchLocked(dirfd int, name string) (int32, error) {
	wd, err := w.hub.addWatch(w, dirfd, name)
	if err == nil && w.max > 0 && len(w.dirs)+len(w.entries)+len(w.making) >= w.max {
		w.hub.removeWatch(w, wd)
		err = unix.ENOSPC
	}
	switch err {
	case nil, unix.ENOENT, unix.ENOTDIR, unix.ELOOP:
	case unix.ENOSPC:
		w.limitLog.Do(func() {
			w.f.log.Printf("vfs: fanotify mark limit reached (fs.fanotify.max_user_marks, or half the descriptor limit): changes behind the mount in further directories show after the cache timeouts")
		})
	default:
		w.markLog.Do(func() {
			w.f.log.Printf("vfs: cannot watch a directory of the cipherdir (%v): changes behind the mount there show after the cache timeouts", err)
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
	wd, err := w.addWatchLocked(dirfd, stored)
	if err != nil {
		if err == unix.ENOSPC {
			x.ewd.Store(-1)
		}
		return
	}
	delete(w.making, wd) // the entry's own watch now (the hub gives one folder one ID)
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
// change fanotify sees; a network or FUSE file system's changes made elsewhere it does not.
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
	if x := n.x.Load(); x != nil {
		w.unwatch(n, &x.wd, w.dirs)
		w.unwatch(n, &x.ewd, w.entries)
	}
}

// unwatch stops the watch of node n whose ID id holds, kept in m (w.dirs or w.entries).
func (w *watcher) unwatch(n *node, id *atomic.Int32, m map[int32]*node) {
	wd := id.Swap(0)
	if wd <= 0 {
		return
	}
	w.mu.Lock()
	if m[wd] == n && !w.closed {
		delete(m, wd)
		w.hub.removeWatch(w, wd)
	}
	w.mu.Unlock()
}

// eventKey is a name in a watched directory; an empty name stands for every child of the
// directory that the kernel knows (the queue overflowed: any of them may have changed).
type eventKey struct {
	wd   int32
	name string
}

// run reads events until the watcher is closed, acting on each batch.
func (w *watcher) run() {
	defer close(w.done)
	for {
		// Wait for the first event, let the burst it starts come in for a while, then take
		// all there is.
		select {
		case <-w.wake:
		case <-w.quit:
			return
		}
		select {
		case <-time.After(watchSettle):
		case <-w.quit:
			return
		}
		w.process(w.takeInbox())
	}
}

// process tells the kernel what a batch of events changed.
func (w *watcher) process(batch map[eventKey]uint32) {
	type dirKey struct {
		eventKey
		d *node
	}
	var keys []dirKey
	w.entryEvents(batch)
	w.mu.Lock()
	lost := batch[eventKey{wd: -1}]
	for k := range batch {
		if d := w.dirs[k.wd]; d != nil {
			keys = append(keys, dirKey{k, d})
		}
	}
	changedDirs := map[*node]bool{}
	if lost != 0 {
		// Names the kernel does not know may have come too: every listing goes.
		for wd, n := range w.dirs {
			all := eventKey{wd: wd}
			batch[all] |= lost
			keys = append(keys, dirKey{all, n})
			changedDirs[n] = true
		}
	}
	w.mu.Unlock()
	for _, k := range keys {
		if batch[k.eventKey]&(unix.FAN_DELETE|unix.FAN_MOVED_FROM) != 0 {
			// A name went. The kernel may keep listing it after it forgot the name's node
			// (memory pressure does that), when no entry is left to tell it by.
			changedDirs[k.d] = true
		}
		for _, c := range w.changes(k.d, k.name, batch[k.eventKey]) {
			if c.content != nil {
				c.content.NotifyContent(0, 0) // its pages and attributes
				continue
			}
			k.d.NotifyEntry(c.name)
			changedDirs[k.d] = true
		}
	}
	for d := range changedDirs {
		d.NotifyContent(0, 0) // its size, times and link count
	}
}

// entryEvents moves the events of entry folders in batch to the names of their entries in
// their directories' watches.
func (w *watcher) entryEvents(batch map[eventKey]uint32) {
	type event struct {
		k eventKey
		n *node
	}
	var evs []event
	w.mu.Lock()
	for k := range batch {
		if n := w.entries[k.wd]; n != nil {
			evs = append(evs, event{k, n})
		} else if entry, ok := w.making[k.wd]; ok {
			// Something came into a folder being made: its name is checked again as new (and
			// watched again while it is still being made).
			delete(batch, k)
			delete(w.making, k.wd)
			w.hub.removeWatch(w, k.wd)
			batch[entry] |= unix.FAN_CREATE
		}
	}
	w.mu.Unlock()
	for _, e := range evs {
		mask := batch[e.k]
		delete(batch, e.k)
		name, parent := e.n.Parent()
		if parent == nil || e.k.name == selfEvent {
			continue // the entry folder's own attributes are not the entry's
		}
		d := parent.Operations().(*node)
		if wd := d.ext().wd.Load(); wd > 0 {
			if stored, errno := d.storedName(name); errno == 0 {
				batch[eventKey{wd, stored}] |= mask
			}
		}
	}
}

// moved watches the entry folder of ch, which the mount just moved to stored in directory node
// d (open as dirfd), at its new place: the move may have made the folder anew (Cryptomator
// moves a payload between a long name's folder and a short name's file). Being the mount's
// own, the move raised no event that would tell.
func (w *watcher) moved(ch *fs.Inode, d *node, dirfd int, stored string) {
	if ch == nil {
		return
	}
	n := ch.Operations().(*node)
	w.dropEntry(n)
	if w.f.tree.entryFolder(stored, n.StableAttr().Mode) {
		w.addEntry(d, n, dirfd, stored)
	}
}

// dropEntry stops watching the entry folder of n, which is no longer where it was.
func (w *watcher) dropEntry(n *node) {
	if x := n.x.Load(); x != nil {
		w.unwatch(n, &x.ewd, w.entries)
	}
}

// change is what the kernel holds wrong in a directory: the entry name (gone, replaced, or new
// where the kernel may hold that it does not exist), or the contents of file content.
type change struct {
	name    string
	content *node
}

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
		if e, err := statFd(dir.fd); mask&contentEvents == 0 || err != nil || !d.holds(&e) {
			return nil // the root, whose folder is not its object; or gone
		}
		return []change{{content: d}}
	}
	stored := w.f.tree.eventEntry(name)
	if d.IsRoot() && w.f.tree.configFile(stored) {
		return nil
	}
	if mask&(unix.FAN_CREATE|unix.FAN_MOVED_TO) != 0 && w.f.tree.beingMade(dir.fd, stored) && w.watchMaking(d, dir.fd, stored) {
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
	wd, err := w.addWatchLocked(dirfd, stored)
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
	if child == nil && mask&(unix.FAN_CREATE|unix.FAN_MOVED_TO) == 0 {
		// The kernel holds no entry for the name, and none came: at most it holds that
		// there is nothing, which stays true (a listing that still shows a name that went
		// is dropped by process).
		return nil
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
		return []change{{content: child}}
	}
	if child != nil {
		w.dropEntry(child) // its entry folder, if any, is gone or another's
		if child.StableAttr().Mode == syscall.S_IFDIR {
			w.f.dirs.drop(child) // its cached descriptor is of the directory that was there
		}
	}
	return []change{{name: plain}}
}
