package ui

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/vault"
)

func workConflicts(fb *fakeBackend) {
	fb.conflicts = map[string][]vault.ConflictEntry{"/data/work.crypt": {
		{Path: "docs/report (conflict 2026-11-30 Syncthing).odt", Of: "docs/report.odt", Tool: "Syncthing", Date: "2026-11-30", Host: "ABCDEF7", Size: 12345, Newer: "copy"},
		{Path: "notes (conflict 2026-11-29 Dropbox)", Of: "notes", Tool: "Dropbox", Date: "2026-11-29", Host: "Ann", Size: 900, Newer: "original"},
		{Path: "photos (conflict Google Drive)", Of: "photos", Tool: "Google Drive", Dir: true},
	}}
}

func TestConflictCountInListAndInfo(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	workConflicts(fb)
	tm := newTestModel(t, fb)
	wantView(t, tm, "work  ⚑ 3 conflicts")
	notInView(t, tm, "photos  ⚑")
	golden(t, tm, "list")
	tm.keys("i")
	wantView(t, tm, "Conflicts", "3 sync-conflict copies (c in the list settles them)")
	tm.keys("esc", "j", "i")
	wantView(t, tm, "no sync-conflict copies")

	// A count that stopped early is a lower bound.
	tm.c.conflicts["/data/work.crypt"] = ConflictCount{N: 7}
	if got := tm.c.conflicts["/data/work.crypt"].rowNote(); got != "7+ conflicts" {
		t.Fatalf("incomplete count shown as %q", got)
	}
	if got := (ConflictCount{N: 7}).infoText(); got != "at least 7 sync-conflict copies (counting stopped in a big vault) (c in the list settles them)" {
		t.Fatalf("info of an incomplete count: %q", got)
	}
	// A folder made on two computers is named as such, beside the copies.
	tm.c.conflicts["/data/work.crypt"] = ConflictCount{N: 2, Complete: true, SplitDirs: 1}
	if got := tm.c.conflicts["/data/work.crypt"].rowNote(); got != "2 conflicts · folder made twice" {
		t.Fatalf("count with a split folder shown as %q", got)
	}
	tm.c.conflicts["/data/work.crypt"] = ConflictCount{Complete: true, SplitDirs: 1}
	if got := tm.c.conflicts["/data/work.crypt"].rowNote(); got != "folder made twice" {
		t.Fatalf("a split folder alone shown as %q", got)
	}
	if got := (ConflictCount{Complete: true, SplitDirs: 1}).infoText(); got != "no sync-conflict copies of files; 1 folder made on two computers (a sync tool kept a second gocryptfs.diriv) (c in the list settles them)" {
		t.Fatalf("info of a split folder: %q", got)
	}
}

