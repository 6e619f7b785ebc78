package ui

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/registry"
	"github.com/vaultui/vaultui/vault"
)

// golden compares the view with testdata/<test>/<name>.golden (-update
// rewrites it) and checks it fits the 80x24 terminal.
func golden(t *testing.T, tm *testModel, name string) {
	t.Helper()
	v := tm.View()
	checkFits(t, v, 80, 24)
	t.Run(name, func(t *testing.T) { teatest.RequireEqualOutput(t, []byte(v)) })
}

func checkFits(t *testing.T, v string, w, h int) {
	t.Helper()
	lines := strings.Split(v, "\n")
	if len(lines) != h {
		t.Errorf("view has %d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if lipgloss.Width(l) > w {
			t.Errorf("line %d is %d cells wide, more than %d: %q", i+1, lipgloss.Width(l), w, l)
		}
	}
}

func wantView(t *testing.T, tm *testModel, parts ...string) {
	t.Helper()
	v := tm.View()
	for _, p := range parts {
		if !strings.Contains(v, p) {
			t.Errorf("view lacks %q:\n%s", p, v)
		}
	}
}

func notInView(t *testing.T, tm *testModel, parts ...string) {
	t.Helper()
	v := tm.View()
	for _, p := range parts {
		if strings.Contains(v, p) {
			t.Errorf("view has %q:\n%s", p, v)
		}
	}
}

func twoVaults(fb *fakeBackend) {
	fb.vaults = []Vault{
		{Entry: registry.Entry{Name: "work", CipherDir: "/data/work.crypt", MountPoint: "/home/u/Vaults/work"}, Cipher: "AEGIS-256X2"},
		{Entry: registry.Entry{Name: "photos", CipherDir: "/data/photos.crypt", MountPoint: "/home/u/Vaults/photos"}, Cipher: "AES-256-GCM"},
	}
}

func mountWork(fb *fakeBackend, readBps, writeBps float64) []mountmgr.MountInfo {
	return []mountmgr.MountInfo{{CipherDir: "/data/work.crypt", MountPoint: "/home/u/Vaults/work", Cipher: "AEGIS-256X2",
		Since: testNow.Add(-5 * time.Minute), Stats: mountmgr.Stats{ReadBps: readBps, WriteBps: writeBps,
			BytesRead: 12e6, BytesWritten: 34e6, Ops: 1234, OpsPerSec: 56}}}
}

func TestEmptyListInvites(t *testing.T) {
	tm := newTestModel(t, newFake())
	wantView(t, tm, "No vaults yet", "n", "a to add an existing gocryptfs or Cryptomator vault")
	golden(t, tm, "empty")
}

func TestListShowsStateAndThroughput(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	fb.vaults = append(fb.vaults, Vault{Entry: registry.Entry{Name: "old", CipherDir: "/data/old.crypt", MountPoint: "/home/u/Vaults/old"}, Cipher: "AES-256-GCM"})
	tm := newTestModel(t, fb)
	ms := mountWork(fb, 1.2e6, 5.8e6)
	ms = append(ms, mountmgr.MountInfo{CipherDir: "/data/old.crypt", MountPoint: "/home/u/Vaults/old", Stale: true})
	tm.send(mountsMsg(ms))
	wantView(t, tm, "work", "AEGIS-256X2", "● mounted at /home/u/Vaults/work", "read 1.2 MB/s", "write 5.8 MB/s",
		"photos", "○ locked · /data/photos.crypt", "✗ stale mount at /home/u/Vaults/old", "3 vaults, 1 mounted")
	golden(t, tm, "states")
}

func TestListShowsUnregisteredMounts(t *testing.T) {
	fb := newFake()
	tm := newTestModel(t, fb)
	tm.send(mountsMsg([]mountmgr.MountInfo{{CipherDir: "/tmp/adhoc.crypt", MountPoint: "/tmp/adhoc", Cipher: "AES-256-GCM", Stats: mountmgr.Stats{WriteBps: 2e3}}}))
	wantView(t, tm, "adhoc.crypt", "mounted at /tmp/adhoc", "write 2.0 kB/s")
}

