package mountmgr

import (
	"bytes"
	"context"
	"errors"
	"log"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault"
)

func TestEventLogIsBoundedAndSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "events.jsonl")
	const max = 5
	l := openEventLog(path, max, testLogger(t))
	for i := 0; i < 23; i++ {
		l.add(Event{Kind: EventMounted, CipherDir: "/c", MountPoint: "/m" + string(rune('a'+i))})
	}
	evs, _ := l.since(0)
	if len(evs) != max || evs[0].Seq != 19 || evs[max-1].Seq != 23 {
		t.Fatalf("ring holds %d events, seq %d..%d; want the newest %d (19..23)", len(evs), evs[0].Seq, evs[len(evs)-1].Seq, max)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(data, []byte("\n")); n > 2*max {
		t.Errorf("file holds %d lines, more than twice the bound %d", n, max)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600", fi.Mode().Perm())
	}
	// A crash mid-line leaves a torn last line: skipped on reopen.
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"seq":24,"kind":"moun`)
	f.Close()

	l2 := openEventLog(path, max, testLogger(t))
	evs2, _ := l2.since(0)
	if len(evs2) != max || evs2[max-1].Seq != 23 || evs2[max-1].MountPoint != evs[max-1].MountPoint {
		t.Fatalf("after reopening: %+v", evs2)
	}
	l2.add(Event{Kind: EventUnmounted, MountPoint: "/x", Reason: ReasonUser})
	if evs3, _ := l2.since(23); len(evs3) != 1 || evs3[0].Seq != 24 {
		t.Fatalf("numbering does not continue after a restart: %+v", evs3)
	}
}

// TestEventLogUnsavable: an event log whose directory cannot be made goes on in memory, says
// so once in the daemon's log (not once per event) and in problem(), and is saved again once
// it can be.
func TestEventLogUnsavable(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	if err := os.WriteFile(state, nil, 0o600); err != nil { // a file where the directory goes
		t.Fatal(err)
	}
	var logged bytes.Buffer
	l := openEventLog(filepath.Join(state, "vaultui", "events.jsonl"), 5, log.New(&logged, "", 0))
	if l.problem() == "" {
		t.Error("no problem reported before the first event")
	}
	for range 10 {
		l.add(Event{Kind: EventMounted, MountPoint: "/m"})
	}
	if evs, _ := l.since(0); len(evs) != 5 || evs[4].Seq != 10 {
		t.Fatalf("in memory: %+v", evs)
	}
	if n := strings.Count(logged.String(), "cannot save"); n != 1 || !strings.Contains(l.problem(), "not a directory") {
		t.Errorf("logged %d times, problem %q:\n%s", n, l.problem(), logged.String())
	}
	os.Remove(state)
	l.add(Event{Kind: EventUnmounted, MountPoint: "/m"})
	if l.problem() != "" || !strings.Contains(logged.String(), "saved again") {
		t.Errorf("after the directory came back: problem %q, log:\n%s", l.problem(), logged.String())
	}
	if data, err := os.ReadFile(filepath.Join(state, "vaultui", "events.jsonl")); err != nil || !bytes.Contains(data, []byte(`"seq":11`)) {
		t.Errorf("not saved again: %s, %v", data, err)
	}
}

func TestEventLogEscapesAndWakesFollowers(t *testing.T) {
	l := openEventLog("", 10, testLogger(t))
	_, changed := l.since(0)
	l.add(Event{Kind: EventAuthFailed, CipherDir: "/c", Detail: "/evil\x1b[2Jname\n (block 3)"})
	select {
	case <-changed:
	default:
		t.Fatal("a follower was not woken by a new event")
	}
	evs, _ := l.since(0)
	if len(evs) != 1 || strings.ContainsAny(evs[0].Detail, "\x1b\n") || !strings.Contains(evs[0].Detail, `\x1b[2Jname\n`) {
		t.Fatalf("control characters not escaped: %q", evs[0].Detail)
	}
	if s := evs[0].Summary(); !strings.HasPrefix(s, "block failed authentication in /evil") {
		t.Errorf("summary %q", s)
	}
	// The same file again within a minute is not a new event.
	l.add(Event{Kind: EventAuthFailed, CipherDir: "/c", Detail: "/evil\x1b[2Jname\n (block 3)"})
	l.add(Event{Kind: EventAuthFailed, CipherDir: "/c", Detail: "/other (block 0)"})
	if evs, _ := l.since(0); len(evs) != 2 {
		t.Fatalf("repeated authentication failures are not rate-limited: %d events", len(evs))
	}
	l.now = func() time.Time { return time.Now().Add(2 * time.Minute) }
	l.add(Event{Kind: EventAuthFailed, CipherDir: "/c", Detail: "/evil\x1b[2Jname\n (block 3)"})
	if evs, _ := l.since(0); len(evs) != 3 {
		t.Fatalf("a failure a minute later was dropped: %d events", len(evs))
	}
}

