package ui

import "testing"

// TestLockedVaultUsesTheKeyring: f and c on a locked vault whose password the keyring holds
// start at once, without asking (they asked although the keyring held it). A stored password
// that stopped working is said, then the prompt takes over.
func TestLockedVaultUsesTheKeyring(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	workConflicts(fb)
	fb.stored = map[string]string{"/data/work.crypt": fb.password}
	tm := newTestModel(t, fb)
	tm.keys("f")
	wantView(t, tm, "No problems found in 4 files")
	tm.keys("esc", "c")
	wantView(t, tm, "3 conflict copies in /data/work.crypt:", "› docs/report (conflict 2026-11-30 Syncthing).odt")
	tm.keys("esc")

	fb.password = "changed elsewhere"
	tm.keys("f")
	wantView(t, tm, "The password stored in the keyring does not unlock this vault", "Password")
	tm.keys("changed elsewhere", "enter")
	wantView(t, tm, "No problems found in 4 files")
}