func TestListNavigationAndFilter(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	tm := newTestModel(t, fb)
	if v, _ := tm.list.selected(); v.Name != "work" {
		t.Fatalf("selected %q first, want work", v.Name)
	}
	tm.keys("j")
	if v, _ := tm.list.selected(); v.Name != "photos" {
		t.Fatalf("after j selected %q, want photos", v.Name)
	}
	tm.keys("down") // stays on the last one
	tm.keys("k")
	if v, _ := tm.list.selected(); v.Name != "work" {
		t.Fatalf("after k selected %q, want work", v.Name)
	}
	tm.keys("/", "pho")
	if !tm.list.typing() {
		t.Fatal("filter does not have the keyboard")
	}
	wantView(t, tm, "/ pho", "photos")
	notInView(t, tm, "work")
	tm.keys("enter")
	if tm.list.typing() {
		t.Fatal("enter did not leave the filter")
	}
	if v, _ := tm.list.selected(); v.Name != "photos" {
		t.Fatalf("filtered selection is %q, want photos", v.Name)
	}
	tm.keys("esc")
	wantView(t, tm, "work", "photos")
	// q inside the filter is text, not quit.
	tm.keys("/", "q")
	if tm.quitting {
		t.Fatal("q in the filter quit the app")
	}
	wantView(t, tm, "No vault matches")
}

// TestFastTyping sends keys that arrived in one read ("jf" then the
// password) as a terminal delivers them: each rune must still act, and the
// password must land in the prompt the first key opened.
func TestFastTyping(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	tm := newTestModel(t, fb)
	tm.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("jmhunter22")})
	s, ok := tm.current.(*mountScreen)
	if !ok {
		t.Fatalf("\"jm...\" opened %T, want the mount prompt", tm.current)
	}
	if s.v.Name != "photos" || s.form.value(0) != "hunter22" {
		t.Fatalf("mount prompt for %q holds %q", s.v.Name, s.form.value(0))
	}
	// A paste stays one message and goes to the focused input whole.
	tm.keys("ctrl+u")
	tm.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("pasted pw"), Paste: true})
	if got := s.form.value(0); got != "pasted pw" {
		t.Fatalf("paste gave %q", got)
	}
}

func TestSpeedBarsGrowAsResultsArrive(t *testing.T) {
	tm := newTestModel(t, newFake())
	// Drive the stream by hand to see every intermediate state.
	tm.c.speed = speedState{run: 7, running: true}
	tm.keys("s")
	wantView(t, tm, "Measuring each cipher", "waiting…")
	// The first round: GCM first (the baseline), then AEGIS.
	full := fakeSpeed()
	r := app.SpeedReport{HasAES: true}
	for _, c := range full.Ciphers {
		r.Ciphers = append(r.Ciphers, app.CipherSpeed{Cipher: c.Cipher})
	}
	r.Ciphers[1].Samples, r.Ciphers[1].MBps = []float64{2400}, 2400
	tm.send(speedProgress{run: 7, report: r})
	wantView(t, tm, "2400 MB/s 1.00x")
	if strings.Contains(tm.View(), "7400") {
		t.Fatal("AEGIS shown before its result arrived")
	}
	old := r
	old.Ciphers = []app.CipherSpeed{{Cipher: crypto.AEGIS, Samples: []float64{1}, MBps: 1}}
	tm.send(speedProgress{run: 6, report: old}) // an old run: ignored
	r.Ciphers = append([]app.CipherSpeed(nil), r.Ciphers...)
	r.Ciphers[0].Samples, r.Ciphers[0].MBps = []float64{7400}, 7400
	tm.send(speedProgress{run: 7, report: r})
	wantView(t, tm, "7400 MB/s  3.1x")
	r.Ciphers[3].Err = errors.New("not available")
	tm.send(speedProgress{run: 7, report: r})
	wantView(t, tm, "failed: not available")
	r.Writing = true
	tm.send(speedProgress{run: 7, report: r})
	wantView(t, tm, "Measuring a write through vaultui's write path")
	tm.send(speedDone{run: 7, report: full})
	// The recommendation says in a line what it gains and in one what it costs; d tells what
	// it measured and how stable it was.
	wantView(t, tm, "Recommended: AEGIS-256X2", "AEGIS-256X2 is 3.1x as fast as AES-256-GCM",
		"A vault with AEGIS-256X2 opens only in vaultui.", "★", "d: how this was measured")
	notInView(t, tm, "±")
	golden(t, tm, "speed")
	tm.resize(160, 45)
	tm.keys("d")
	wantView(t, tm, "3.1x ±1% (median of 3", "1.10x ±2%", "for the cipher alone: the disk", "CPU per GiB", "Choose AES-256-GCM")
}

