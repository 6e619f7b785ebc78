package mountmgr

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/keyring"
	"github.com/vaultui/vaultui/keyring/keyringtest"
	"github.com/vaultui/vaultui/registry"
)

// testAutomountEnv makes the test daemon run automount at start.
const testAutomountEnv = "VAULTUI_TEST_AUTOMOUNT"

// register adds entries to the registry the test daemon reads.
func register(t *testing.T, entries ...registry.Entry) {
	t.Helper()
	regPath, err := registry.DefaultPath()
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := registry.Load(regPath)
	for _, e := range entries {
		if err := reg.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := reg.Save(); err != nil {
		t.Fatal(err)
	}
}

// storePasswords stores each cipherdir's password in the test keyring.
func storePasswords(t *testing.T, passwords map[string][]byte) {
	t.Helper()
	kr, err := keyring.Open(ctx(t), keyring.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer kr.Close()
	for dir, pw := range passwords {
		if err := kr.Set(ctx(t), dir, "test", pw); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAutomountWithKeyring: a daemon started for a login mounts the automount vaults whose
// password is in a real keyring, reports the others, and a later daemon of the same login
// mounts nothing again.
func TestAutomountWithKeyring(t *testing.T) {
	base := daemonEnv(t)
	keyringtest.StartService(t)
	t.Setenv(testAutomountEnv, "1")

	okDir, okMP, okPW := newVault(t, base, crypto.AESGCM)
	noPWDir, noPWMP, _ := newVault(t, base, crypto.AESGCM)
	badDir, badMP, _ := newVault(t, base, crypto.AESGCM)
	manualDir, manualMP, manualPW := newVault(t, base, crypto.AESGCM)
	register(t,
		registry.Entry{Name: "ok", CipherDir: okDir, MountPoint: okMP, MountAtStart: true, ReadOnly: true},
		registry.Entry{Name: "nopw", CipherDir: noPWDir, MountPoint: noPWMP, MountAtStart: true},
		registry.Entry{Name: "bad", CipherDir: badDir, MountPoint: badMP, MountAtStart: true},
		registry.Entry{Name: "manual", CipherDir: manualDir, MountPoint: manualMP})
	storePasswords(t, map[string][]byte{okDir: okPW, badDir: []byte("not the password"), manualDir: manualPW})

	c := connect(t) // starts the daemon, which automounts in the background
	var evs []Event
	var err error
	deadline := time.Now().Add(20 * time.Second)
	for {
		evs, err = c.Events(ctx(t), 0)
		if err == nil && len(evs) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("automount events after 20 s: %+v, %v", evs, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	byDir := map[string]Event{}
	for _, e := range evs {
		byDir[e.CipherDir] = e
	}
	if e := byDir[okDir]; e.Kind != EventMounted {
		t.Errorf("ok vault: %+v, want mounted", e)
	}
	if e := byDir[noPWDir]; e.Kind != EventMountFailed || e.Reason != ReasonAutomount || !strings.Contains(e.Detail, "vaultui mount --remember nopw") {
		t.Errorf("vault without a stored password: %+v", e)
	}
	if e := byDir[badDir]; e.Kind != EventMountFailed || !strings.Contains(e.Detail, "password") {
		t.Errorf("vault with a wrong stored password: %+v", e)
	}
	if _, ok := byDir[manualDir]; ok {
		t.Errorf("a vault without automount was touched: %+v", byDir[manualDir])
	}
	mounts, err := c.Status(ctx(t))
	if err != nil || len(mounts) != 1 || mounts[0].MountPoint != okMP || !mounts[0].ReadOnly {
		t.Fatalf("status after automount: %+v, %v", mounts, err)
	}

	// The user unmounts it; a daemon restarted in the same login leaves it alone.
	if err := c.Unmount(ctx(t), okMP, false); err != nil {
		t.Fatal(err)
	}
	pid := daemonPID(t)
	syscall.Kill(pid, syscall.SIGTERM)
	waitGone(t, pid)
	c2 := connect(t)
	// Wait for the second daemon to say it skipped automount, rather than for a while.
	waitUntil(t, "the second daemon to skip automount", func() bool {
		return strings.Contains(daemonLog(base), "automount: already done in this login session")
	})
	if mounts, err := c2.Status(ctx(t)); err != nil || len(mounts) != 0 {
		t.Fatalf("a second daemon of the same login mounted again: %+v, %v", mounts, err)
	}
	if _, err := os.Stat(filepath.Join(base, "run", "vaultui", automountMarker)); err != nil {
		t.Errorf("no once-per-login marker: %v", err)
	}
}

// TestAutomountWithoutKeyring: no session bus means each automount vault is reported.
func TestAutomountWithoutKeyring(t *testing.T) {
	base := daemonEnv(t)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+filepath.Join(base, "nobus"))
	t.Setenv(testAutomountEnv, "1")
	dir, mp, _ := newVault(t, base, crypto.AESGCM)
	register(t, registry.Entry{Name: "a", CipherDir: dir, MountPoint: mp, MountAtStart: true})
	c := connect(t)
	deadline := time.Now().Add(15 * time.Second)
	for {
		evs, err := c.Events(ctx(t), 0)
		if err == nil && len(evs) > 0 {
			if e := evs[0]; e.Kind != EventMountFailed || !strings.Contains(e.Detail, "no keyring") {
				t.Fatalf("event %+v, want a failed automount saying there is no keyring", e)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no automount event: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestAutomountWaitsForKeyring: at login the daemon can start before the Secret Service is on
// the session bus; automount waits for it instead of reporting every vault as failed.
func TestAutomountWaitsForKeyring(t *testing.T) {
	base := daemonEnv(t)
	svc := keyringtest.StartService(t)
	t.Setenv(testAutomountEnv, "1")
	dir, mp, pw := newVault(t, base, crypto.AESGCM)
	register(t, registry.Entry{Name: "late", CipherDir: dir, MountPoint: mp, MountAtStart: true})
	storePasswords(t, map[string][]byte{dir: pw})
	svc.Stop() // the bus is up, the keyring not yet

	c := connect(t)
	waitUntil(t, "automount to wait for the keyring", func() bool {
		return strings.Contains(daemonLog(base), "automount: waiting up to")
	})
	time.Sleep(1500 * time.Millisecond) // a retry or two with no keyring
	if evs, err := c.Events(ctx(t), 0); err != nil || len(evs) != 0 {
		t.Fatalf("events while the keyring is still coming: %+v, %v", evs, err)
	}
	svc.Start(t)
	waitUntil(t, "the vault to be mounted", func() bool {
		evs, err := c.Events(ctx(t), 0)
		return err == nil && len(evs) > 0
	})
	evs, _ := c.Events(ctx(t), 0)
	if e := evs[0]; e.Kind != EventMounted || e.CipherDir != dir {
		t.Fatalf("event %+v, want %s mounted", e, dir)
	}
}
