package ui

import (
	"errors"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/registry"
	"github.com/vaultui/vaultui/vault"
)

// Issue 20: every flow acts on what the screen names.

// TestAddSelectsTheNewVault: after "Added gc. Press m to mount it." m mounts gc, not the
// vault the cursor was on before.
func TestAddSelectsTheNewVault(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	tm := newTestModel(t, fb)
	tm.keys("a", "/data/gc.crypt", "tab", "gc", "enter")
	wantView(t, tm, "Added gc. Press m to mount it.")
	if v, _ := tm.list.selected(); v.Name != "gc" {
		t.Fatalf("after adding gc the list selects %q", v.Name)
	}
	tm.keys("m")
	s, ok := tm.current.(*mountScreen)
	if !ok || s.v.Name != "gc" {
		t.Fatalf("m after adding gc opened %T for %+v", tm.current, s)
	}
}

// TestCreateSelectsTheNewVault: the same after the wizard, with a filter that hides the new
// vault (the filter gives way).
func TestCreateSelectsTheNewVault(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	tm := newTestModel(t, fb)
	tm.keys("/", "work", "enter")
	wizardTo(t, tm)
	tm.keys("enter", "pw", "enter", "pw", "enter", "enter", "y")
	wantView(t, tm, "Created new. Press m to mount it.")
	if v, _ := tm.list.selected(); v.Name != "new" {
		t.Fatalf("after creating new the list selects %q", v.Name)
	}
	tm.keys("m")
	if s, ok := tm.current.(*mountScreen); !ok || s.v.Name != "new" {
		t.Fatalf("m after creating new opened %T", tm.current)
	}
}

// TestConflictCountsReachTheListFromAnyScreen: a round of counting that ends while another
// screen is open still reaches the list, so the marker is current and counting goes on.
func TestConflictCountsReachTheListFromAnyScreen(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	tm := newTestModel(t, fb)
	notInView(t, tm, "⚑")
	tm.keys("i") // another screen is open while the next round runs
	workConflicts(fb)
	tm.send(refreshRegistry{})
	if tm.list.counting {
		t.Fatal("the list is still counting after the round ended behind another screen")
	}
	tm.keys("esc")
	wantView(t, tm, "work  ⚑ 3 conflicts")
	// And the next round runs: counting did not stop for good.
	before := fb.counts
	tm.send(refreshRegistry{})
	if fb.counts == before {
		t.Fatal("no new round of counting after a refresh")
	}
}

// TestFolderMadeTwiceSaidAlike: a folder made on two computers (a diriv conflict copy) is
// named the same way in the row, in info and in c, which no longer says "No conflict copies"
// under a row flagged with conflicts.
func TestFolderMadeTwiceSaidAlike(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	fb.splitDirs = map[string]int{"/data/work.crypt": 1}
	tm := newTestModel(t, fb)
	wantView(t, tm, "work  ⚑ folder made twice")
	tm.keys("i")
	wantView(t, tm, "1 folder made on two")
	tm.keys("esc", "c", "hunter22", "enter")
	wantView(t, tm, "No conflict copies of files in /data/work.crypt.", "Also 1 folder made on two computers")
	notInView(t, tm, "No conflict copies in")
}

// TestDetachedMountLooksDetached: after a lazy unmount the daemon still reports the mount,
// detached; the row, the header, info and the live view say so instead of "mounted at".
func TestDetachedMountLooksDetached(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	tm := newTestModel(t, fb)
	ms := mountWork(fb, 0, 2e6)
	ms[0].Detached = true
	tm.send(mountsMsg(ms))
	wantView(t, tm, "◌ detached, open files still served", "write 2.0 MB/s", "2 vaults, 0 mounted")
	notInView(t, tm, "● mounted at", "● 1 mounted")
	tm.keys("u")
	wantView(t, tm, "work is already detached")
	if len(fb.unmounts)+len(fb.lazyUnmounts) != 0 {
		t.Fatalf("u on a detached mount unmounted %v %v", fb.unmounts, fb.lazyUnmounts)
	}
	tm.keys("i")
	wantView(t, tm, "detached from /home/u/Vaults/work")
	tm.keys("esc", "enter")
	wantView(t, tm, "detached from /home/u/Vaults/work", "files opened before are served")
	tm.keys("esc")
	// It can be mounted again meanwhile: m opens the prompt.
	tm.keys("m")
	if _, ok := tm.current.(*mountScreen); !ok {
		t.Fatalf("m on a detached vault opened %T", tm.current)
	}
}