func TestSpeedTestRunsOnceAndIsRemembered(t *testing.T) {
	fb := newFake()
	tm := newTestModel(t, fb)
	tm.keys("s")
	wantView(t, tm, "Recommended: AEGIS-256X2")
	tm.keys("esc", "s")
	if fb.speedCalls != 1 {
		t.Fatalf("speed test ran %d times, want 1 (remembered)", fb.speedCalls)
	}
	tm.keys("r")
	if fb.speedCalls != 2 {
		t.Fatalf("r ran the speed test %d times in all, want 2", fb.speedCalls)
	}
	// n opens the wizard with the recommendation preselected.
	tm.keys("n")
	if _, ok := tm.current.(*wizardScreen); !ok {
		t.Fatalf("n on the speed screen opened %T", tm.current)
	}
}

// wizardTo runs the wizard up to the password step.
func wizardTo(t *testing.T, tm *testModel) *wizardScreen {
	t.Helper()
	tm.keys("n")
	w, ok := tm.current.(*wizardScreen)
	if !ok {
		t.Fatalf("n opened %T", tm.current)
	}
	tm.keys("/data/new.crypt", "enter")
	wantView(t, tm, "step 2 of 6", "new") // name defaults to the folder's
	tm.keys("enter")
	wantView(t, tm, "step 3 of 6", "/home/u/Vaults/new")
	tm.keys("enter")
	wantView(t, tm, "step 4 of 6")
	return w
}

func TestWizardCreatesVault(t *testing.T) {
	fb := newFake()
	tm := newTestModel(t, fb)
	w := wizardTo(t, tm)
	// The speed test ran in the background; its recommendation is preselected.
	if got := w.ciphers[w.cipherCursor].Cipher; got != aegis {
		t.Fatalf("preselected %v, want the recommendation %v", got, aegis)
	}
	wantView(t, tm, "7400 MB/s", "★ recommended")
	golden(t, tm, "cipher_step")
	tm.keys("j") // choose AES-256-GCM instead
	tm.keys("enter")
	wantView(t, tm, "step 5 of 6")
	tm.keys("correct horse battery", "enter")
	wantView(t, tm, "strength:")
	tm.keys("correct horse battery", "enter")
	wantView(t, tm, "step 6 of 6", "AES-256-GCM")
	tm.keys("ctrl+u", "12", "tab", "tab", " ", "tab", "ctrl+u", "200", "enter")
	if len(fb.created) != 1 {
		t.Fatalf("created %d vaults, want 1", len(fb.created))
	}
	want := createCall{NewVault: app.NewVault{Name: "new", CipherDir: "/data/new.crypt", MountPoint: "/home/u/Vaults/new", Lock: "sleep",
		Options: vault.CreateOptions{Format: "gocryptfs", Cipher: "aes-gcm", ScryptLogN: 12, DeterministicNames: true, LongNameMax: 200}},
		Password: []byte("correct horse battery")}
	if got := fb.created[0]; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("create request\n got %+v\nwant %+v", got, want)
	}
	wantView(t, tm, "master key", "00070e15-1c232a31-383f464d-545b6269-", "Press y")
	golden(t, tm, "master_key")
	// The key must be acknowledged: esc and enter don't close it.
	tm.keys("esc", "enter")
	if tm.current != w {
		t.Fatal("the master key screen closed without y")
	}
	tm.keys("y")
	if tm.current != nil {
		t.Fatalf("after y the screen is %T, want the list", tm.current)
	}
	if w.masterKey != nil {
		t.Fatal("the master key is still held after it was acknowledged")
	}
	wantView(t, tm, "Created new. Press m to mount it.", "○ locked · /data/new.crypt", "AES-256-GCM")
}

func TestWizardCatchesMismatchBeforeWriting(t *testing.T) {
	fb := newFake()
	tm := newTestModel(t, fb)
	wizardTo(t, tm)
	tm.keys("enter", "secret one", "enter", "secret two")
	wantView(t, tm, "does not match")
	tm.keys("enter")
	wantView(t, tm, "step 5 of 6", "The passwords do not match")
	if len(fb.created) != 0 {
		t.Fatal("a vault was created despite the mismatch")
	}
	golden(t, tm, "mismatch")
}

