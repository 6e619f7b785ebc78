package vfs

import (
	"encoding/binary"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The watch is fanotify's, not inotify's, because fanotify says which process made a change:
// the mount's own changes, most of the events (a file untarred through it raises four or
// more), are dropped as they are read, by their process ID, with no stat and no record of
// what the mount did. Recognizing them with inotify took a stat before and after each change
// of a file and one for each event: untarring Go's source through the mount cost the daemon
// 5.8 s of CPU with inotify, 5.2 s with fanotify, 4.3 s for the passthrough (a quiet machine,
// three rounds side by side; wall time 0.84x of the passthrough before, 0.90x after). An
// unprivileged listener sees the process ID of its own events only (others read 0), which is
// all the mount needs.
//
// One fanotify group serves every mount of the process: the kernel allows a user 128 groups
// (fs.fanotify.max_user_groups) across all of the user's programs, and a group per vault
// would take them from the desktop's other programs. The hub owns the group and one goroutine
// that reads it, and hands each event to the watchers of the directory it names: the group
// reports a directory by its file handle (FAN_REPORT_DFID_NAME), which the hub turns into a
// watch ID (wd), one per directory, shared by the watchers that mark it. A mark is removed
// only when its last watcher lets it go; the hub keeps an O_PATH descriptor of each marked
// directory for that, as fanotify removes a mark by path (so marks are bounded by the
// descriptor limit too: maxMarks). The kernel queues up to fs.fanotify.max_queued_events
// (16,384) per group; the hub reads them hubSettle after the first of a burst comes (the
// watchers batch them further), and should the queue overflow all the same, every mount
// checks every name the kernel holds in its watched directories (watcher.process): correct,
// only slower.
//
// Unprivileged fanotify with directory handles came with Linux 5.13, and marks need a file
// system that gives file handles and a file system ID (older kernels refuse tmpfs and btrfs
// subvolumes, for one). Where a directory cannot be marked, its entries are cached for
// cacheTimeout only, as where there is no watch at all.
type fanotifyHub struct {
	fd   int // the group, non-blocking
	stop int // an eventfd that leave writes to end run
	self int32
	done chan struct{}

	mu      sync.Mutex
	ids     map[string]int32     // directory (fsid and file handle) -> watch ID
	marks   map[int32]mark       // watch ID -> its mark
	owners  map[int32][]*watcher // watch ID -> the watchers that added it
	members map[*watcher]bool
	lastID  int32
	ownToo  atomic.Int32 // members that take the process's own events too (watcher.ownToo)
}

// mark is a marked directory: its key in fanotifyHub.ids and an O_PATH descriptor of it.
type mark struct {
	key string
	fd  int
}

// hubs holds the process's hub while a watcher uses it.
var hubs struct {
	mu  sync.Mutex
	hub *fanotifyHub
}

// watchMask is what a directory's mark reports: changes of its entries (directories too), and
// of the contents and attributes of its files and of itself.
const watchMask = unix.FAN_CREATE | unix.FAN_DELETE | unix.FAN_MOVED_FROM | unix.FAN_MOVED_TO |
	unix.FAN_MODIFY | unix.FAN_CLOSE_WRITE | unix.FAN_ATTRIB | unix.FAN_EVENT_ON_CHILD | unix.FAN_ONDIR

// joinHub returns the process's hub with w as a member, making the hub (and its group) if
// there is none.
func joinHub(w *watcher) (*fanotifyHub, error) {
	hubs.mu.Lock()
	defer hubs.mu.Unlock()
	h := hubs.hub
	if h == nil {
		fd, err := unix.FanotifyInit(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_DFID_NAME|unix.FAN_NONBLOCK|unix.FAN_CLOEXEC,
			unix.O_RDONLY|unix.O_CLOEXEC)
		if err != nil {
			return nil, err
		}
		stop, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
		if err != nil {
			unix.Close(fd)
			return nil, err
		}
		h = &fanotifyHub{fd: fd, stop: stop, self: int32(os.Getpid()),
			done: make(chan struct{}), ids: map[string]int32{}, marks: map[int32]mark{},
			owners: map[int32][]*watcher{}, members: map[*watcher]bool{}}
		go h.run()
		hubs.hub = h
	}
	h.mu.Lock()
	h.members[w] = true
	if w.ownToo {
		h.ownToo.Add(1)
	}
	h.mu.Unlock()
	return h, nil
}

// leave takes w out of the hub, removing the marks only it had; the last member closes the
// group.
func (h *fanotifyHub) leave(w *watcher) {
	hubs.mu.Lock()
	defer hubs.mu.Unlock()
	h.mu.Lock()
	delete(h.members, w)
	if w.ownToo {
		h.ownToo.Add(-1)
	}
	for wd := range h.owners {
		h.dropOwner(w, wd)
	}
	last := len(h.members) == 0
	h.mu.Unlock()
	if last {
		hubs.hub = nil
		unix.Write(h.stop, binary.NativeEndian.AppendUint64(nil, 1))
		<-h.done
		unix.Close(h.fd)
		unix.Close(h.stop)
	}
}

// maxMarks bounds the hub's marks by the process's descriptor limit, leaving half of it to
// the mounts' files.
var maxMarks = sync.OnceValue(func() int {
	var l unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &l) != nil {
		return 512
	}
	return int(min(l.Cur/2, 1<<30))
})