// TestMasterKeyAsksBeforeLeaving: q and esc on the master key (shown once) ask first; n
// stays, y leaves (q quits the app, esc goes back to the list), and the key is wiped.
func TestMasterKeyAsksBeforeLeaving(t *testing.T) {
	tm := newTestModel(t, newFake())
	w := wizardTo(t, tm)
	tm.keys("enter", "pw", "enter", "pw", "enter", "enter")
	wantView(t, tm, "master key", "Press y")
	tm.keys("q")
	if tm.quitting {
		t.Fatal("q on the master key quit at once")
	}
	wantView(t, tm, "Quit vaultui without storing the master key? It is not shown again. y/n")
	tm.keys("n")
	wantView(t, tm, "Press y once you have stored it.")
	tm.keys("esc")
	if tm.current != w {
		t.Fatal("esc on the master key left at once")
	}
	wantView(t, tm, "Back to the list without storing the master key?")
	tm.keys("esc") // esc answers no
	wantView(t, tm, "Press y once you have stored it.")
	tm.keys("esc", "y")
	if tm.current != nil || w.masterKey != nil {
		t.Fatalf("esc, y: screen %T, key held %v", tm.current, w.masterKey != nil)
	}
	wantView(t, tm, "Created new.")

	// q, y quits the app.
	tm2 := newTestModel(t, newFake())
	w2 := wizardTo(t, tm2)
	tm2.keys("enter", "pw", "enter", "pw", "enter", "enter", "q", "y")
	if !tm2.quitting || w2.masterKey != nil {
		t.Fatalf("q, y: quitting %v, key held %v", tm2.quitting, w2.masterKey != nil)
	}
}

func TestDefaultNameDropsTheExtension(t *testing.T) {
	for dir, want := range map[string]string{
		"/home/u/Sync/work.enc": "work", "/data/Private.crypt": "Private", "/data/.secret": "secret",
		"/data/photos": "photos", "/data/my.vault.crypt": "my.vault", "/": "vault",
	} {
		if got := app.DefaultName(dir); got != want {
			t.Errorf("app.DefaultName(%q) = %q, want %q", dir, got, want)
		}
	}
}

// TestWizardSuggestionsFollowTheAnswers: the name and mount point are recomputed from the
// folder and name until the user types them; cleared fields show the current suggestion.
func TestWizardSuggestionsFollowTheAnswers(t *testing.T) {
	fb := newFake()
	fb.vaults = []Vault{{Entry: registry.Entry{Name: "work", CipherDir: "/data/work.crypt"}}}
	tm := newTestModel(t, fb)
	tm.keys("n")
	w := tm.current.(*wizardScreen)
	tm.keys("/home/u/Sync/work.enc", "enter")
	// "work" is taken: the suggestion is the next free name.
	if got := w.forms[stepName].fields[0].input.Placeholder; got != "work2" {
		t.Fatalf("name suggested for work.enc: %q", got)
	}
	tm.keys("ctrl+u", "job", "enter")
	wantView(t, tm, "step 3 of 6", "/home/u/Vaults/job")
	tm.keys("enter") // take it
	// Fixing the name moves the mount point taken from the suggestion.
	tm.keys("esc", "esc", "ctrl+u", "office", "enter")
	if got := w.forms[stepMountPoint].value(0); got != "/home/u/Vaults/office" {
		t.Fatalf("mount point after renaming to office: %q", got)
	}
	// A cleared field shows the suggestion of the current answers.
	tm.keys("ctrl+u")
	wantView(t, tm, "/home/u/Vaults/office")
	// A mount point the user typed stays.
	tm.keys("/mnt/mine", "enter", "esc", "esc", "ctrl+u", "desk", "enter")
	if got := w.forms[stepMountPoint].value(0); got != "/mnt/mine" {
		t.Fatalf("typed mount point replaced by %q", got)
	}
	// A new folder changes a name taken from the suggestion, not a typed one.
	tm.keys("esc", "esc", "ctrl+u", "/data/other.crypt", "enter")
	if got := w.forms[stepName].value(0); got != "desk" {
		t.Fatalf("typed name replaced by %q", got)
	}
	tm.keys("ctrl+u")
	wantView(t, tm, "other")
	tm.keys("enter")
	if got := w.forms[stepName].value(0); got != "other" {
		t.Fatalf("name after clearing: %q", got)
	}
}