func TestWizardValidates(t *testing.T) {
	fb := newFake()
	fb.vaults = []Vault{{Entry: registry.Entry{Name: "taken", CipherDir: "/data/taken.crypt"}}}
	tm := newTestModel(t, fb)
	tm.keys("n", "/data/full", "enter")
	wantView(t, tm, "step 1 of 6", "not empty")
	tm.keys("ctrl+u", "/data/taken2", "enter", "ctrl+u", "taken", "enter")
	wantView(t, tm, "step 2 of 6", `vault name "taken": already registered`)
	tm.keys("2", "enter", "ctrl+u", "/data/taken2/inside", "enter")
	wantView(t, tm, "step 3 of 6", "the new vault's cipherdir /data/taken2 are")
	tm.keys("ctrl+u", "/mnt/t2", "enter", "enter", "pw", "enter", "pw", "enter")
	tm.keys("ctrl+u", "5", "enter")
	wantView(t, tm, "step 6 of 6", "scrypt cost 5 is outside 10..28")
	// Options that exclude each other: the core's refusal (vault.CreateOptions.Validate), the
	// words init uses too, before anything is created.
	tm.keys("ctrl+u", "16", "tab", " ", "tab", " ", "enter")
	rule := (vault.CreateOptions{PlaintextNames: true, DeterministicNames: true}).Validate()
	first, _, _ := strings.Cut(rule.Error(), ":")
	wantView(t, tm, "step 6 of 6", first)
	tm.keys("esc", "esc")
	wantView(t, tm, "step 4 of 6")
	if len(fb.created) != 0 {
		t.Fatal("a vault was created from invalid answers")
	}
}

func TestMountWrongPasswordKeepsPrompt(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	tm := newTestModel(t, fb)
	tm.keys("enter") // enter on a locked vault mounts
	if _, ok := tm.current.(*mountScreen); !ok {
		t.Fatalf("enter on a locked vault opened %T", tm.current)
	}
	tm.keys("wrong", "enter")
	wantView(t, tm, "Wrong password. Try again.", "mount work")
	golden(t, tm, "wrong_password")
	tm.keys("tab", " ", "tab", "90", "enter") // read-only, idle 90 min; password still empty
	wantView(t, tm, "Type the vault's password.")
	tm.keys("hunter22", "enter") // the error put the focus back on the password
	if tm.current != nil {
		t.Fatalf("still on %T after a good password", tm.current)
	}
	last := fb.mountReqs[len(fb.mountReqs)-1]
	if !last.ReadOnly || last.Idle != 90*time.Minute || last.MountPoint != "/home/u/Vaults/work" {
		t.Fatalf("mount request %+v", last)
	}
	wantView(t, tm, "work mounted at /home/u/Vaults/work.")
}

func TestMountPointErrorInline(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	fb.mountErr = fmt.Errorf("/home/u/Vaults/work: %w: not empty", ErrMountpoint)
	tm := newTestModel(t, fb)
	tm.keys("m", "hunter22", "enter")
	wantView(t, tm, "Mount point /home/u/Vaults/work can't be used")
	if _, ok := tm.current.(*mountScreen); !ok {
		t.Fatal("the mount prompt closed on an error")
	}
	tm.keys("esc")
	if tm.current != nil {
		t.Fatal("esc did not go back")
	}
}

// TestMountChecksBeforeThePassword: what the core can refuse without the password (a mount
// point with files in it) shows as the prompt opens, before a password is typed for nothing.
func TestMountChecksBeforeThePassword(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	fb.checkErr = fmt.Errorf("mount point /home/u/Vaults/work is not empty: %w", ErrMountpoint)
	tm := newTestModel(t, fb)
	tm.keys("m")
	if _, ok := tm.current.(*mountScreen); !ok {
		t.Fatalf("m opened %T", tm.current)
	}
	wantView(t, tm, "Mount point /home/u/Vaults/work can't be used", "is not empty")
	if len(fb.mountReqs) != 0 {
		t.Fatal("a mount was tried")
	}
	fb.checkErr = nil // emptied meanwhile: the mount goes ahead
	tm.keys("hunter22", "enter")
	if tm.current != nil {
		t.Fatalf("still on %T after a good password", tm.current)
	}
}

