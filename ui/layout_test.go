package ui

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/registry"
)

// The sizes every screen is drawn at: a small split pane, the classic
// terminal and a wide one.
var layoutSizes = [][2]int{{40, 10}, {60, 16}, {80, 24}, {160, 45}}

// goldenAt is golden at another size than 80x24.
func goldenAt(t *testing.T, tm *testModel, name string, w, h int) {
	t.Helper()
	v := tm.View()
	checkFits(t, v, w, h)
	t.Run(name, func(t *testing.T) { teatest.RequireEqualOutput(t, []byte(v)) })
}

// resize sends a new terminal size.
func (tm *testModel) resize(w, h int) {
	tm.t.Helper()
	tm.send(tea.WindowSizeMsg{Width: w, Height: h})
}

// fiveVaults is a registry taller than a small terminal: a mounted vault
// with conflicts, a stale mount with automount, a vault whose lock policy
// cannot work here, a long name and a deep folder.
func fiveVaults(fb *fakeBackend) {
	twoVaults(fb)
	workConflicts(fb)
	fb.vaults = append(fb.vaults,
		Vault{Entry: registry.Entry{Name: "old", CipherDir: "/data/old.crypt", MountPoint: "/home/u/Vaults/old", MountAtStart: true}, Cipher: "AES-256-GCM"},
		Vault{Entry: registry.Entry{Name: "music", CipherDir: "/home/u/Sync/music.crypt", MountPoint: "/home/u/Vaults/music", Lock: "sleep"}, Cipher: "XChaCha20-Poly1305"},
		Vault{Entry: registry.Entry{Name: "a-rather-long-vault-name", CipherDir: "/home/u/Sync/some/deep/folder/structure/longname.crypt", MountPoint: "/home/u/Vaults/long"}, Cipher: "AES-256-GCM"})
	fb.vaults[0].Lock = "sleep"
	fb.lockErr = errors.New("lock on sleep unavailable: logind is not running")
}

// staleEvent is an event whose reason (with a pid) is longer than a small line.
var staleEvent = app.NamedEvent{Event: mountmgr.Event{Seq: 9, Time: testNow.Add(-10 * time.Minute), Kind: "stale", CipherDir: "/data/old.crypt", MountPoint: "/home/u/Vaults/old",
	Detail: "transport endpoint is not connected (pid 12345 held it)"}}

// busyModel is the app with fiveVaults, work mounted with 200 s of
// throughput history, old's mount stale, and the event log read.
func busyModel(t *testing.T) *testModel {
	t.Helper()
	t.Setenv("HOME", "/home/u")
	fb := newFake()
	fiveVaults(fb)
	tm := newTestModel(t, fb)
	tm.send(lockChecked{err: fb.lockErr})
	for i := 0; i < 200; i++ {
		ms := mountWork(fb, float64((i*7)%13)*0.5e6, float64(i%20)*1e6)
		ms = append(ms, mountmgr.MountInfo{CipherDir: "/data/old.crypt", MountPoint: "/home/u/Vaults/old", Stale: true})
		tm.send(mountsMsg(ms))
	}
	tm.send(eventsMsg(append(fakeEvents(), staleEvent)))
	return tm
}

// TestLayouts draws the list, the info, its full help, the live view, the events with
// one shown whole, the conflicts and the wizard's steps at each size.
func TestLayouts(t *testing.T) {
	for _, sz := range layoutSizes {
		w, h := sz[0], sz[1]
		t.Run(fmt.Sprintf("%dx%d", w, h), func(t *testing.T) {
			tm := busyModel(t)
			tm.resize(w, h)
			goldenAt(t, tm, "list", w, h)
			tm.keys("i")
			goldenAt(t, tm, "info", w, h)
			tm.keys("esc", "?")
			goldenAt(t, tm, "help", w, h)
			tm.keys("?", "enter")
			goldenAt(t, tm, "live", w, h)
			tm.keys("esc", "e")
			goldenAt(t, tm, "events", w, h)
			tm.keys("enter")
			goldenAt(t, tm, "event", w, h)
			tm.keys("esc", "esc", "c")
			goldenAt(t, tm, "conflicts", w, h)
			tm.keys("esc", "n")
			goldenAt(t, tm, "wizard_folder", w, h)
			tm.keys("/data/new.crypt", "enter", "enter", "enter")
			goldenAt(t, tm, "wizard_cipher", w, h)
			tm.keys("enter", "pw", "enter", "pw", "enter")
			goldenAt(t, tm, "wizard_options", w, h)
			// The last choice, the Cryptomator format, and its options.
			tm.keys("esc", "esc", "j", "j", "j", "j")
			goldenAt(t, tm, "wizard_cryptomator", w, h)
			tm.keys("enter", "enter") // the password step keeps what was typed
			goldenAt(t, tm, "wizard_cryptomator_options", w, h)
			tm.keys("enter")
			goldenAt(t, tm, "wizard_masterkey", w, h)
			tm.keys("y", "s")
			goldenAt(t, tm, "speed", w, h)
			tm.keys("d")
			goldenAt(t, tm, "speed_details", w, h)
		})
	}
}