// TestWizardSuggestsAFreeFolder: the folder suggestion skips folders that exist and are not
// empty, so taking it never fails with "directory is not empty".
func TestWizardSuggestsAFreeFolder(t *testing.T) {
	fb := newFake()
	fb.nonEmpty = map[string]bool{expandPath("~/Private.crypt"): true, expandPath("~/Private2.crypt"): true}
	tm := newTestModel(t, fb)
	tm.keys("n")
	wantView(t, tm, "~/Private3.crypt")
	tm.keys("enter")
	wantView(t, tm, "step 2 of 6", "Private3")
}

// TestFsckProgressFromTheFirstMoment: the check says what it does at once (unlocking, then
// counting), and its bar follows bytes of content: one big file is not "0% 0/1" until it
// is done.
func TestFsckProgressFromTheFirstMoment(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	tm := newTestModel(t, fb)
	tm.keys("f")
	f := tm.current.(*fsckScreen)
	f.running, f.started = true, false // as right after enter
	wantView(t, tm, "Unlocking the vault (scrypt)…")
	tm.send(fsckProgressMsg{job: f.job, p: vault.FsckProgress{Counting: true, Total: 1000, TotalBytes: 3e9}})
	wantView(t, tm, "Counting what to check: 1000 entries, 3.0 GB so far…")
	tm.send(fsckProgressMsg{job: f.job, p: vault.FsckProgress{Done: 0, Total: 6, Bytes: 1.5e9, TotalBytes: 3e9, Path: "movies/big.mkv"}})
	wantView(t, tm, " 50%", "1.5 GB of 3.0 GB · 0 of 6 entries", "movies/big.mkv")
	golden(t, tm, "fsck_bytes")
}

// TestLockPolicyThatCannotWork: without logind, a vault whose policy locks on sleep says in
// its row and in info that it cannot here; new vaults (wizard, add) get never, and choosing
// sleep in the wizard says it cannot work.
func TestLockPolicyThatCannotWork(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	fb.vaults[0].Lock, fb.vaults[1].Lock = "sleep", "never"
	fb.lockErr = errors.New("lock on sleep and screen lock unavailable: logind is not running")
	tm := newTestModel(t, fb)
	tm.run(tm.checkLock())
	if v := tm.View(); strings.Count(v, "⚠ no lock on sleep here") != 1 {
		t.Fatalf("want the warning in work's row only:\n%s", v)
	}
	tm.keys("i")
	wantView(t, tm, "Lock", "sleep: unmounted before the machine sleeps. Cannot work", "logind is not")
	tm.keys("esc")

	// The wizard proposes never, and says so when sleep is chosen anyway.
	wizardTo(t, tm)
	tm.keys("enter", "pw", "enter", "pw", "enter")
	wantView(t, tm, "step 6 of 6", "Lock", "‹ never ›")
	notInView(t, tm, "cannot work here")
	tm.keys("tab", "tab", "tab", "tab", " ")
	wantView(t, tm, "‹ sleep ›", "cannot work here: lock on sleep and screen lock", "logind is not running")
	tm.keys(" ", " ") // back to never
	tm.keys("enter")
	if len(fb.created) != 1 || fb.created[0].Lock != "never" {
		t.Fatalf("created %+v, want lock never", fb.created)
	}
	tm.keys("y", "a", "/data/gc.crypt", "enter")
	if got := fb.vaults[len(fb.vaults)-1]; got.Name != "gc" || got.Lock != "never" {
		t.Fatalf("added %+v, want lock never", got)
	}

	// Where logind runs, new vaults lock on sleep and nothing warns.
	fb2 := newFake()
	tm2 := newTestModel(t, fb2)
	tm2.run(tm2.checkLock())
	tm2.keys("a", "/data/gc.crypt", "enter")
	if got := fb2.vaults[0]; got.Lock != "sleep" {
		t.Fatalf("added %+v, want lock sleep", got)
	}
	notInView(t, tm2, "⚠")
}

