package mountmgr

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/crypto"

	"golang.org/x/sys/unix"
)

// longPath is a path of exactly 200 characters ending in name.
func longPath(root, name string) string {
	p := root + "/"
	for len(p)+len(name) < 200 {
		p += "d"
	}
	return p[:200-len(name)] + name
}

// TestLongRepliesArePaged: 500 mounts and the full 500 events, all with 200-character paths,
// make replies of several hundred KiB. They arrive whole through the client, and no line
// the daemon writes is longer than a page. (Issue 24: with one line per reply and a 64 KiB
// bound, status failed from about 150 such mounts and events from about 400 events.)
func TestLongRepliesArePaged(t *testing.T) {
	d := testDaemon(t)
	d.events = openEventLog("", DefaultEventsMax, d.log)
	for i := range 500 {
		s := StaleMount{MountPoint: longPath("/m", fmt.Sprintf("/%03d", i)), CipherDir: longPath("/c", fmt.Sprintf("/%03d", i)), Error: "EBUSY"}
		d.stale.mounts = append(d.stale.mounts, s)
		d.stale.unreported = append(d.stale.unreported, s)
	}
	for i := range 1000 {
		d.events.add(Event{Kind: EventMountFailed, CipherDir: longPath("/c", fmt.Sprintf("/%04d", i)),
			MountPoint: longPath("/m", fmt.Sprintf("/%04d", i)), Detail: "wrong password"})
	}

	a, b := socketPair(t)
	serveTest(t, d, b)
	c := &Client{path: "test", conn: a, r: bufio.NewReader(a)}
	st, err := c.Status(ctx(t))
	if err != nil {
		t.Fatalf("status of 500 mounts: %v", err)
	}
	if len(st) != 500 || st[0].MountPoint != d.stale.mounts[0].MountPoint || st[499].CipherDir != d.stale.mounts[499].CipherDir {
		t.Fatalf("status: %d mounts", len(st))
	}
	evs, err := c.Events(ctx(t), 0)
	if err != nil {
		t.Fatalf("events: %v", err)
	}
	if len(evs) != DefaultEventsMax || evs[0].Seq != 501 || evs[499].Seq != 1000 || !strings.HasSuffix(evs[499].CipherDir, "/0999") {
		t.Fatalf("events: %d, want the newest %d", len(evs), DefaultEventsMax)
	}
	report, err := c.Stale(ctx(t))
	if err != nil || len(report) != 500 {
		t.Fatalf("stale report: %d entries, %v", len(report), err)
	}
	// The connection still answers in step.
	if resp, err := c.call(ctx(t), request{Op: opPing}); err != nil || resp.PID == 0 {
		t.Fatalf("ping after the long replies: %+v %v", resp, err)
	}

	// The daemon's side: every line within a page, lists in order and complete.
	lines, err := replyLines(&response{V: ProtocolVersion, ID: 9, OK: true, Mounts: d.status(), Events: evs, PID: 42})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) < 10 {
		t.Fatalf("%d lines for a reply of 1,000 long entries", len(lines))
	}
	var all strings.Builder
	for _, l := range lines {
		if len(l) > replyPage {
			t.Errorf("a line of %d bytes, page %d", len(l), replyPage)
		}
		all.Write(l)
	}
	joined, err := readReply(bufio.NewReader(strings.NewReader(all.String())))
	if err != nil || joined.ID != 9 || joined.PID != 42 || len(joined.Mounts) != 500 || len(joined.Events) != 500 ||
		joined.Mounts[123].MountPoint != d.stale.mounts[123].MountPoint || joined.Events[321].Seq != 822 {
		t.Fatalf("joined reply: %v", err)
	}
	// A short reply is one line, as before.
	if lines, _ := replyLines(&response{V: ProtocolVersion, ID: 1, OK: true, Mounts: d.status()[:3]}); len(lines) != 1 {
		t.Errorf("a short reply took %d lines", len(lines))
	}
}

// TestProtocolVersion1Peers: the protocol changed framing in version 2. A version 1 client
// gets an error line marked version 2, which it refuses by its own check; a version 2 client
// talking to a version 1 daemon gets a clear error naming the daemon's pid (how to stop it),
// not a misread reply or a hang.
func TestProtocolVersion1Peers(t *testing.T) {
	a, b := socketPair(t)
	d := testDaemon(t)
	serveTest(t, d, b)
	a.Write([]byte(`{"v":1,"id":3,"op":"ping"}` + "\n"))
	line, err := bufio.NewReader(a).ReadBytes('\n')
	var raw struct {
		V     int
		ID    uint64
		Error *wireError
	}
	if err != nil || json.Unmarshal(line, &raw) != nil || raw.V != 2 || raw.ID != 3 || raw.Error == nil ||
		!strings.Contains(raw.Error.Msg, "protocol version 1") {
		t.Fatalf("a version 1 ping got %s (%v)", line, err)
	}

	// A version 1 daemon: it holds the lock (with its pid) and answers a request of another
	// version with an error line of its own version.
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	dir := SocketDir()
	if err := ensureSocketDir(dir); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, "daemon.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	lock.WriteString("4242\n")
	ln, err := net.Listen("unix", SocketPath())
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			bufio.NewReader(conn).ReadBytes('\n')
			conn.Write([]byte(`{"v":1,"id":1,"ok":false,"error":{"code":"daemon","msg":"client speaks protocol version 2, daemon 1"}}` + "\n"))
			conn.Close()
		}
	}()
	// Connect says so, and starts no daemon of its own beside it (which would only find the
	// lock taken).
	_, err = Connect(ctx(t))
	if !errors.Is(err, ErrDaemon) || !strings.Contains(err.Error(), "protocol version 1, this vaultui 2") ||
		!strings.Contains(err.Error(), "kill 4242") {
		t.Fatalf("a version 1 daemon: %v", err)
	}
}

