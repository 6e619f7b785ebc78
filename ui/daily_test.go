package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/registry"
)

// TestWizardEnterTakesSuggestion: enter on an empty field with a suggestion
// takes it, as the field shows it; a typed value still wins.
func TestWizardEnterTakesSuggestion(t *testing.T) {
	fb := newFake()
	tm := newTestModel(t, fb)
	tm.keys("n")
	w := tm.current.(*wizardScreen)
	wantView(t, tm, "~/Private.crypt", "Enter on an empty field takes the suggestion")
	golden(t, tm, "folder_step")
	tm.keys("enter")
	wantView(t, tm, "step 2 of 6")
	if got, want := w.forms[stepDir].value(0), expandPath("~/Private.crypt"); got != want {
		t.Fatalf("folder is %q, want the suggestion %q", got, want)
	}
	// The name was derived from the folder; clearing it and pressing enter
	// takes the name field's own suggestion.
	tm.keys("ctrl+u", "enter")
	wantView(t, tm, "step 3 of 6")
	if got := w.forms[stepName].value(0); got != "Private" {
		t.Fatalf("name is %q, want the suggestion", got)
	}
	// A typed value wins over the suggestion.
	tm.keys("esc", "esc", "ctrl+u", "/data/mine", "enter")
	wantView(t, tm, "step 2 of 6")
	if got := w.forms[stepDir].value(0); got != "/data/mine" {
		t.Fatalf("folder is %q, want the typed one", got)
	}
	// The name taken from the old suggestion follows the new folder.
	if got := w.forms[stepName].value(0); got != "mine" {
		t.Fatalf("name is %q after the folder changed, want mine", got)
	}
}

// TestF1HelpFromForms: in a text field `?` is text, F1 opens the full help,
// and the bar says so.
func TestF1HelpFromForms(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	tm := newTestModel(t, fb)
	tm.keys("m")
	s := tm.current.(*mountScreen)
	wantView(t, tm, "F1 all keys", "ctrl+c quit")
	notInView(t, tm, "? all keys")
	tm.keys("?")
	if s.form.value(0) != "?" || tm.fullHelp {
		t.Fatalf("? in the password field: value %q, full help %v", s.form.value(0), tm.fullHelp)
	}
	tm.send(tea.KeyMsg{Type: tea.KeyF1})
	if !tm.fullHelp {
		t.Fatal("F1 did not open the full help")
	}
	wantView(t, tm, "next field", "F1")
	tm.send(tea.KeyMsg{Type: tea.KeyF1})
	if tm.fullHelp {
		t.Fatal("F1 did not close the full help")
	}
	// Outside fields the bar keeps offering ?.
	tm.keys("esc")
	wantView(t, tm, "? all keys")
}

// TestSpeedResultIsCached: an app that finds a remembered speed test (app.Speed's cache,
// which "vaultui speed" and "init --cipher auto" share) shows it with its age instead of
// measuring, and r measures again. The cache itself is tested in package app.
func TestSpeedResultIsCached(t *testing.T) {
	fb := newFake()
	fb.cachedSpeed = fakeSpeed()
	fb.cachedSpeed.Cached = true
	tm := newTestModel(t, fb)
	tm.c.now = func() time.Time { return testNow.Add(50 * time.Hour) }
	tm.run(tm.loadSpeed())
	tm.keys("s")
	if fb.speedCalls != 0 {
		t.Fatalf("the cached test was measured again (%d runs)", fb.speedCalls)
	}
	wantView(t, tm, "Recommended: AEGIS-256X2", "7400 MB/s", "measured 2d ago", "r runs it again")
	golden(t, tm, "cached")
	tm.keys("r")
	if fb.speedCalls != 1 {
		t.Fatalf("r ran %d tests, want 1", fb.speedCalls)
	}
}

