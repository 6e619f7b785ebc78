package ui

import (
	"testing"
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