func TestUnmountImmediateAndBusy(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	tm := newTestModel(t, fb)
	tm.send(mountsMsg(mountWork(fb, 0, 0)))
	tm.keys("u")
	if len(fb.unmounts) != 1 || fb.unmounts[0] != "/home/u/Vaults/work" {
		t.Fatalf("unmounts %v", fb.unmounts)
	}
	wantView(t, tm, "work unmounted.", "○ locked · /data/work.crypt")

	tm.send(mountsMsg(mountWork(fb, 0, 0)))
	fb.busy = true
	tm.keys("u")
	wantView(t, tm, "work is busy", "Lazy unmount", "y/n")
	golden(t, tm, "busy")
	tm.keys("n")
	wantView(t, tm, "work stays mounted.")
	tm.keys("u", "y")
	if len(fb.lazyUnmounts) != 1 {
		t.Fatalf("lazy unmounts %v", fb.lazyUnmounts)
	}
	wantView(t, tm, "work detached")

	tm.keys("j", "u")
	wantView(t, tm, "photos is not mounted.")
}

// TestUnmountResultAfterLeavingList: the result of an unmount reaches the
// list even when another screen opened meanwhile.
func TestUnmountResultAfterLeavingList(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	tm := newTestModel(t, fb)
	tm.send(mountsMsg(mountWork(fb, 0, 0)))
	v, _ := tm.list.selected()
	cmd := tm.list.unmount(v, false) // in flight
	tm.keys("i")
	tm.run(cmd)
	if len(tm.list.pending) != 0 {
		t.Fatalf("pending unmounts %v", tm.list.pending)
	}
	tm.keys("esc")
	wantView(t, tm, "work unmounted.")
}

func TestLiveView(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	tm := newTestModel(t, fb)
	for i := 0; i < historyLen+10; i++ {
		w := float64(i%20) * 1e6
		r := float64((i*7)%13) * 0.5e6
		tm.send(mountsMsg(mountWork(fb, r, w)))
	}
	if n := len(tm.c.history["/home/u/Vaults/work"].write); n != historyLen {
		t.Fatalf("history keeps %d samples, want %d", n, historyLen)
	}
	tm.keys("enter")
	if _, ok := tm.current.(*liveScreen); !ok {
		t.Fatalf("enter on a mounted vault opened %T", tm.current)
	}
	wantView(t, tm, "AEGIS-256X2 · mounted at /home/u/Vaults/work", "5m ago", "write  now 9.0 MB/s", "peak 19 MB/s",
		"read 12 MB · written 34 MB · 1234 ops (56/s)", "-60s", "█")
	// The y axis is labelled at the top and the middle of both charts.
	if v := tm.View(); strings.Count(v, "┤ 19 MB/s") != 2 || strings.Count(v, "┤ 9.5 MB/s") != 2 {
		t.Errorf("chart axis labels missing:\n%s", v)
	}
	golden(t, tm, "live")
	tm.keys("u")
	if tm.current != nil || len(fb.unmounts) != 1 {
		t.Fatalf("u in the live view: screen %T, unmounts %v", tm.current, fb.unmounts)
	}
	wantView(t, tm, "work unmounted.")
}

func TestInfo(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	tm := newTestModel(t, fb)
	tm.keys("i")
	wantView(t, tm, "info · work", "Folder", "/data/work.crypt", "State", "locked", "Feature flags", "HKDF")
	golden(t, tm, "info")
	tm.keys("esc")
	if tm.current != nil {
		t.Fatal("esc did not close info")
	}
}

// TestInfoSharedStorage: a vault registered for shared storage says so among its options.
func TestInfoSharedStorage(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	fb.vaults[0].SharedStorage = true
	tm := newTestModel(t, fb)
	tm.keys("i")
	wantView(t, tm, "shared storage")
	tm.keys("esc", "j", "i")
	notInView(t, tm, "shared storage")
}

func TestChangePassword(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	tm := newTestModel(t, fb)
	tm.keys("p", "nope", "enter", "new pass", "enter", "new pass", "enter")
	wantView(t, tm, "The current password is wrong.")
	tm.keys("hunter22", "tab", "tab", "ctrl+u", "new pasz", "enter")
	wantView(t, tm, "do not match")
	tm.keys("new pass", "enter")
	wantView(t, tm, "Password of work changed.")
	if fb.password != "new pass" {
		t.Fatalf("password is %q", fb.password)
	}
}