// TestNarrowWrapsAndPluralises: at 60 columns sentences wrap instead of
// being cut, and one vault is "1 vault".
func TestNarrowWrapsAndPluralises(t *testing.T) {
	fb := newFake()
	fb.vaults = []Vault{{Entry: registry.Entry{Name: "work", CipherDir: "/data/work.crypt", MountPoint: "/home/u/Vaults/work"}, Cipher: "AES-256-GCM"}}
	tm := newTestModel(t, fb)
	tm.send(tea.WindowSizeMsg{Width: 60, Height: 24})
	wantView(t, tm, "1 vault, 0 mounted")
	msg := "Could not do the thing because the daemon said something long that must be read to the end."
	tm.list.Update(backMsg{status: msg})
	v := tm.View()
	checkFits(t, v, 60, 24)
	flat := strings.Join(strings.Fields(v), " ")
	if !strings.Contains(flat, msg) {
		t.Errorf("status cut at 60 columns:\n%s", v)
	}
	if got := plural(1, "file or directory", "files and directories"); got != "1 file or directory" {
		t.Errorf("plural(1) = %q", got)
	}
	if got := plural(3, "vault", "vaults"); got != "3 vaults" {
		t.Errorf("plural(3) = %q", got)
	}
}

func fakeEvents() []app.NamedEvent {
	at := func(min int) time.Time { return testNow.Add(time.Duration(-min) * time.Minute) }
	return []app.NamedEvent{
		{Event: mountmgr.Event{Seq: 1, Time: at(50), Kind: "mounted", CipherDir: "/data/work.crypt", MountPoint: "/home/u/Vaults/work"}},
		{Event: mountmgr.Event{Seq: 2, Time: at(40), Kind: "auth_failed", CipherDir: "/data/work.crypt", Detail: `/gM\x1b[2Jst (block 1)`}},
		{Event: mountmgr.Event{Seq: 3, Time: at(30), Kind: "unmounted", CipherDir: "/data/work.crypt", MountPoint: "/home/u/Vaults/work", Reason: "idle"}},
		{Event: mountmgr.Event{Seq: 4, Time: at(20), Kind: "mount_failed", CipherDir: "/tmp/adhoc.crypt", Detail: "bad mount point"}},
	}
}

// TestEventsScreenAndRows: e opens the event log, newest first; each vault's
// row shows its newest event with its age.
func TestEventsScreenAndRows(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	tm := newTestModel(t, fb)
	tm.send(eventsMsg(fakeEvents()))
	wantView(t, tm, "unmounted (idle) · 30m ago")
	golden(t, tm, "list")
	tm.keys("e")
	if _, ok := tm.current.(*eventsScreen); !ok {
		t.Fatalf("e opened %T", tm.current)
	}
	v := tm.View()
	iIdle, iMounted := strings.Index(v, "unmounted (idle)"), strings.Index(v, "mounted at")
	if iIdle < 0 || iMounted < 0 || iIdle > iMounted {
		t.Errorf("events not newest first:\n%s", v)
	}
	wantView(t, tm, "work", "/tmp/adhoc.crypt")
	golden(t, tm, "events")
	// The escaped control sequence shows as text, in the row and whole on enter.
	tm.keys("j", "j", "enter")
	wantView(t, tm, `block failed authentication in /gM\x1b[2Jst (block 1)`)
	tm.keys("esc")
	// A repeated event (a reconnect) is not shown twice; new ones arrive live.
	tm.send(eventsMsg([]app.NamedEvent{fakeEvents()[3], {Event: mountmgr.Event{Seq: 5, Time: testNow, Kind: "mounted", CipherDir: "/data/photos.crypt", MountPoint: "/home/u/Vaults/photos"}}}))
	if n := len(tm.c.events); n != 5 {
		t.Fatalf("app holds %d events, want 5", n)
	}
	wantView(t, tm, "photos")
	tm.keys("esc")
	if tm.current != nil {
		t.Fatalf("esc left %T open", tm.current)
	}
	// The app keeps a bounded number.
	var many []app.NamedEvent
	for i := 0; i < eventsKept+50; i++ {
		many = append(many, app.NamedEvent{Event: mountmgr.Event{Seq: uint64(10 + i), Time: testNow, Kind: "mounted", MountPoint: "x"}})
	}
	tm.send(eventsMsg(many))
	if n := len(tm.c.events); n != eventsKept || tm.c.events[n-1].Seq != uint64(10+eventsKept+49) {
		t.Fatalf("app holds %d events, want the newest %d", n, eventsKept)
	}
}