// TestListSaysHowManyMore: a list taller than the screen says how many
// vaults are above and below, and the selected one always shows.
func TestListSaysHowManyMore(t *testing.T) {
	tm := busyModel(t)
	tm.resize(60, 16)
	wantView(t, tm, "↓ 2 more")
	notInView(t, tm, "music", "↑")
	tm.keys("j", "j", "j", "j")
	if v, _ := tm.list.selected(); v.Name != "a-rather-long-vault-name" {
		t.Fatalf("selected %q", v.Name)
	}
	wantView(t, tm, "› a-rather-long-vault-name", "↑ 2 more")
	notInView(t, tm, "↓")
	checkFits(t, tm.View(), 60, 16)
	// Where everything fits, nothing is said.
	tm.resize(80, 24)
	notInView(t, tm, "more")
}

// TestListRowsKeepFlagsAndReasons: at 60 columns a row's flags stay whole
// (the path gives way), an event that does not fit is left to the events
// screen rather than cut, and a vault's problem wraps whole.
func TestListRowsKeepFlagsAndReasons(t *testing.T) {
	tm := busyModel(t)
	tm.fb.vaults = append(tm.fb.vaults[:2:2], tm.fb.vaults[2], Vault{Entry: registry.Entry{Name: "broken", CipherDir: "/data/broken.crypt"},
		Problem: "open /data/broken.crypt/gocryptfs.conf: permission denied (the folder belongs to another user)"})
	tm.send(refreshRegistry{})
	tm.resize(60, 16)
	wantView(t, tm, "● mounted at ~/Vaults/work", "⚑ 3 conflicts")
	if !strings.Contains(tm.View(), "✗ stale mount at ~/Vaults/old (u cleans up)    automount") {
		t.Errorf("the stale row lost its flag:\n%s", tm.View())
	}
	notInView(t, tm, "transport endpoint", "stale mount at /home")
	tm.keys("j", "j", "j")
	wantView(t, tm, "! open /data/broken.crypt/gocryptfs.conf: permission", "another user)")
	lines := strings.Split(tm.View(), "\n")
	for _, l := range lines[:len(lines)-1] { // the help bar ends with "…" by design
		if strings.Contains(l, "…") && !strings.Contains(l, "mounted at …") && !strings.Contains(l, "stale mount at …") && !strings.Contains(l, "locked · …") {
			t.Errorf("a row cuts something other than a path: %q", l)
		}
	}
	// The header and the status line count mounts alike: a stale one is not mounted.
	wantView(t, tm, "● 1 mounted", "1 mounted")
	notInView(t, tm, "2 mounted")
	checkFits(t, tm.View(), 60, 16)
}

// TestEventsShowHomeAsTildeAndWhole: event rows name paths under the home
// directory with ~; a reason cut to fit the line shows whole on enter.
func TestEventsShowHomeAsTildeAndWhole(t *testing.T) {
	tm := busyModel(t)
	tm.resize(60, 16)
	tm.keys("e")
	notInView(t, tm, "/home/u")
	wantView(t, tm, "› Nov 30 16:50:00", "stale mount at ~/…", "enter shows an event whole")
	notInView(t, tm, "pid 12345")
	tm.keys("enter")
	wantView(t, tm, "Mount point  ~/Vaults/old", "What         stale mount at ~/Vaults/old: transport", "(pid 12345 held it)")
	checkFits(t, tm.View(), 60, 16)
	tm.keys("esc")
	if _, ok := tm.current.(*eventsScreen); !ok {
		t.Fatalf("esc on an event left the events screen for %T", tm.current)
	}
	tm.keys("j", "j", "j", "j", "enter")
	wantView(t, tm, "What         mounted at ~/Vaults/work")
	tm.keys("esc", "esc")
	if tm.current != nil {
		t.Fatalf("esc on the events left %T open", tm.current)
	}
	// The list's row says it the same way.
	tm.resize(160, 45)
	wantView(t, tm, "old  stale mount at ~/Vaults/old: transport endpoint is not connected (pid 12345 held it) · 10m ago")
}

// TestEventsScroll: more events than fit say how many more; the cursor
// pulls the window along.
func TestEventsScroll(t *testing.T) {
	tm := busyModel(t)
	var many []app.NamedEvent
	for i := 0; i < 30; i++ {
		many = append(many, app.NamedEvent{Event: mountmgr.Event{Seq: uint64(100 + i), Time: testNow, Kind: fmt.Sprintf("event %d", i), CipherDir: "/data/work.crypt"}})
	}
	tm.send(eventsMsg(many))
	tm.resize(60, 16)
	tm.keys("e")
	wantView(t, tm, "› Nov 30 17:00:00  work  event 29", "↓ 24 more")
	for i := 0; i < 12; i++ {
		tm.keys("j")
	}
	// What is hidden above is said above, what is hidden below, below.
	wantView(t, tm, "› Nov 30 17:00:00  work  event 17")
	if v := tm.View(); !regexp.MustCompile(`events.*\n *\n ↑ 3 more *\n.*event 26`).MatchString(v) ||
		!regexp.MustCompile(`event 17 *\n ↓ 22 more`).MatchString(v) {
		t.Errorf("want ↑ 3 more first, ↓ 22 more under the last event:\n%s", v)
	}
	checkFits(t, tm.View(), 60, 16)
}