func TestFsck(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	tm := newTestModel(t, fb)
	tm.keys("f")
	f := tm.current.(*fsckScreen)
	tm.keys("bad", "enter")
	wantView(t, tm, "Wrong password.")
	tm.keys("hunter22", "enter")
	wantView(t, tm, "No problems found in 4 files")

	// Progress is drawn while the check runs.
	f.done, f.running, f.prog = false, true, vault.FsckProgress{Done: 1, Total: 4, Bytes: 1e6, TotalBytes: 4e6, Path: "dir/file1"}
	wantView(t, tm, "25%", "1.0 MB of 4.0 MB · 1 of 4 entries", "dir/file1")

	fb.problems = []app.Finding{
		{Where: "docs/report.odt", Kind: "content", What: "block 3: authentication failed", Damage: true},
		{Where: "gocryptfs.longname.abc", Kind: "name", What: "missing .name file", Damage: true},
	}
	f.running, f.done = false, true
	tm.keys("r", "hunter22", "enter")
	wantView(t, tm, "2 problems found", "docs/report.odt", "authentication failed", "missing .name file")
	golden(t, tm, "problems")

	// Conflict copies and foreign files alone are notes, not damage.
	fb.problems = []app.Finding{
		{Where: "report (conflict 2026-11-30 Syncthing).odt", Kind: "conflict", What: "Syncthing's conflict copy of /report.odt"},
		{Where: "desktop.ini", Kind: "foreign", What: "not a name of the vault's format"},
	}
	tm.keys("r", "hunter22", "enter")
	wantView(t, tm, "No damage found; 2 notes", "report (conflict 2026-11-30 Syncthing).odt", "desktop.ini")
}

// TestFsckRerunUsesKeyring: r checks again with the keyring's password, as f does, rather
// than asking.
func TestFsckRerunUsesKeyring(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	fb.stored = map[string]string{"/data/work.crypt": "hunter22"}
	tm := newTestModel(t, fb)
	tm.keys("f")
	wantView(t, tm, "No problems found in 4 files")
	fb.problems = []app.Finding{{Where: "docs/report.odt", Kind: "content", What: "authentication failed", Damage: true}}
	tm.keys("r")
	wantView(t, tm, "1 problem found", "docs/report.odt")
}

func TestAddAndForget(t *testing.T) {
	fb := newFake()
	tm := newTestModel(t, fb)
	tm.keys("a", "/data/notavault", "enter")
	wantView(t, tm, "no gocryptfs.conf")
	tm.keys("ctrl+u", "/data/old.crypt", "tab", "legacy", "enter")
	wantView(t, tm, "Added legacy.", "legacy", "/data/old.crypt")
	if mp := fb.vaults[0].MountPoint; mp != "/home/u/Vaults/legacy" {
		t.Fatalf("default mount point %q", mp)
	}

	tm.keys("d")
	wantView(t, tm, "Type the name to confirm", "are not", "deleted")
	golden(t, tm, "forget")
	tm.keys("legac", "enter")
	wantView(t, tm, "Type the name exactly")
	if len(fb.forgotten) != 0 {
		t.Fatal("forgot without the exact name")
	}
	tm.keys("y", "enter")
	if len(fb.forgotten) != 1 || fb.forgotten[0] != "legacy" {
		t.Fatalf("forgotten %v", fb.forgotten)
	}
	wantView(t, tm, "Forgot legacy; its files are still in /data/old.crypt.", "No vaults yet")
}

func TestForgetRefusesMounted(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	tm := newTestModel(t, fb)
	tm.send(mountsMsg(mountWork(fb, 0, 0)))
	tm.keys("d")
	if tm.current != nil {
		t.Fatal("forget opened for a mounted vault")
	}
	wantView(t, tm, "Unmount work before forgetting it.")
}

func TestHelpListsEveryKey(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	tm := newTestModel(t, fb)
	tm.keys("?")
	k := tm.c.keys
	for _, b := range []key.Binding{k.Up, k.Down, k.Quit, k.Help, k.Filter, k.New, k.Add, k.Speed, k.Mount, k.Unmount, k.Info, k.Passwd, k.Fsck, k.Conflicts, k.Forget, k.Events} {
		h := b.Help()
		wantView(t, tm, h.Key, h.Desc)
	}
	golden(t, tm, "full_help")
	tm.keys("?")
	notInView(t, tm, "add existing")
}

func TestQuitLeavesMountsRunning(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	tm := newTestModel(t, fb)
	if g := tm.goodbye(); g != "" {
		t.Fatalf("goodbye without mounts: %q", g)
	}
	tm.send(mountsMsg(mountWork(fb, 0, 0)))
	_, cmd := tm.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'q'}})
	if cmd == nil || cmd() != tea.Quit() {
		t.Fatal("q did not quit")
	}
	if g := tm.goodbye(); !strings.Contains(g, "1 vault stays mounted") || !strings.Contains(g, "daemon") {
		t.Fatalf("goodbye %q", g)
	}
}

