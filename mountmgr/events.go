package mountmgr

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/vaultui/vaultui/internal/atomicfile"
	"github.com/vaultui/vaultui/internal/termsafe"
	"github.com/vaultui/vaultui/internal/userfile"
)

// Event kinds: what happened to a mount.
const (
	EventMounted     = "mounted"
	EventMountFailed = "mount_failed"
	EventUnmounted   = "unmounted"
	// EventStale: a mount left by a daemon that died was found; Detail says whether it was
	// cleaned up.
	EventStale = "stale"
	// EventAuthFailed: a block of the file at Detail (its path in the cipherdir, cipher names)
	// failed authentication, so reads of it fail with EIO (read as zeros in a recovery mount).
	EventAuthFailed = "auth_failed"
)

// Why a vault was unmounted (Event.Reason of EventUnmounted).
const (
	ReasonUser     = "user"
	ReasonLazy     = "lazy"     // by the user, detached while in use
	ReasonIdle     = "idle"     // no file activity for its idle timeout
	ReasonShutdown = "SIGTERM"  // the daemon was stopped
	ReasonExternal = "external" // fusermount -u or umount from outside vaultui
	ReasonReleased = "released" // a detached mount's last open file was closed
)

// Event is one entry of the daemon's event log. Text fields are escaped (termsafe.Escape)
// when the event is recorded: cipher paths are names an attacker with write access to the
// cipherdir chooses, and they end up on terminals.
type Event struct {
	// Seq numbers events from 1, increasing, across daemon restarts.
	Seq        uint64    `json:"seq"`
	Time       time.Time `json:"time"`
	Kind       string    `json:"kind"`
	CipherDir  string    `json:"cipherdir,omitempty"`
	MountPoint string    `json:"mountpoint,omitempty"`
	Reason     string    `json:"reason,omitempty"`
	// Detail is the error of a failed mount or cleanup, or the cipher path of a failed block.
	Detail string `json:"detail,omitempty"`
	// Reverse: the mount is a reverse view, so CipherDir is the plaintext folder and
	// MountPoint its encrypted view (the other way round from a vault's).
	Reverse bool `json:"reverse,omitempty"`
}

// Summary describes the event in a few words, without its vault: "unmounted (idle)".
func (e Event) Summary() string {
	switch e.Kind {
	case EventMounted:
		if e.Reverse {
			return "encrypted view mounted at " + e.MountPoint
		}
		return "mounted at " + e.MountPoint
	case EventMountFailed:
		return "mount failed: " + e.Detail
	case EventUnmounted:
		if e.Reason != "" {
			return "unmounted (" + e.Reason + ")"
		}
		return "unmounted"
	case EventStale:
		return "stale mount at " + e.MountPoint + ": " + e.Detail
	case EventAuthFailed:
		return "block failed authentication in " + e.Detail
	}
	s := e.Kind
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// EventsPath returns the event log file: $XDG_STATE_HOME/vaultui/events.jsonl, beside the
// daemon's log.
func EventsPath() (string, error) {
	p, err := LogPath()
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(p), "events.jsonl"), nil
}

// DefaultEventsMax is how many events the daemon keeps, in memory and on disk.
const DefaultEventsMax = 500

// eventLog is the daemon's bounded event log: a ring of the newest max events, mirrored to a
// file of JSON lines so it survives a restart. New events are appended to the file; when it
// holds twice max lines it is rewritten with the newest max (atomicfile.Replace), so it
// stays bounded without a rewrite per event. Followers wait on changed, which is closed and
// replaced on every event.
type eventLog struct {
	mu      sync.Mutex
	max     int
	events  []Event // oldest first, at most max
	seq     uint64
	path    string // "" keeps the log in memory only
	lines   int    // lines in the file
	changed chan struct{}
	log     *log.Logger
	now     func() time.Time
	// saveErr is why the file cannot be written (the log is then kept in memory only), logged
	// once rather than per event; nil once a write works again.
	saveErr error
	// authSeen rate-limits EventAuthFailed: one per cipher path and mount a minute, so a
	// program retrying a corrupt file does not push everything else out.
	authSeen map[string]time.Time
}

// maxEventFile bounds how much of the file is read at start (a file someone else grew).
const maxEventFile = 4 << 20