// TestInfoScrollsWhenTaller: info taller than a small screen (long values
// wrap) says what is below and the arrows bring it up.
func TestInfoScrollsWhenTaller(t *testing.T) {
	tm := busyModel(t)
	tm.resize(60, 16)
	tm.keys("i")
	wantView(t, tm, "↓ ", "more")
	notInView(t, tm, "Feature flags")
	h := tm.current.(*infoScreen).keys()
	if len(h) != 4 {
		t.Fatalf("info that scrolls offers %d keys, want ↑ ↓ C esc", len(h))
	}
	for i := 0; i < 20; i++ {
		tm.keys("j")
	}
	wantView(t, tm, "Feature flags  HKDF DirIV EMENames LongNames Raw64", "↑ ")
	checkFits(t, tm.View(), 60, 16)
	tm.resize(160, 45)
	notInView(t, tm, "more")
	if len(tm.current.(*infoScreen).keys()) != 2 { // C and esc
		t.Fatal("info that fits offers the arrows")
	}
}

// TestLiveViewUsesTheScreen: the charts are as wide as the terminal (a
// second a column) and share its height; the totals show even on a small one.
func TestLiveViewUsesTheScreen(t *testing.T) {
	tm := busyModel(t)
	tm.keys("enter")
	tm.resize(160, 45)
	wantView(t, tm, "-60s", "Totals  read 12 MB")
	bars := 0
	for _, l := range strings.Split(tm.View(), "\n") {
		if strings.Contains(l, "┤") || strings.Contains(l, "│") {
			bars++
			if w := lipgloss.Width(l[:strings.IndexAny(l, "┤│")]); w != 149 {
				t.Errorf("chart row %d cells wide, want 149: %q", w, l)
			}
		}
	}
	if bars < 2*12 {
		t.Errorf("charts are %d rows in all at 160x45, want at least 24", bars)
	}
	tm.resize(60, 16)
	wantView(t, tm, "-60s", "Totals", "errors")
	checkFits(t, tm.View(), 60, 16)
}

// TestLiveChartIsTheLastMinute: at any width the chart spans the last 60 seconds, as its
// axis says: a burst 30 s ago sits in the middle, and what came before the minute (a minute
// of heavy writing) is not drawn, nor does it set the scale.
func TestLiveChartIsTheLastMinute(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	tm := newTestModel(t, fb)
	for i := range 100 { // seconds 0..99; "now" is second 99
		bps := 0.0
		switch {
		case i < 40:
			bps = 50e6
		case i == 69:
			bps = 8e6
		}
		tm.send(mountsMsg(mountWork(fb, bps, bps)))
	}
	tm.keys("enter")
	for _, sz := range [][2]int{{40, 24}, {60, 16}, {80, 24}, {124, 30}, {160, 45}} {
		tm.resize(sz[0], sz[1])
		v := tm.View()
		if !strings.Contains(v, "-60s") || strings.Contains(v, "50 MB/s") {
			t.Errorf("%dx%d: want the axis at -60s and nothing of before the minute:\n%s", sz[0], sz[1], v)
		}
		rows := 0
		for _, l := range strings.Split(v, "\n") {
			i := strings.IndexAny(l, "┤│")
			if i < 0 {
				continue
			}
			rows++
			cells := []rune(strings.TrimPrefix(l[:i], " ")) // the app's padding
			for x, r := range cells {
				// 30 s before now (second 59 of 0..59) is second 29: its columns lie between
				// 29/60 and 30/60 of the width.
				if r != ' ' && (float64(x) < float64(len(cells))*29/60-1 || float64(x) > float64(len(cells))*30/60) {
					t.Errorf("%dx%d: column %d of %d drawn, want only the burst's at 30 s of 60:\n%s", sz[0], sz[1], x, len(cells), v)
					break
				}
			}
			if !strings.ContainsAny(string(cells), "▁▂▃▄▅▆▇█") && strings.Contains(l, "┤ 8.0 MB/s") {
				t.Errorf("%dx%d: the burst's top row is blank: %q", sz[0], sz[1], l)
			}
		}
		if rows < 2 {
			t.Errorf("%dx%d: no chart:\n%s", sz[0], sz[1], v)
		}
	}
}

// TestConflictDetailsWrap: a copy's details (which version is newer) wrap
// rather than being cut, and the copies that do not fit are counted.
func TestConflictDetailsWrap(t *testing.T) {
	tm := busyModel(t)
	tm.resize(60, 16)
	tm.keys("c")
	wantView(t, tm, "copy is newer", "↓ 2 more", "~/Vaults/work")
	if body, _, _ := strings.Cut(tm.View(), "? all keys"); strings.Contains(body, "…") {
		t.Errorf("something is cut:\n%s", body)
	}
	tm.keys("down", "down")
	wantView(t, tm, "› photos (conflict Google Drive)", "original is gone", "↑ ")
	tm.keys("o")
	wantView(t, tm, "Delete the copy photos (conflict Google Drive) and keep", "the original? y/n")
	checkFits(t, tm.View(), 60, 16)
}