func TestEventsScreenEmpty(t *testing.T) {
	tm := newTestModel(t, newFake())
	tm.keys("e")
	wantView(t, tm, "No events yet.")
}

// TestEventsScreenError: an event log that cannot be read shows why, not "No events yet"
// (issue 24: a reply over the old line bound looked like an empty log); once the stream works
// again, the error goes.
func TestEventsScreenError(t *testing.T) {
	tm := newTestModel(t, newFake())
	tm.keys("e")
	tm.Update(eventsEnded{err: fmt.Errorf("%w: ctl.sock: line longer than 65536 bytes", ErrDaemon)})
	v := tm.View()
	if !strings.Contains(v, "Could not read the event log") || !strings.Contains(v, "65536 bytes") ||
		strings.Contains(v, "No events yet") {
		t.Fatalf("events screen after a failed read:\n%s", v)
	}
	tm.send(eventsMsg(fakeEvents()))
	if v := tm.View(); strings.Contains(v, "Could not read") || !strings.Contains(v, "unmounted (idle)") {
		t.Fatalf("events screen once the log is read:\n%s", v)
	}
}

// TestAutomountToggle: A flips the selected vault's automount option in the
// registry, and the row shows it.
func TestAutomountToggle(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	tm := newTestModel(t, fb)
	tm.keys("A")
	if !fb.vaults[0].MountAtStart {
		t.Fatal("A did not turn automount on")
	}
	wantView(t, tm, "work: automount on", "automount")
	golden(t, tm, "on")
	tm.keys("A")
	if fb.vaults[0].MountAtStart {
		t.Fatal("A again did not turn it off")
	}
	wantView(t, tm, "work: automount off.")
}

// TestMountRemembersPassword: the mount screen's checkbox stores the
// password; the next mount uses it on enter; a stored password that stopped
// working is reported and asked once, and the typed one replaces it.
func TestMountRemembersPassword(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	tm := newTestModel(t, fb)
	tm.keys("m")
	wantView(t, tm, "Keyring", "[ ]")
	tm.keys("hunter22", "tab", "tab", "tab", " ")
	wantView(t, tm, "remember the password in the desktop keyring")
	golden(t, tm, "remember")
	tm.keys("enter")
	if got := fb.stored["/data/work.crypt"]; got != "hunter22" {
		t.Fatalf("stored %q", got)
	}
	wantView(t, tm, "work mounted at /home/u/Vaults/work. Password stored in the keyring.")

	fb.mounts, tm.c.mounts = nil, nil
	tm.keys("m")
	wantView(t, tm, "stored in the keyring: enter mounts with it", "[x]")
	golden(t, tm, "stored")
	tm.keys("enter")
	if last := fb.mountReqs[len(fb.mountReqs)-1]; last.Password != nil {
		t.Fatalf("mount request %+v, want one from the keyring", last)
	}
	wantView(t, tm, "work mounted at")

	// The password changed elsewhere.
	fb.mounts, tm.c.mounts = nil, nil
	fb.password = "new password"
	tm.keys("m", "enter")
	wantView(t, tm, "The password stored in the keyring does not unlock this vault")
	n := len(fb.mountReqs)
	tm.keys("enter") // an empty field no longer means the keyring: no second try
	if len(fb.mountReqs) != n {
		t.Fatal("enter retried the stored password")
	}
	wantView(t, tm, "Type the vault's password.")
	tm.keys("new password", "enter")
	if got := fb.stored["/data/work.crypt"]; got != "new password" {
		t.Fatalf("the typed password did not replace the stored one: %q", got)
	}
}