// openEventLog loads the newest max events of path (a missing file is an empty log; lines that
// do not parse, such as one cut short by a crash, are skipped and logged).
func openEventLog(path string, max int, lg *log.Logger) *eventLog {
	l := &eventLog{max: max, path: path, changed: make(chan struct{}), log: lg, now: time.Now, authSeen: map[string]time.Time{}}
	if path == "" {
		return l
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		l.saveFailed(err)
	}
	f, err := userfile.Open(path) // a FIFO put there would hang the daemon's start
	if err != nil {
		if !os.IsNotExist(err) {
			lg.Printf("event log %s: %v; starting empty", path, err)
		}
		return l
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > maxEventFile {
		f.Seek(fi.Size()-maxEventFile, io.SeekStart)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	bad := 0
	for sc.Scan() {
		l.lines++
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Seq == 0 || e.Kind == "" {
			bad++
			continue
		}
		l.events = append(l.events, escapeEvent(e))
		if len(l.events) > max {
			l.events = l.events[len(l.events)-max:]
		}
		if e.Seq > l.seq {
			l.seq = e.Seq
		}
	}
	if bad > 0 {
		lg.Printf("event log %s: skipped %d unreadable lines", path, bad)
	}
	return l
}

// escapeEvent escapes the text fields that reach terminals.
func escapeEvent(e Event) Event {
	e.Kind = termsafe.Escape(e.Kind)
	e.CipherDir = termsafe.Escape(e.CipherDir)
	e.MountPoint = termsafe.Escape(e.MountPoint)
	e.Reason = termsafe.Escape(e.Reason)
	e.Detail = termsafe.Escape(e.Detail)
	return e
}

// add records e (numbered and timed here) and wakes the followers.
func (l *eventLog) add(e Event) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if e.Kind == EventAuthFailed {
		k := e.CipherDir + "\x00" + e.Detail
		if t, ok := l.authSeen[k]; ok && now.Sub(t) < time.Minute {
			return
		}
		l.authSeen[k] = now
		if len(l.authSeen) > l.max {
			clear(l.authSeen)
		}
	}
	l.seq++
	e.Seq, e.Time = l.seq, now
	e = escapeEvent(e)
	l.events = append(l.events, e)
	if len(l.events) > l.max {
		l.events = append(l.events[:0:0], l.events[len(l.events)-l.max:]...)
	}
	l.persist(e)
	close(l.changed)
	l.changed = make(chan struct{})
}

// persist appends e to the file, or rewrites the file with the ring when it has grown to
// twice max lines. The caller holds l.mu. A failure keeps the log in memory only (see
// saveFailed) until a later write works.
func (l *eventLog) persist(e Event) {
	if l.path == "" {
		return
	}
	if err := l.write(e); err != nil {
		l.saveFailed(err)
		return
	}
	if l.saveErr != nil {
		l.log.Printf("event log %s: saved again", l.path)
		l.saveErr = nil
	}
}

func (l *eventLog) write(e Event) error {
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return err
	}
	if l.lines+1 >= 2*l.max {
		var buf bytes.Buffer
		for _, ev := range l.events {
			line, _ := json.Marshal(ev)
			buf.Write(append(line, '\n'))
		}
		if err := atomicfile.Replace(atomicfile.OS{}, l.path, l.path+".tmp", buf.Bytes(), 0o600); err != nil {
			return err
		}
		l.lines = len(l.events)
		return nil
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	line, _ := json.Marshal(e)
	if _, err := f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("%s: %w", l.path, err)
	}
	l.lines++
	return nil
}

// saveFailed records that the file cannot be written: the log goes on in memory, and the
// daemon's log says so once (and again only when the reason changes).
func (l *eventLog) saveFailed(err error) {
	if l.saveErr == nil || l.saveErr.Error() != err.Error() {
		l.log.Printf("event log: cannot save %s: %v; keeping events in memory only", l.path, err)
	}
	l.saveErr = err
}

// problem is why the event log is not being saved, or "".
func (l *eventLog) problem() string {
	if l == nil {
		return ""
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.saveErr == nil {
		return ""
	}
	return l.saveErr.Error()
}

// since returns the events numbered after seq and a channel closed at the next event.
func (l *eventLog) since(seq uint64) ([]Event, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Event
	for _, e := range l.events {
		if e.Seq > seq {
			out = append(out, e)
		}
	}
	return out, l.changed
}

// eventUnmounted records that the vault at mountPoint is gone, and why.
func (d *daemon) eventUnmounted(cipherDir, mountPoint, why string, reverse bool) {
	d.events.add(Event{Kind: EventUnmounted, CipherDir: cipherDir, MountPoint: mountPoint, Reason: why, Reverse: reverse})
}

// authFailedHook is the vfs.Options.AuthFailed of the mount of cipherDir at mountPoint.
func (d *daemon) authFailedHook(cipherDir, mountPoint string) func(string, uint64) {
	return func(cipherPath string, block uint64) {
		d.events.add(Event{Kind: EventAuthFailed, CipherDir: cipherDir, MountPoint: mountPoint,
			Detail: fmt.Sprintf("%s (block %d)", cipherPath, block)})
	}
}

// unmountFor unmounts mp (see unmount) and records why when it worked.
func (d *daemon) unmountFor(mp string, lazy bool, why string) error {
	d.mu.Lock()
	cipherDir, where, reverse := "", mp, false
	if m := d.mounts[mp]; m != nil {
		cipherDir, where, reverse = m.info.CipherDir, m.info.MountPoint, m.info.Reverse
	}
	d.mu.Unlock()
	err := d.unmount(mp, lazy)
	if err == nil {
		d.eventUnmounted(cipherDir, where, why, reverse)
	}
	return err
}

// eventKeepalive is how often a follower with nothing new gets an empty answer, so the
// daemon notices a client that went away.
const eventKeepalive = 10 * time.Second

// followEvents streams the events after req.After to conn: what is there, then each new one,
// until the client goes away or the daemon stops.
func (d *daemon) followEvents(conn net.Conn, id, after uint64) {
	t := time.NewTicker(eventKeepalive)
	defer t.Stop()
	first := true
	for {
		evs, changed := d.events.since(after)
		if len(evs) > 0 || first {
			if err := d.send(conn, &response{ID: id, Events: evs}); err != nil {
				return
			}
			if len(evs) > 0 {
				after = evs[len(evs)-1].Seq
			}
			first = false
		}
		select {
		case <-d.quit:
			return
		case <-changed:
		case <-t.C:
			if err := d.send(conn, &response{ID: id}); err != nil {
				return
			}
		}
	}
}