func TestConflictsLockedVault(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	workConflicts(fb)
	tm := newTestModel(t, fb)
	tm.keys("c")
	s, ok := tm.current.(*conflictsScreen)
	if !ok {
		t.Fatalf("c opened %T", tm.current)
	}
	wantView(t, tm, "conflicts · work", "The vault is locked", "Password")
	if !s.typing() {
		t.Fatal("the password prompt does not have the keyboard")
	}
	tm.keys("enter")
	wantView(t, tm, "Type the vault's password.")
	tm.keys("nope", "enter")
	wantView(t, tm, "Wrong password. Try again.")
	if fb.sessions != 0 {
		t.Fatal("a wrong password opened a session")
	}
	tm.keys("hunter22", "enter")
	wantView(t, tm, "3 conflict copies in /data/work.crypt:",
		"› docs/report (conflict 2026-11-30 Syncthing).odt",
		"of docs/report.odt · Syncthing · 2026-11-30 · 12 kB · copy is newer",
		"of notes · Dropbox (Ann) · 2026-11-29 · 900 B · original is newer",
		"of photos · Google Drive · folder · original is gone")
	golden(t, tm, "copies")

	// Navigation: ↓ and j go down, ↑ up; k is "keep copy" here, not up.
	tm.keys("j", "down", "down")
	if s.cursor != 2 {
		t.Fatalf("cursor %d after j, ↓, ↓; want 2 (the last)", s.cursor)
	}
	tm.keys("up")
	if s.cursor != 1 {
		t.Fatalf("cursor %d after ↑, want 1", s.cursor)
	}

	// Keep original deletes the copy: only after y.
	tm.keys("o")
	wantView(t, tm, "Delete the copy notes (conflict 2026-11-29 Dropbox) and keep the original? y/n")
	tm.keys("n")
	wantView(t, tm, "Nothing changed.")
	tm.keys("o", "esc")
	if len(fb.settled) != 0 || tm.current != s {
		t.Fatalf("settled %v without confirmation (screen %T)", fb.settled, tm.current)
	}
	tm.keys("o", "y")
	wantView(t, tm, "Deleted the copy notes (conflict 2026-11-29 Dropbox); the original stays.", "2 conflict copies")
	notInView(t, tm, "of notes ·")

	// Keep copy replaces the original: only after y.
	tm.keys("up")
	tm.keys("k")
	wantView(t, tm, "Replace docs/report.odt with the copy (the original's content is lost)? y/n")
	if s.cursor != 0 {
		t.Fatal("k moved the cursor while asking")
	}
	tm.keys("n")
	if len(fb.settled) != 1 {
		t.Fatalf("settled %v after declining", fb.settled)
	}

	// Errors show inline and change nothing.
	fb.settleErr = errors.New("docs/report.odt: permission denied")
	tm.keys("k", "y")
	wantView(t, tm, "docs/report.odt: permission denied", "2 conflict copies")
	tm.keys("k", "y")
	wantView(t, tm, "The copy replaced the original; it is now docs/report.odt.")
	notInView(t, tm, "permission denied")

	// Keep both asks nothing: nothing is deleted.
	tm.keys("b")
	wantView(t, tm, "Kept both: the copy stays as photos (conflict Google Drive).", "No conflict copies in /data/work.crypt.")
	want := []string{
		"notes (conflict 2026-11-29 Dropbox) 1",
		"docs/report (conflict 2026-11-30 Syncthing).odt 2",
		"photos (conflict Google Drive) 0",
	}
	if !reflect.DeepEqual(fb.settled, want) {
		t.Fatalf("settled %q, want %q", fb.settled, want)
	}
	// Nothing is left to act on.
	tm.keys("b", "o", "k")
	if len(fb.settled) != 3 || s.confirm != nil {
		t.Fatalf("acted on an empty list: %v", fb.settled)
	}

	tm.keys("esc")
	if tm.current != nil {
		t.Fatalf("esc left %T open", tm.current)
	}
	if fb.sessions != 0 {
		t.Fatal("leaving did not close the session (the key stays in memory)")
	}
	wantView(t, tm, "work: no conflict copies left.")
	notInView(t, tm, "⚑")
}

func TestConflictsMountedVault(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	workConflicts(fb)
	tm := newTestModel(t, fb)
	tm.send(mountsMsg(mountWork(fb, 0, 0)))
	tm.keys("c")
	s := tm.current.(*conflictsScreen)
	if s.mountPoint != "/home/u/Vaults/work" || s.typing() {
		t.Fatalf("mounted vault: mount point %q, asks for a password: %v", s.mountPoint, s.typing())
	}
	wantView(t, tm, "3 conflict copies in the mount at /home/u/Vaults/work:")
	notInView(t, tm, "Password", "Cannot list")
	// q quits here: no text field has the keyboard.
	tm.keys("?")
	wantView(t, tm, "b", "keep both", "o", "keep original", "k", "keep copy", "↑", "↓/j")
	tm.keys("?", "esc")
	if fb.sessions != 0 || tm.current != nil {
		t.Fatal("leaving the screen did not close the session")
	}
	// Nothing settled: no reload status.
	notInView(t, tm, "left.")
}