// manyMountsEnv sets how many vaults TestManyMountsAndEvents mounts: 150 by default, whose
// status reply is about 100 KB (the old bound on a line was 64 KiB). Issue 24 asks for 500;
// that run takes about 30 s here (60 ms a mount), too long to run every time, so it is
// VAULTUI_TEST_MOUNTS=500 go test ./mountmgr -run ManyMounts.
const manyMountsEnv = "VAULTUI_TEST_MOUNTS"

// TestManyMountsAndEvents: the case of issue 24 through the real daemon and real FUSE mounts:
// vaults mounted at 200-character paths, and 1,000 events; status, watch, events (a reply
// and a follower's backlog) and unmount --all (which is status, unmount_all, status) work.

func TestManyMountsAndEvents(t *testing.T) {
	base := daemonEnv(t)
	c := connect(t)
	n := 150
	if v := os.Getenv(manyMountsEnv); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 || n > 999 {
			t.Fatalf("%s=%q: want 1 to 999", manyMountsEnv, v)
		}
	}
	template, _, pw := newVault(t, base, crypto.AESGCM)
	long := longPath(base, "")
	if err := os.MkdirAll(long, 0o700); err != nil {
		t.Fatal(err)
	}
	var mps []string
	t.Cleanup(func() {
		if len(mountsUnder(base)) > 0 {
			c.UnmountAll(context.Background())
		}
	})
	for i := range n {
		// Every vault its own copy of one (cheap to create, and distinct cipherdirs).
		cd := longPath(long, fmt.Sprintf("/c%03d", i))
		if err := os.CopyFS(cd, os.DirFS(template)); err != nil {
			t.Fatal(err)
		}
		mp := longPath(long, fmt.Sprintf("/m%03d", i))
		if err := os.Mkdir(mp, 0o700); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cd, MountPoint: mp, Password: pw}); err != nil {
			t.Fatalf("mount %d: %v", i, err)
		}
		mps = append(mps, mp)
	}
	// Failed mounts (a missing mount point) up to 1,000 events.
	for i := range 1000 - n {
		mp := longPath(long, fmt.Sprintf("/x%03d", i))
		if _, err := c.Mount(ctx(t), MountRequest{CipherDir: template, MountPoint: mp, Password: pw}); err == nil {
			t.Fatalf("mounted at missing %s", mp)
		}
	}
	st, err := c.Status(ctx(t))
	if err != nil {
		t.Fatalf("status of %d mounts: %v", n, err)
	}
	if len(st) != n {
		t.Fatalf("status lists %d mounts, want %d", len(st), n)
	}
	evs, err := c.Events(ctx(t), 0)
	if err != nil {
		t.Fatalf("events: %v", err)
	}
	if len(evs) != DefaultEventsMax {
		t.Fatalf("%d events, want the newest %d", len(evs), DefaultEventsMax)
	}
	// The follower gets the same backlog.
	fctx, cancel := context.WithCancel(ctx(t))
	var followed []Event
	err = c.FollowEvents(fctx, 0, func(evs []Event) { followed = evs; cancel() })
	if err != nil || len(followed) != DefaultEventsMax {
		t.Fatalf("followed %d events: %v", len(followed), err)
	}
	// So does a watcher (the terminal app's list and status --watch).
	wctx, wcancel := context.WithCancel(ctx(t))
	watched := -1
	err = c.Watch(wctx, func(ms []MountInfo) { watched = len(ms); wcancel() })
	if err != nil || watched != n {
		t.Fatalf("watch saw %d mounts: %v", watched, err)
	}
	if err := c.UnmountAll(ctx(t)); err != nil {
		t.Fatalf("unmount all: %v", err)
	}
	if st, err := c.Status(ctx(t)); err != nil || len(st) != 0 {
		t.Fatalf("after unmount all: %d mounts, %v", len(st), err)
	}
	if left := mountsUnder(base); len(left) != 0 {
		t.Fatalf("%d mounts left, first %s", len(left), left[0].MountPoint)
	}
	evs, err = c.Events(ctx(t), 0)
	if err != nil || evs[len(evs)-1].Kind != EventUnmounted {
		t.Fatalf("events after unmount all: %v", err)
	}
}