// TestWizardOptionErrorShows: an error in the advanced options shows at
// 60x16 (it came after the long hint and was cut).
func TestWizardOptionErrorShows(t *testing.T) {
	tm := newTestModel(t, newFake())
	tm.resize(60, 16)
	wizardTo(t, tm)
	tm.keys("enter", "pw", "enter", "pw", "enter", "ctrl+u", "5", "enter")
	wantView(t, tm, "scrypt cost 5 is outside 10..28")
	checkFits(t, tm.View(), 60, 16)
}

// TestHelpNamesEachWorkingKeyOnce walks the screens: the help bar and the
// full help name each key once, `?` and `q` only where they are not text
// (F1 and ctrl+c there), esc only where it does something, and the full
// help shows every key it lists even at 60 columns.
func TestHelpNamesEachWorkingKeyOnce(t *testing.T) {
	tm := busyModel(t)
	tm.resize(60, 16)
	check := func(where string) {
		t.Helper()
		for _, bar := range []bool{true, false} {
			seen := map[string]bool{}
			for _, b := range tm.helpKeys(bar) {
				for _, k := range b.Keys() {
					if seen[k] {
						t.Errorf("%s: help names %q twice", where, k)
					}
					seen[k] = true
				}
			}
			typing := tm.screen().typing()
			if typing && (seen["?"] || seen["q"]) || !typing && seen["f1"] {
				t.Errorf("%s (typing %v): help offers a key that is text or needless here: %v", where, typing, seen)
			}
		}
		tm.fullHelp = true
		v := tm.View()
		for _, b := range tm.helpKeys(false) {
			if h := b.Help(); !strings.Contains(v, h.Key) || !strings.Contains(v, h.Desc) {
				t.Errorf("%s: full help at 60 columns lacks %q %q:\n%s", where, h.Key, h.Desc, v)
			}
		}
		checkFits(t, v, 60, 16)
		tm.fullHelp = false
	}
	check("list")
	if hasKey(tm.helpKeys(false), "esc") {
		t.Error("the list offers esc with no filter to clear")
	}
	tm.keys("/", "wo", "enter")
	check("filtered list")
	if !hasKey(tm.helpKeys(false), "esc") {
		t.Error("a filtered list does not offer esc to clear it")
	}
	tm.keys("esc", "enter")
	check("live")
	tm.keys("esc", "e")
	check("events")
	tm.keys("enter")
	check("event")
	tm.keys("esc", "esc", "c")
	check("conflicts")
	tm.keys("esc", "i")
	check("info")
	tm.keys("esc", "j", "m")
	check("mount")
	tm.keys("esc", "n")
	check("wizard")
	tm.keys("/data/new.crypt", "enter", "enter", "enter")
	check("wizard cipher")
	tm.keys("enter", "enter")
	check("wizard password")
}

func hasKey(bs []key.Binding, k string) bool {
	for _, b := range bs {
		for _, bk := range b.Keys() {
			if bk == k {
				return true
			}
		}
	}
	return false
}

func TestWindow(t *testing.T) {
	for _, c := range []struct {
		heights                []int
		cursor, offset, h, gap int
		start, end             int
	}{
		{[]int{2, 2, 2}, 0, 0, 8, 1, 0, 3},          // all fit: no "more" line
		{[]int{2, 2, 2, 2, 2}, 0, 0, 9, 1, 0, 3},    // 8 lines of rows and the "↓" line
		{[]int{2, 2, 2, 2, 2}, 4, 0, 9, 1, 2, 5},    // the cursor pulls the window down
		{[]int{2, 2, 2, 2, 2}, 2, 2, 9, 1, 2, 5},    // kept, and filled from above only at the end
		{[]int{2, 2, 2, 2, 2}, 1, 3, 9, 1, 0, 3},    // moving up pulls it up, to the top: no "↑" line
		{[]int{1, 1, 1, 1, 1, 1}, 2, 3, 4, 0, 2, 4}, // "↑" and "↓" lines take one each
		{[]int{9, 1, 1}, 0, 0, 5, 0, 0, 1},          // an item taller than the screen still shows
		{nil, 0, 0, 5, 0, 0, 0},
	} {
		start, end := window(c.heights, c.cursor, c.offset, c.h, c.gap)
		if start != c.start || end != c.end {
			t.Errorf("window(%v, cursor %d, offset %d, h %d) = %d..%d, want %d..%d", c.heights, c.cursor, c.offset, c.h, start, end, c.start, c.end)
		}
	}
}