func TestConflictsRefusedOnStaleMount(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	tm := newTestModel(t, fb)
	tm.send(mountsMsg([]mountmgr.MountInfo{{CipherDir: "/data/work.crypt", MountPoint: "/home/u/Vaults/work", Stale: true}}))
	tm.keys("c")
	if tm.current != nil {
		t.Fatalf("c opened %T on a stale mount", tm.current)
	}
	wantView(t, tm, "stale: press u to clean it up first")
}

// TestConflictsLateSessionIsClosed: a session that opens after its screen
// was left (or for an earlier opening of the screen) is closed, not kept.
func TestConflictsLateSessionIsClosed(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	workConflicts(fb)
	tm := newTestModel(t, fb)
	tm.keys("c")
	first := tm.current.(*conflictsScreen)
	tm.keys("hunter22")
	// Enter starts the unlock; leave before its answer is handled.
	cmd := first.Update(tea.KeyMsg{Type: tea.KeyEnter})
	tm.keys("esc", "c")
	second := tm.current.(*conflictsScreen)
	tm.run(cmd) // the first screen's session arrives at the second screen
	if fb.sessions != 0 {
		t.Fatalf("%d sessions open after the first screen was left", fb.sessions)
	}
	if second.sess != nil || !second.typing() {
		t.Fatal("the second screen took the first one's session without a password")
	}
	tm.keys("hunter22", "enter")
	if fb.sessions != 1 || second.sess == nil {
		t.Fatalf("the second screen's own session: %d open", fb.sessions)
	}
	tm.keys("esc")
	if fb.sessions != 0 {
		t.Fatal("leaving did not close the session")
	}
}

// TestSessionGuard: leaving while a copy is being settled closes the session
// only after the settle is done with it.
func TestSessionGuard(t *testing.T) {
	fb := newFake()
	s, _ := fb.OpenConflicts(context.Background(), "/d", "/mnt", nil)
	g := &sessionGuard{s: s}
	if !g.use() {
		t.Fatal("a fresh session refused use")
	}
	g.close()
	if fb.sessions != 1 {
		t.Fatal("closed while in use")
	}
	if g.use() {
		t.Fatal("a closing session was handed out")
	}
	g.done()
	if fb.sessions != 0 {
		t.Fatal("not closed once the last use ended")
	}
	g.close()
	if fb.sessions != 0 {
		t.Fatal("closed twice")
	}
}

// TestConflictsMergeFolderMadeTwice: a folder made on two computers is explained in c and
// offered only what settles it (merging, b); o and k say why not rather than fail.
func TestConflictsMergeFolderMadeTwice(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	fb.stored = map[string]string{"/data/work.crypt": "hunter22"}
	fb.conflicts = map[string][]vault.ConflictEntry{"/data/work.crypt": {
		{Kind: vault.ConflictFolderMadeTwice, Path: "/docs/", Of: "/docs/", Tool: "Syncthing", Entries: 2, Dir: true},
		{Kind: vault.ConflictMadeInSecondFolder, Path: "docs/a.txt", Of: "docs/a.txt", Tool: "Syncthing", Size: 10},
	}}
	tm := newTestModel(t, fb)
	tm.keys("c")
	wantView(t, tm, "Syncthing · folder made twice · b merges 2 entries into it", "b merge the folder")
	tm.keys("o")
	wantView(t, tm, "only settled by merging it: b.")
	if s := tm.current.(*conflictsScreen); s.confirm != nil || len(fb.settled) != 0 {
		t.Fatal("o on a folder made twice asked to delete it")
	}
	tm.keys("b")
	if strings.Join(fb.settled, ",") != fmt.Sprintf("/docs/ %d", vault.KeepBoth) {
		t.Fatalf("settled %q", fb.settled)
	}
	wantView(t, tm, "Merged the folder /docs/ made on two computers.")
}