// addWatch marks for w the directory name in dirfd ("" for dirfd itself), not following a
// symlink, and returns its watch ID. It fails with ENOSPC past maxMarks or the kernel's
// limit (fs.fanotify.max_user_marks).
func (h *fanotifyHub) addWatch(w *watcher, dirfd int, name string) (int32, error) {
	if name == "" {
		name = "."
	}
	fd, err := unix.Openat(dirfd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	key, err := markKey(fd)
	if err != nil {
		unix.Close(fd)
		return 0, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	wd, ok := h.ids[key]
	if ok {
		unix.Close(fd)
	} else {
		if len(h.marks) >= maxMarks() {
			unix.Close(fd)
			return 0, unix.ENOSPC
		}
		if err := unix.FanotifyMark(h.fd, unix.FAN_MARK_ADD|unix.FAN_MARK_ONLYDIR, watchMask, fd, "."); err != nil {
			unix.Close(fd)
			return 0, err
		}
		h.lastID++
		wd = h.lastID
		h.ids[key] = wd
		h.marks[wd] = mark{key, fd}
	}
	if !slices.Contains(h.owners[wd], w) {
		h.owners[wd] = append(h.owners[wd], w)
	}
	return wd, nil
}

// markKey is the key of the directory open as fd in fanotifyHub.ids: its file system's ID and
// its file handle, as events name it.
func markKey(fd int) (string, error) {
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		return "", err
	}
	fh, _, err := unix.NameToHandleAt(fd, "", unix.AT_EMPTY_PATH)
	if err != nil {
		return "", err
	}
	return handleKey(st.Fsid.Val, fh.Type(), fh.Bytes()), nil
}

// handleKey is the key of a directory by its file system's ID and its file handle.
func handleKey(fsid [2]int32, typ int32, handle []byte) string {
	b := binary.NativeEndian.AppendUint32(nil, uint32(fsid[0]))
	b = binary.NativeEndian.AppendUint32(b, uint32(fsid[1]))
	b = binary.NativeEndian.AppendUint32(b, uint32(typ))
	return string(append(b, handle...))
}

// removeWatch lets w's watch wd go.
func (h *fanotifyHub) removeWatch(w *watcher, wd int32) {
	h.mu.Lock()
	h.dropOwner(w, wd)
	h.mu.Unlock()
}

// dropOwner takes w off the watchers of wd, and removes the mark when none is left; the caller
// holds h.mu.
func (h *fanotifyHub) dropOwner(w *watcher, wd int32) {
	ws := h.owners[wd]
	i := slices.Index(ws, w)
	if i < 0 {
		return
	}
	if len(ws) > 1 {
		h.owners[wd] = slices.Delete(ws, i, i+1)
		return
	}
	delete(h.owners, wd)
	m := h.marks[wd]
	delete(h.marks, wd)
	delete(h.ids, m.key)
	// Fails for a directory removed meanwhile: its mark goes with it.
	unix.FanotifyMark(h.fd, unix.FAN_MARK_REMOVE|unix.FAN_MARK_ONLYDIR, watchMask, m.fd, ".")
	unix.Close(m.fd)
}

// run reads events until leave stops it and hands them out. It waits in poll(2) on a thread
// of its own rather than in Go's netpoller: a descriptor there wakes the runtime's idle
// threads at every event the kernel queues, read or not, and the mount's own changes queue
// thousands a second.
func (h *fanotifyHub) run() {
	defer close(h.done)
	buf := make([]byte, 64<<10)
	fds := []unix.PollFd{{Fd: int32(h.fd), Events: unix.POLLIN}, {Fd: int32(h.stop), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, -1)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil || fds[1].Revents != 0:
			return
		}
		events, err := h.readEvents(buf)
		if err != nil {
			return // a read error would repeat for ever
		}
		h.deliver(events)
		time.Sleep(hubSettle)
	}
}