func TestTildeText(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	for in, want := range map[string]string{
		"mounted at /home/u/Vaults/work":           "mounted at ~/Vaults/work",
		"/home/u":                                  "~",
		"mount failed: /home/u/x: not empty":       "mount failed: ~/x: not empty",
		"mounted at /home/user/x":                  "mounted at /home/user/x",
		"mounted at /mnt/home/u/x":                 "mounted at /mnt/home/u/x",
		"stale mount at /home/u/a (pid 1) /home/u": "stale mount at ~/a (pid 1) ~",
	} {
		if got := tildeText(in); got != want {
			t.Errorf("tildeText(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestConflictKeysFollowTheCopies: the arrows are offered while there is
// more than one copy, and nothing but esc once none is left.
func TestConflictKeysFollowTheCopies(t *testing.T) {
	tm := busyModel(t)
	tm.fb.conflicts["/data/work.crypt"] = tm.fb.conflicts["/data/work.crypt"][:2]
	tm.keys("c")
	if !hasKey(tm.helpKeys(false), "up") {
		t.Error("two copies and no arrows offered")
	}
	tm.keys("b")
	if hasKey(tm.helpKeys(false), "up") || !hasKey(tm.helpKeys(false), "b") {
		t.Errorf("one copy: help offers %v", tm.helpKeys(false))
	}
	tm.keys("b")
	wantView(t, tm, "No conflict copies")
	for _, k := range []string{"b", "o", "k", "up", "down"} {
		if hasKey(tm.helpKeys(true), k) {
			t.Errorf("no copy left, yet the bar offers %q", k)
		}
	}
}

// TestRowLeavesOutWhatTheStateSays: a vault mounted since its newest event
// does not say "mounted at" twice; another event still shows.
func TestRowLeavesOutWhatTheStateSays(t *testing.T) {
	tm := busyModel(t)
	tm.send(eventsMsg([]app.NamedEvent{{Event: mountmgr.Event{Seq: 50, Time: testNow.Add(-time.Minute), Kind: "mounted", CipherDir: "/data/work.crypt",
		MountPoint: "/home/u/Vaults/work"}}}))
	notInView(t, tm, "mounted at ~/Vaults/work · 1m ago")
	wantView(t, tm, "● mounted at ~/Vaults/work")
	tm.send(eventsMsg([]app.NamedEvent{{Event: mountmgr.Event{Seq: 51, Time: testNow, Kind: "auth_failed", CipherDir: "/data/work.crypt", Detail: "/a"}}}))
	wantView(t, tm, "block failed authentication in /a · 0s ago")
}

// TestJoinWrap: lines break between items, never inside one ("copy is
// newer" stays whole on a narrow line).
func TestJoinWrap(t *testing.T) {
	parts := []string{"of big", "Syncthing", "2026-12-02", "315 MB", "copy is newer"}
	if got, want := joinWrap(parts, " · ", 54), "of big · Syncthing · 2026-12-02 · 315 MB ·\ncopy is newer"; got != want {
		t.Errorf("joinWrap at 54 = %q, want %q", got, want)
	}
	if got, want := joinWrap(parts, " · ", 80), "of big · Syncthing · 2026-12-02 · 315 MB · copy is newer"; got != want {
		t.Errorf("joinWrap at 80 = %q, want %q", got, want)
	}
}

// reverseEvent is the mount of a reverse view: its folder holds the plaintext, its mount
// point the encrypted view, both paths longer than a small screen's value column.
var reverseEvent = app.NamedEvent{Event: mountmgr.Event{Seq: 20, Time: testNow.Add(-time.Minute), Kind: "mounted", Reverse: true,
	CipherDir: "/home/u/Documents/Projects/2026/client-reports", MountPoint: "/home/u/Backups/encrypted-views/client-reports.reverse"}}

// TestReverseEventShowsBothPaths: a reverse view's event, shown whole, names its plaintext
// folder and its encrypted view as such, home as ~, each path wrapped rather than cut, at
// every size; a reverse vault's event from a daemon that did not mark it reads the same.
func TestReverseEventShowsBothPaths(t *testing.T) {
	// At 40x10 the event scrolls (TestLayouts draws one there).
	for _, sz := range layoutSizes[1:] {
		w, h := sz[0], sz[1]
		t.Run(fmt.Sprintf("%dx%d", w, h), func(t *testing.T) {
			tm := busyModel(t)
			tm.send(eventsMsg([]app.NamedEvent{reverseEvent}))
			tm.resize(w, h)
			tm.keys("e")
			wantView(t, tm, "encrypted view mounted")
			tm.keys("enter")
			wantView(t, tm, "Plain folder    ~/Documents/Projects/", "Encrypted view  ~/Backups/", "client-reports.reverse ")
			notInView(t, tm, "/home/u", "…", "Mount point")
			goldenAt(t, tm, "event", w, h)
		})
	}
	tm := busyModel(t)
	tm.fb.vaults = append(tm.fb.vaults, Vault{Entry: registry.Entry{Name: "reports", CipherDir: reverseEvent.CipherDir, Reverse: true}})
	tm.send(refreshRegistry{})
	unmarked := reverseEvent
	unmarked.Seq, unmarked.Reverse = 21, false
	tm.send(eventsMsg([]app.NamedEvent{unmarked}))
	tm.resize(80, 24)
	tm.keys("e", "enter")
	wantView(t, tm, "Vault           reports", "Plain folder    ~/Documents/Projects/2026/client-reports", "Encrypted view  ~/Backups/encrypted-views/client-reports.reverse")
}

// TestWrapValue: a value breaks between words, never inside one (a date's "-" is no place to
// break); a word longer than a line breaks after a "/", and a token longer than a line is cut
// with "…" rather than split across lines. Otherwise only the spaces at the breaks are lost.
func TestWrapValue(t *testing.T) {
	for _, c := range []struct {
		p    string
		w    int
		want string
	}{
		{"~/short", 20, "~/short"},
		{"~/Backups/encrypted-views/client-reports.reverse", 30, "~/Backups/encrypted-views/\nclient-reports.reverse"},
		{"/a/b/c/d", 4, "/a/\nb/c/\nd"},
		{"encrypted view mounted at ~/Backups/client-reports.reverse", 30, "encrypted view mounted at ~/\nBackups/client-reports.reverse"},
		{"mounted at ~/Vaults/work since 2026-12-07 10:00", 40, "mounted at ~/Vaults/work since\n2026-12-07 10:00"},
		{"run vaultui edit --lock never work", 20, "run vaultui edit\n--lock never work"},
		{"key 0123456789abcdef0123456789abcdef ok", 12, "key\n0123456789a…\nok"},
		{"/x/averyveryverylongname/y", 12, "/x/\n…rylongname/\ny"},
		{"mounted at ~/Vaults/work since 2026-11-30 16:55", 23, "mounted at\n~/Vaults/work since\n2026-11-30 16:55"},
	} {
		got := wrapValue(c.p, c.w)
		if got != c.want {
			t.Errorf("wrapValue(%q, %d) = %q, want %q", c.p, c.w, got, c.want)
		}
		if !strings.Contains(got, "…") && strings.ReplaceAll(strings.ReplaceAll(got, "\n", ""), " ", "") != strings.ReplaceAll(c.p, " ", "") {
			t.Errorf("wrapValue(%q, %d) lost something: %q", c.p, c.w, got)
		}
		for _, l := range strings.Split(got, "\n") {
			if lipgloss.Width(l) > c.w {
				t.Errorf("wrapValue(%q, %d): line %q too wide", c.p, c.w, l)
			}
		}
	}
}

// TestScrollKeepsFocusAndCounts: the scroll shows h lines, says on its first line how many
// are hidden above and on its last how many below, the counts adding up, and keeps the
// focus in view wherever the offset was.
func TestScrollKeepsFocusAndCounts(t *testing.T) {
	st := DefaultStyles()
	var text []string
	for i := range 20 {
		text = append(text, fmt.Sprintf("line %d", i))
	}
	for h := 3; h <= 21; h++ {
		for from := 0; from < 20; from++ {
			for _, start := range []int{0, 7, 19} {
				s := scroll{offset: start}
				lines := strings.Split(s.view(strings.Join(text, "\n"), h, [2]int{from, min(19, from+1)}, st), "\n")
				if len(lines) != min(h, 20) {
					t.Fatalf("h %d: %d lines", h, len(lines))
				}
				above, below, shown := 0, 0, 0
				focused := false
				for i, l := range lines {
					switch {
					case strings.HasPrefix(l, "↑ "):
						if i != 0 {
							t.Fatalf("h %d focus %d: ↑ on line %d", h, from, i)
						}
						fmt.Sscanf(l, "↑ %d more", &above)
					case strings.HasPrefix(l, "↓ "):
						if i != len(lines)-1 {
							t.Fatalf("h %d focus %d: ↓ on line %d", h, from, i)
						}
						fmt.Sscanf(l, "↓ %d more", &below)
					default:
						if l != text[above+shown] {
							t.Fatalf("h %d focus %d: line %q, want %q", h, from, l, text[above+shown])
						}
						shown++
						focused = focused || l == text[from]
					}
				}
				if above+shown+below != 20 || !focused {
					t.Fatalf("h %d focus %d from %d: %d above, %d shown, %d below, focus shown %v:\n%s",
						h, from, start, above, shown, below, focused, strings.Join(lines, "\n"))
				}
			}
		}
	}
}

// TestSmallScreensShowTheCost: at 40x10 and 60x16 the speed screen and the wizard's cipher
// step show that an AEGIS vault opens only in vaultui (they hid it), the cursor's cipher
// stays in view as it moves, and no line is cut at the edge.
func TestSmallScreensShowTheCost(t *testing.T) {
	for _, sz := range [][2]int{{40, 10}, {60, 16}} {
		tm := busyModel(t)
		tm.resize(sz[0], sz[1])
		tm.keys("s")
		// Words wrap across lines: read the view as one line.
		reads := func(want string) {
			t.Helper()
			if flat := strings.Join(strings.Fields(tm.View()), " "); !strings.Contains(flat, want) {
				t.Errorf("%dx%d: view lacks %q:\n%s", sz[0], sz[1], want, tm.View())
			}
		}
		reads("Recommended: AEGIS-256X2")
		reads("A vault with AEGIS-256X2 opens only in vaultui.")
		checkFits(t, tm.View(), sz[0], sz[1])
		tm.keys("esc", "n", "/data/new.crypt", "enter", "enter", "enter")
		reads("› AEGIS-256X2")
		reads("A vault with AEGIS-256X2 opens only in vaultui.")
		w := tm.current.(*wizardScreen)
		for i := 1; i < len(w.ciphers); i++ {
			tm.keys("down")
			reads("› " + w.ciphers[i].Label())
			reads(w.ciphers[i].OpensIn().Line())
			checkFits(t, tm.View(), sz[0], sz[1])
		}
	}
}

// TestInfoValuesBreakBetweenTokens: at every size, whatever the length of the mount point,
// the info wraps its values between tokens: a date stays whole ("2026-12-" then "07" was
// lipgloss breaking at the "-"), and no line ends inside a word.
func TestInfoValuesBreakBetweenTokens(t *testing.T) {
	midToken := regexp.MustCompile(`[0-9A-Za-z]-$`)
	for _, sz := range layoutSizes {
		w, h := sz[0], sz[1]
		tm := busyModel(t)
		tm.resize(w, h)
		for pad := 0; pad < 24; pad++ {
			ms := mountWork(tm.fb, 0, 0)
			ms[0].MountPoint += strings.Repeat("x", pad)
			tm.send(mountsMsg(ms))
			tm.keys("i")
			lines := tm.current.(*infoScreen).lines()
			if !strings.Contains(strings.Join(lines, "\n"), "2026-11-30") {
				t.Errorf("%dx%d, mount point +%d: the date is not whole:\n%s", w, h, pad, strings.Join(lines, "\n"))
			}
			for _, l := range lines {
				l = strings.TrimRight(ansi.Strip(l), " ")
				if midToken.MatchString(l) || lipgloss.Width(l) > w-2 {
					t.Errorf("%dx%d, mount point +%d: %q breaks inside a token or is too wide", w, h, pad, l)
				}
			}
			tm.keys("esc")
		}
	}
}

// TestLiveTotalsFitTheWidth: the live view's totals never wrap by accident. At 60x16 they fit
// one line without the ops rate; at 40x10 they take two planned lines, the ops and errors
// under the bytes; wider, one line with everything.
func TestLiveTotalsFitTheWidth(t *testing.T) {
	want := map[int][]string{
		40:  {"Totals  read 12 MB · written 34 MB", "        1234 ops (56/s) · 0 errors"},
		60:  {"Totals  read 12 MB · written 34 MB · 1234 ops · 0 errors"},
		80:  {"Totals  read 12 MB · written 34 MB · 1234 ops (56/s) · 0 errors"},
		160: {"Totals  read 12 MB · written 34 MB · 1234 ops (56/s) · 0 errors"},
	}
	for _, sz := range layoutSizes {
		w, h := sz[0], sz[1]
		tm := busyModel(t)
		tm.resize(w, h)
		tm.keys("enter")
		for i := 0; i < 3; i++ { // a small window pages the live view
			tm.View()
			tm.send(tea.KeyMsg{Type: tea.KeyPgDown})
		}
		lines := strings.Split(tm.View(), "\n")
		at := -1
		for i, l := range lines {
			if strings.Contains(l, "Totals") {
				at = i
			}
		}
		if at < 0 || at+len(want[w]) > len(lines) {
			t.Errorf("%dx%d: no totals:\n%s", w, h, tm.View())
			continue
		}
		for i, wl := range want[w] {
			if got := strings.TrimRight(lines[at+i], " "); got != " "+wl {
				t.Errorf("%dx%d: totals line %d is %q, want %q", w, h, i, got, " "+wl)
			}
		}
		if next := strings.TrimSpace(lines[at+len(want[w])]); next != "" && !strings.Contains(next, "esc back") && !strings.Contains(next, "more") {
			t.Errorf("%dx%d: the totals run on: %q", w, h, next)
		}
	}
}

// TestTotalsViewFits: however large the numbers, the totals take at most two lines, none
// wider than w, the second under the first's values.
func TestTotalsViewFits(t *testing.T) {
	big := mountmgr.Stats{BytesRead: 987654321098, BytesWritten: 123456789012, Ops: 123456789, OpsPerSec: 98765, Errors: 4321}
	for w := 20; w <= 200; w++ {
		v := totalsView(big, w)
		lines := strings.Split(v, "\n")
		if len(lines) > 2 || !strings.HasPrefix(lines[0], "Totals  ") {
			t.Fatalf("width %d: %q", w, v)
		}
		if len(lines) == 2 && !regexp.MustCompile(`^ {8}[0-9]`).MatchString(lines[1]) {
			t.Errorf("width %d: the second line is not under the values: %q", w, lines[1])
		}
		for _, l := range lines {
			if lipgloss.Width(l) > w {
				t.Errorf("width %d: %q is too wide", w, l)
			}
		}
	}
}

// TestFitTitle: a title gives way from its last part: cut where a word of it is left, else
// dropped; the parts before it stay whole.
func TestFitTitle(t *testing.T) {
	for _, c := range []struct {
		t    string
		w    int
		want string
	}{
		{"new vault · step 4 of 6 · Cipher", 40, "new vault · step 4 of 6 · Cipher"},
		{"new vault · step 4 of 6 · Cipher", 27, "new vault · step 4 of 6"},
		{"new vault · step 6 of 6 · Advanced options", 36, "new vault · step 6 of 6 · Advanced…"},
		{"new vault · step 6 of 6 · Advanced options", 30, "new vault · step 6 of 6 · Adv…"},
		{"new vault · step 6 of 6 · Advanced options", 29, "new vault · step 6 of 6"},
		{"info · a-rather-long-vault-name", 20, "info · a-rather-lon…"},
		{"new vault · step 4 of 6 · Cipher", 14, "new vault"},
		{"speed test", 6, "speed…"},
	} {
		got := fitTitle(c.t, c.w)
		if got != c.want {
			t.Errorf("fitTitle(%q, %d) = %q, want %q", c.t, c.w, got, c.want)
		}
		if lipgloss.Width(got) > c.w {
			t.Errorf("fitTitle(%q, %d) = %q is too wide", c.t, c.w, got)
		}
	}
}

// TestWizardTitleKeepsTheStep: at 40 columns the wizard's header keeps "step 4 of 6"
// whole; the step's name gives way.
func TestWizardTitleKeepsTheStep(t *testing.T) {
	tm := busyModel(t)
	tm.resize(40, 10)
	tm.keys("n")
	header := strings.Split(tm.View(), "\n")[0]
	if !strings.Contains(header, "new vault · step 1 of 6") || strings.Contains(header, "·…") {
		t.Errorf("header %q", header)
	}
	tm.keys("/data/new.crypt", "enter", "enter", "enter")
	header = strings.Split(tm.View(), "\n")[0]
	if !strings.Contains(header, "step 4 of 6") || strings.Contains(header, "·…") {
		t.Errorf("header %q", header)
	}
}

// TestListColumnsHugTheirContent: on a wide terminal the rows are as wide as the widest
// needs, so the cipher and the rates sit next to the names and states they describe (not 100
// columns away at the terminal's edge), their right edges align, and they stay put while the
// rates change.
func TestListColumnsHugTheirContent(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	tm := newTestModel(t, fb)
	tm.resize(160, 45)
	// ends is where the cipher of work and its rates end.
	ends := func() (cipher, rates int) {
		for _, l := range strings.Split(tm.View(), "\n") {
			l = strings.TrimRight(ansi.Strip(l), " ")
			if strings.HasSuffix(l, "AEGIS-256X2") {
				cipher = lipgloss.Width(l)
			}
			if strings.Contains(l, "write ") {
				rates = lipgloss.Width(l)
			}
		}
		return cipher, rates
	}
	tm.send(mountsMsg(mountWork(fb, 0, 0)))
	c0, r0 := ends()
	if c0 == 0 || c0 > 80 || r0 != c0 {
		t.Errorf("the cipher ends at column %d, the rates at %d: want them together, near the names:\n%s", c0, r0, tm.View())
	}
	tm.send(mountsMsg(mountWork(fb, 123e6, 5e3)))
	if c, r := ends(); c != c0 || r != r0 {
		t.Errorf("the columns moved from %d,%d to %d,%d when the rates changed:\n%s", c0, r0, c, r, tm.View())
	}
	// Where the terminal is narrower than the rows, they take it all, as before.
	tm.resize(40, 10)
	checkFits(t, tm.View(), 40, 10)
	wantView(t, tm, "AEGIS-256X2")
}

// TestListRatesGiveWay: at 40 columns a mounted vault's rates do not fit beside its mount
// point; they give way whole (the live view has them) rather than run off the line.
func TestListRatesGiveWay(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	tm := newTestModel(t, fb)
	t.Setenv("HOME", "/home/u")
	tm.resize(40, 10)
	tm.send(mountsMsg(mountWork(fb, 0, 0)))
	wantView(t, tm, "● mounted at ~/Vaults/work")
	notInView(t, tm, "read ", "write ")
	checkFits(t, tm.View(), 40, 10)
	tm.resize(60, 16)
	wantView(t, tm, "● mounted at ~/Vaults/work", "read 0 B/s  write 0 B/s")
}

// TestListRowsFitAt40: every row of the list fits a 40-column window, whichever row the cursor
// is on, cut with an ellipsis where it must be: a stale mount's "(u cleans up)" and a vault's
// lock note used to be cut by the window's edge mid-word ("(u cleans up", "⚠ no lock on sle").
// The right side gives way first, then the path is cut in its middle, then the text after a
// word.
func TestListRowsFitAt40(t *testing.T) {
	tm := busyModel(t)
	tm.resize(40, 10)
	for i := 0; i < 5; i++ {
		checkFits(t, tm.View(), 40, 10)
		if v := tm.View(); strings.Contains(v, "⚠ no lock") && !strings.Contains(v, "⚠ no lock on sleep here") {
			t.Errorf("the lock note is cut:\n%s", v)
		}
		tm.keys("j")
	}
	wantView(t, tm, "a-rather-long-vault-n…")
	tm.keys("k", "k")
	wantView(t, tm, "✗ stale mount at ~/…/old (u cleans…")
}