func TestResize(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	tm := newTestModel(t, fb)
	tm.send(mountsMsg(mountWork(fb, 1e6, 2e6)))
	for _, size := range [][2]int{{120, 40}, {80, 24}, {60, 20}} {
		tm.send(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		checkFits(t, tm.View(), size[0], size[1])
		tm.keys("enter")
		checkFits(t, tm.View(), size[0], size[1])
		tm.keys("esc", "s")
		checkFits(t, tm.View(), size[0], size[1])
		tm.keys("esc")
	}
}

func TestRegistryRefresh(t *testing.T) {
	fb := newFake()
	tm := newTestModel(t, fb)
	tm.keys("s") // another screen is showing
	fb.vaults = []Vault{{Entry: registry.Entry{Name: "fromcli", CipherDir: "/data/cli.crypt"}, Cipher: "AES-256-GCM"}}
	tm.send(refreshRegistry{})
	tm.keys("esc")
	wantView(t, tm, "fromcli", "○ locked · /data/cli.crypt")
}

func TestWatchBackoff(t *testing.T) {
	for n, want := range map[int]time.Duration{1: 2 * time.Second, 2: 4 * time.Second, 4: 16 * time.Second, 5: 30 * time.Second, 50: 30 * time.Second} {
		if got := watchBackoff(n); got != want {
			t.Errorf("watchBackoff(%d) = %v, want %v", n, got, want)
		}
	}
}

func TestWatchErrorIsShownAndRetried(t *testing.T) {
	tm := newTestModel(t, newFake())
	_, cmd := tm.Update(watchEnded{err: fmt.Errorf("%w: connection refused", ErrDaemon)})
	if cmd == nil {
		t.Fatal("no retry scheduled")
	}
	wantView(t, tm, "Daemon: mount daemon unreachable: connection refused (retrying)")
	tm.send(mountsMsg(nil))
	notInView(t, tm, "Daemon:")
}

// TestProgram runs the whole program with teatest: the watch stream, the
// speed test in the background, keys typed into the real event loop.
func TestProgram(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	fb.watch = make(chan []mountmgr.MountInfo, 1)
	m := newModel(t.Context(), fb, func() time.Time { return testNow }, cursor.CursorStatic)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))
	waitFor := func(s string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return strings.Contains(string(b), s) },
			teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	}
	waitFor("photos")
	fb.watch <- mountWork(fb, 0, 3.4e6)
	waitFor("write 3.4 MB/s")
	tm.Type("s")
	waitFor("Recommended")
	tm.Send(tea.KeyMsg{Type: tea.KeyEsc})
	tm.Type("q")
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	if final.c.speed.rec == nil || final.c.speed.rec.Cipher != crypto.AEGIS {
		t.Fatalf("speed recommendation %+v", final.c.speed.rec)
	}
	if !strings.Contains(final.goodbye(), "stays mounted") {
		t.Fatalf("goodbye %q", final.goodbye())
	}
}

func TestWizardPlaintextNamesDropLongNameLimit(t *testing.T) {
	tm := newTestModel(t, newFake())
	w := wizardTo(t, tm)
	tm.keys("enter", "pw", "enter", "pw", "enter", "ctrl+u", "10", "tab", " ", "enter")
	if len(tm.fb.created) != 1 {
		t.Fatalf("not created: %s", w.err)
	}
	if got := tm.fb.created[0]; !got.Options.PlaintextNames || got.Options.LongNameMax != 0 {
		t.Fatalf("plaintext names request %+v", got)
	}
}

func TestWizardRefusesUnavailableCipher(t *testing.T) {
	tm := newTestModel(t, newFake())
	w := wizardTo(t, tm)
	tm.c.speed.report.Ciphers[0] = app.CipherSpeed{Cipher: crypto.AEGIS, Err: errors.New("no AES instructions")}
	w.cipherCursor = 0
	tm.keys("enter")
	wantView(t, tm, "step 4 of 6", "AEGIS-256X2 can't be used on this computer: no AES instructions")
	tm.keys("j", "enter")
	wantView(t, tm, "step 5 of 6")
}

