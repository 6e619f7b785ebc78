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