// TestDaemonEvents: the real daemon records mounts, unmounts with their reason and blocks
// that fail authentication, streams them to a follower, and keeps them across a restart.
func TestDaemonEvents(t *testing.T) {
	base := daemonEnv(t)
	cipherdir, mp, pw := newVault(t, base, crypto.AESGCM)
	c := connect(t)

	followed := make(chan Event, 100)
	fctx, cancel := contextWithTimeout(time.Minute)
	defer cancel()
	go c.FollowEvents(fctx, 0, func(evs []Event) {
		for _, e := range evs {
			followed <- e
		}
	})
	waitEvent := func(kind, reason string) Event {
		t.Helper()
		deadline := time.After(15 * time.Second)
		for {
			select {
			case e := <-followed:
				if e.Kind == kind && e.Reason == reason {
					return e
				}
			case <-deadline:
				t.Fatalf("no %s %s event followed", kind, reason)
			}
		}
	}

	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw}); err != nil {
		t.Fatal(err)
	}
	if e := waitEvent(EventMounted, ""); e.CipherDir != cipherdir || e.MountPoint != mp {
		t.Errorf("mounted event %+v", e)
	}
	data := bytes.Repeat([]byte("x"), 3*crypto.BlockSize)
	if err := os.WriteFile(filepath.Join(mp, "f"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := c.Unmount(ctx(t), mp, false); err != nil {
		t.Fatal(err)
	}
	waitEvent(EventUnmounted, ReasonUser)

	// Corrupt the file's second block, mount again and read it.
	var cipherFile string
	ents, _ := os.ReadDir(cipherdir)
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "gocryptfs.") {
			cipherFile = e.Name()
		}
	}
	raw, err := os.ReadFile(filepath.Join(cipherdir, cipherFile))
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/2] ^= 1 // three blocks after the header: the middle is in block 1
	if err := os.WriteFile(filepath.Join(cipherdir, cipherFile), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(filepath.Join(mp, "f")); !errors.Is(err, syscall.EIO) {
		t.Fatalf("reading the corrupt file: %v, want EIO", err)
	}
	if e := waitEvent(EventAuthFailed, ""); !strings.Contains(e.Detail, "/"+cipherFile+" (block 1)") || e.CipherDir != cipherdir {
		t.Errorf("auth event %+v, want %s block 1", e, cipherFile)
	}
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: t.TempDir(), Password: []byte("wrong")}); err == nil {
		t.Fatal("second mount of the same vault worked")
	}
	waitEvent(EventMountFailed, "")

	// SIGTERM unmounts; the next daemon still has the log.
	pid := daemonPID(t)
	syscall.Kill(pid, syscall.SIGTERM)
	waitGone(t, pid)
	c2 := connect(t)
	evs, err := c2.Events(ctx(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range evs {
		kinds = append(kinds, e.Kind+"/"+e.Reason)
	}
	want := "mounted/ unmounted/user mounted/ auth_failed/ mount_failed/ unmounted/SIGTERM"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("events after a restart:\n got %s\nwant %s", got, want)
	}
	for i := 1; i < len(evs); i++ {
		if evs[i].Seq <= evs[i-1].Seq || evs[i].Time.Before(evs[i-1].Time) {
			t.Errorf("events out of order: %+v then %+v", evs[i-1], evs[i])
		}
	}
	if later, err := c2.Events(ctx(t), evs[len(evs)-1].Seq); err != nil || len(later) != 0 {
		t.Errorf("events after the last: %v, %v", later, err)
	}
}

// TestReverseMountEvents: a reverse view's events say so, so that its folder is shown as the
// plaintext one and its mount point as the encrypted view; a vault's events do not.
func TestReverseMountEvents(t *testing.T) {
	base := daemonEnv(t)
	folder, err := os.MkdirTemp(base, "plain")
	if err != nil {
		t.Fatal(err)
	}
	pw := []byte("reverse events")
	if _, err := vault.CreateReverse(context.Background(), folder, pw, vault.CreateOptions{Cipher: crypto.AESSIV, ScryptLogN: crypto.MinScryptLogN}); err != nil {
		t.Fatal(err)
	}
	mp := filepath.Join(base, "view")
	os.Mkdir(mp, 0o700)
	c := connect(t)
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: folder, MountPoint: mp, Password: pw, Reverse: true}); err != nil {
		t.Fatal(err)
	}
	if err := c.Unmount(ctx(t), mp, false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: folder, MountPoint: mp, Password: pw, Reverse: true, SharedStorage: true}); err == nil {
		t.Fatal("a reverse view took shared storage")
	}
	evs, err := c.Events(ctx(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		if e.CipherDir != folder || !e.Reverse {
			t.Errorf("event %+v: not marked reverse", e)
		}
		got = append(got, e.Summary())
	}
	want := []string{"encrypted view mounted at " + mp, "unmounted (user)"}
	if len(got) < 2 || got[0] != want[0] || got[1] != want[1] || len(got) > 3 {
		t.Errorf("events %q, want %q and a failed mount", got, want)
	}
}