// TestWizardCreatesCryptomatorVault: the wizard offers the Cryptomator format after
// gocryptfs's ciphers; chosen, it asks the core for a Cryptomator vault (no cipher, the
// default options), refuses a gocryptfs-only option with the core's reason, and the new vault
// is listed as Cryptomator.
func TestWizardCreatesCryptomatorVault(t *testing.T) {
	fb := newFake()
	tm := newTestModel(t, fb)
	w := wizardTo(t, tm)
	wantView(t, tm, "Cryptomator", "vault format 8 (SIV_GCM)")
	tm.keys("j", "j", "j", "j")
	if got := w.ciphers[w.cipherCursor].Format.ID; got != "cryptomator" {
		t.Fatalf("cursor on %v, want the Cryptomator format", got)
	}
	wantView(t, tm, "A Cryptomator vault opens in vaultui and Cryptomator")
	tm.keys("enter", "correct horse battery", "enter", "correct horse battery", "enter")
	wantView(t, tm, "step 6 of 6", "Cryptomator", "scrypt cost", "15", "Lock")
	// The gocryptfs options the format has no place for are not offered.
	for _, gone := range []string{"Plaintext names", "Deterministic names", "Long-name limit"} {
		if strings.Contains(tm.View(), gone) {
			t.Fatalf("the advanced step offers %q for a Cryptomator vault:\n%s", gone, tm.View())
		}
	}
	tm.keys("tab", "enter") // tab goes straight to the lock policy
	if len(fb.created) != 1 {
		t.Fatalf("created %d vaults, want 1", len(fb.created))
	}
	want := app.NewVault{Name: "new", CipherDir: "/data/new.crypt", MountPoint: "/home/u/Vaults/new", Lock: "sleep",
		// The scrypt cost is left to the format's default, as init leaves it (2^15, not
		// gocryptfs's 2^16).
		Options: vault.CreateOptions{Format: "cryptomator"}}
	if got := fb.created[0].NewVault; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("create request\n got %+v\nwant %+v", got, want)
	}
	wantView(t, tm, "master key", "not Cryptomator's recovery key words")
	tm.keys("y")
	wantView(t, tm, "Created new.", "Cryptomator")
}

// TestOneRatioEverywhere: one measurement, one ratio. The rounds' ratios of AEGIS to
// AES-256-GCM are 3.2, 4.0 and 3.39 (median 3.39) while the medians' ratio is 3.6: the speed
// screen's column, the wizard's list and the recommendation's line all print app's
// SpeedReport.Times of it, and no other figure.
func TestOneRatioEverywhere(t *testing.T) {
	tm := newTestModel(t, newFake())
	r := fakeSpeed()
	r.Ciphers[0].Samples, r.Ciphers[0].MBps = []float64{6400, 7200, 7800}, 7200
	r.Ciphers[1].Samples, r.Ciphers[1].MBps = []float64{2000, 1800, 2300}, 2000
	want := r.Times(crypto.AEGIS)
	if want != "3.4x" {
		t.Fatalf("Times = %q, want 3.4x", want)
	}
	tm.c.speed = speedState{run: 7, running: true}
	tm.keys("s")
	tm.send(speedDone{run: 7, report: r})
	ratios := regexp.MustCompile(`\b\d+(\.\d+)?x\b`)
	// figures returns the ratios on the lines of v that name AEGIS-256X2.
	figures := func(v string) []string {
		var out []string
		for _, l := range strings.Split(v, "\n") {
			if strings.Contains(l, "AEGIS-256X2") {
				out = append(out, ratios.FindAllString(l, -1)...)
			}
		}
		return out
	}
	check := func(where string, v string, n int) {
		t.Helper()
		got := figures(v)
		if len(got) != n {
			t.Errorf("%s: ratios %q beside AEGIS-256X2, want %d:\n%s", where, got, n, v)
		}
		for _, g := range got {
			if g != want {
				t.Errorf("%s prints %s for AEGIS-256X2, want %s:\n%s", where, g, want, v)
			}
		}
	}
	check("speed screen", tm.View(), 2) // its bar's column and the gain line
	tm.keys("esc")
	wizardTo(t, tm)
	check("cipher step", tm.View(), 2) // the gain line and the list
}

// TestFormErrorsWrap: the form screens' errors wrap at the window's edge, as add's and
// mount's always did, instead of being cut there.
func TestFormErrorsWrap(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	tm := newTestModel(t, fb)
	tm.resize(40, 30)
	tm.keys("p", "old", "enter", "new pass", "enter", "new pasz", "enter")
	wantView(t, tm, "The new passwords do not match. Type", "the confirmation again.")
	tm.keys("esc", "d", "wor", "enter")
	wantView(t, tm, "Type the name exactly to confirm.")
	checkFits(t, tm.View(), 40, 30)
}