// hubSettle is how long the hub lets events queue up after a batch before it reads again:
// well below watchSettle, so no watcher waits much longer for its events, and far from the
// kernel's queue limit (16,384 events in 5 ms would be over 3 million a second). Read as they
// came, each event woke the hub on its own.
const hubSettle = 5 * time.Millisecond

// event is a change in the directory of key (empty for lost events) to its entry name ("."
// for the directory itself), of the kinds in mask (FAN_*); own if the process made it.
type event struct {
	key  string
	name string
	mask uint32
	own  bool
}

// deliver hands events to their directories' watchers.
func (h *fanotifyHub) deliver(events []event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range events {
		if e.key == "" {
			for w := range h.members {
				w.post(eventKey{wd: -1}, e.mask)
			}
			continue
		}
		wd, ok := h.ids[e.key]
		if !ok {
			continue // a mark removed meanwhile
		}
		k := eventKey{wd, e.name}
		if e.name == "." {
			k.name = selfEvent
		}
		for _, w := range h.owners[wd] {
			if !e.own || w.ownToo {
				w.post(k, e.mask)
			}
		}
	}
}

// readEvents reads the events queued on the group, leaving out those the process caused
// (unless a member takes them: watcher.ownToo).
func (h *fanotifyHub) readEvents(buf []byte) ([]event, error) {
	var events []event
	for {
		n, err := unix.Read(h.fd, buf)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return events, nil
		case err != nil:
			return events, err
		case n <= 0:
			return events, unix.EIO // fanotify never reads 0 bytes into a big enough buffer
		}
		events = parseEvents(buf[:n], h.self, h.ownToo.Load() > 0, events)
	}
}

// parseEvents adds the events in b to events, lost events as one with an empty key, and
// those that process self caused only if keepOwn.
func parseEvents(b []byte, self int32, keepOwn bool, events []event) []event {
	const metaLen = int(unsafe.Sizeof(unix.FanotifyEventMetadata{}))
	for len(b) >= metaLen {
		m := (*unix.FanotifyEventMetadata)(unsafe.Pointer(&b[0]))
		if int(m.Event_len) < metaLen || int(m.Event_len) > len(b) {
			break
		}
		info := b[m.Metadata_len:m.Event_len]
		b = b[m.Event_len:]
		own := m.Pid == self
		switch {
		case m.Mask&unix.FAN_Q_OVERFLOW != 0:
			events = append(events, event{mask: contentEvents})
		case own && !keepOwn:
		default:
			if key, name, ok := parseDirInfo(info); ok {
				events = append(events, event{key, name, uint32(m.Mask), own})
			}
		}
	}
	return events
}

// parseDirInfo reads the directory and entry name of an event's information record
// (FAN_EVENT_INFO_TYPE_DFID_NAME): a header (type, padding, length), the file system ID, a
// struct file_handle, and the name, ended by a zero byte. A record of the directory alone
// (FAN_EVENT_INFO_TYPE_DFID; Linux names an event of a directory itself ".") is the
// directory's.
func parseDirInfo(info []byte) (key, name string, ok bool) {
	const head, fsid, fh = 4, 8, 8
	if len(info) < head {
		return "", "", false
	}
	rec := info[:min(int(binary.NativeEndian.Uint16(info[2:4])), len(info))]
	if len(rec) < head+fsid+fh || info[0] != unix.FAN_EVENT_INFO_TYPE_DFID_NAME && info[0] != unix.FAN_EVENT_INFO_TYPE_DFID {
		return "", "", false
	}
	ne := binary.NativeEndian
	id := [2]int32{int32(ne.Uint32(rec[head:])), int32(ne.Uint32(rec[head+4:]))}
	size, typ := int(ne.Uint32(rec[head+fsid:])), int32(ne.Uint32(rec[head+fsid+4:]))
	rest := rec[head+fsid+fh:]
	if size > len(rest) {
		return "", "", false
	}
	name, _, _ = strings.Cut(string(rest[size:]), "\x00")
	if info[0] == unix.FAN_EVENT_INFO_TYPE_DFID {
		name = "."
	}
	return handleKey(id, typ, rest[:size]), name, true
}
