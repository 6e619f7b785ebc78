package ui

import (
	"context"
	"errors"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/vaultui/vaultui/keyring"
	"github.com/vaultui/vaultui/keyring/keyringtest"
)

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

// TestMountSaysKeyringUnavailable: when the keyring cannot be asked whether it holds the
// vault's password (here it timed out), the mount form says so where the "stored" hint goes,
// instead of showing nothing as if none were stored; the typed password still mounts.
func TestMountSaysKeyringUnavailable(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", keyringtest.SilentBus(t))
	_, err := keyring.Open(context.Background(), keyring.Options{CallTimeout: 100 * time.Millisecond})
	if !errors.Is(err, keyring.ErrNoAnswer) {
		t.Fatalf("keyring on a silent bus: %v, want one that timed out", err)
	}
	fb := newFake()
	twoVaults(fb)
	fb.stored = map[string]string{"/data/work.crypt": fb.password}
	fb.storedErr = err
	tm := newTestModel(t, fb)
	tm.keys("m")
	wantView(t, tm, "no keyring (D-Bus session bus timed out): type the password")
	notInView(t, tm, "stored in the keyring", "asking the keyring")
	golden(t, tm, "unavailable")
	for _, size := range [][2]int{{60, 16}, {160, 45}} {
		tm.send(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		wantView(t, tm, "type the password")
		checkFits(t, tm.View(), size[0], size[1])
	}
	tm.send(tea.WindowSizeMsg{Width: 80, Height: 24})

	tm.keys("enter")
	wantView(t, tm, "Type the vault's password.")
	tm.keys("hunter22", "enter")
	wantView(t, tm, "work mounted at /home/u/Vaults/work.")
	if last := fb.mountReqs[len(fb.mountReqs)-1]; last.Password == nil {
		t.Fatalf("mount request %+v, want the typed password (the fake mounts only with the right one)", last)
	}
}

// TestMountAsksKeyringInTheBackground: a slow keyring does not hold up the mount form: it
// says it is asking, takes typing meanwhile, and an enter on the empty field says to wait or
// type; the answer, when it comes, is shown. An answer for another vault is not taken.
func TestMountAsksKeyringInTheBackground(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	fb.stored = map[string]string{"/data/work.crypt": fb.password}
	fb.storedWait = make(chan struct{}) // never answers by itself: the test delivers it
	tm := newTestModel(t, fb)
	tm.keys("m")
	wantView(t, tm, "asking the keyring…")
	tm.keys("enter")
	wantView(t, tm, "The keyring has not answered yet: wait for it, or type the password.")
	if len(fb.mountReqs) != 0 {
		t.Fatalf("enter mounted before the keyring answered: %+v", fb.mountReqs)
	}
	tm.send(storedChecked{dir: "/data/photos.crypt", has: true})
	wantView(t, tm, "asking the keyring…")

	tm.send(storedChecked{dir: "/data/work.crypt", has: true})
	notInView(t, tm, "asking the keyring", "not answered yet")
	wantView(t, tm, "stored in the keyring: enter mounts with it")
	tm.keys("enter")
	wantView(t, tm, "work mounted at")
	if last := fb.mountReqs[len(fb.mountReqs)-1]; last.Password != nil {
		t.Fatalf("mount request %+v, want one from the keyring", last)
	}
}