// TestQuitWhileCreatingWaitsForTheKey: q while scrypt runs does not lose the master key: it
// is shown, with the question, once the vault exists.
func TestQuitWhileCreatingWaitsForTheKey(t *testing.T) {
	tm := newTestModel(t, newFake())
	w := wizardTo(t, tm)
	tm.keys("enter", "pw", "enter", "pw", "enter")
	// Create, as enter does once app.CheckCreate agrees, but hold the result.
	cmd := w.Update(w.submit()())
	if w.step != stepCreating {
		t.Fatalf("after the check the wizard is at step %v, not creating", w.step)
	}
	tm.keys("q")
	if tm.quitting {
		t.Fatal("q while creating quit before the master key was shown")
	}
	tm.run(cmd)
	wantView(t, tm, "master key", "Quit vaultui without storing the master key? It is not shown again. y/n")
	tm.keys("y")
	if !tm.quitting {
		t.Fatal("y did not quit")
	}
}

// TestCtrlCInTheWizardAsks: ctrl+c in the wizard asks before it drops what was typed (it
// quit at once, exit 0, no question); n stays where the wizard was, with what was typed; y
// quits, and so does a second ctrl+c (a user who insists).
func TestCtrlCInTheWizardAsks(t *testing.T) {
	tm := newTestModel(t, newFake())
	tm.keys("n", "/data/half")
	w := tm.current.(*wizardScreen)
	tm.keys("ctrl+c")
	if tm.quitting {
		t.Fatal("ctrl+c in the wizard quit at once")
	}
	wantView(t, tm, "Quit vaultui? Nothing has been created. y/n")
	tm.keys("n")
	if tm.current != w || w.forms[stepDir].value(0) != "/data/half" {
		t.Fatalf("n: screen %T, folder %q", tm.current, w.forms[stepDir].value(0))
	}
	if strings.Contains(tm.View(), "Quit vaultui?") {
		t.Error("n left the question on the screen")
	}
	tm.keys("y") // typed into the folder field now, not an answer
	if tm.quitting || w.forms[stepDir].value(0) != "/data/halfy" {
		t.Fatalf("y after n: quitting %v, folder %q", tm.quitting, w.forms[stepDir].value(0))
	}
	tm.keys("ctrl+c", "y")
	if !tm.quitting {
		t.Fatal("ctrl+c, y did not quit")
	}

	tm2 := newTestModel(t, newFake())
	wizardTo(t, tm2) // the cipher step: a list, where q is a key too
	tm2.keys("q")
	wantView(t, tm2, "Quit vaultui? Nothing has been created. y/n")
	for _, size := range []tea.WindowSizeMsg{{Width: 40, Height: 10}, {Width: 60, Height: 16}} {
		tm2.send(size) // the step is longer than these windows: the question stays in view
		wantView(t, tm2, "Quit vaultui?", "y/n")
	}
	tm2.keys("ctrl+c")
	if !tm2.quitting {
		t.Fatal("a second ctrl+c did not quit")
	}
}

// TestCtrlCWhileCreatingWaitsForTheKey: ctrl+c while scrypt runs is q: the vault is not left
// half made (an empty, unregistered folder), and its master key is shown before quitting.
func TestCtrlCWhileCreatingWaitsForTheKey(t *testing.T) {
	tm := newTestModel(t, newFake())
	w := wizardTo(t, tm)
	tm.keys("enter", "pw", "enter", "pw", "enter")
	cmd := w.Update(w.submit()())
	if w.step != stepCreating {
		t.Fatalf("after the check the wizard is at step %v, not creating", w.step)
	}
	tm.keys("ctrl+c")
	if tm.quitting {
		t.Fatal("ctrl+c while creating quit before the vault was made")
	}
	wantView(t, tm, "The master key is shown before you quit")
	tm.run(cmd)
	wantView(t, tm, "master key", "Quit vaultui without storing the master key? It is not shown again. y/n")
	tm.keys("ctrl+c") // insists
	if !tm.quitting || w.masterKey != nil {
		t.Fatalf("a second ctrl+c: quitting %v, key held %v", tm.quitting, w.masterKey != nil)
	}
}

// TestEmptyListOffersWhatWorks: without vaults the help bar offers no vault actions.
func TestEmptyListOffersWhatWorks(t *testing.T) {
	tm := newTestModel(t, newFake())
	wantView(t, tm, "n new vault", "a add existing")
	notInView(t, tm, "m mount", "u unmount", "enter open")
}
