package mountmgr

import (
	"context"
	"errors"
	"testing"

	"github.com/vaultui/vaultui/keyring/keyringtest"
	"github.com/vaultui/vaultui/registry"
)

// TestLockPolicyWorks: the front ends learn what the daemon's session watch will find, and
// a new vault gets the sleep policy only where it can work.
func TestLockPolicyWorks(t *testing.T) {
	t.Setenv("DBUS_SYSTEM_BUS_ADDRESS", keyringtest.StartBus(t)) // a bus without logind
	err := LockPolicyWorks(context.Background())
	if !errors.Is(err, ErrNoLogind) || err.Error() != "lock on sleep and screen lock unavailable: logind is not running" {
		t.Fatalf("without logind: %v", err)
	}
	if p := DefaultLockPolicy(err); p != registry.LockNever {
		t.Fatalf("default policy without logind: %s", p)
	}
	t.Setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent/bus")
	if err := LockPolicyWorks(context.Background()); !errors.Is(err, ErrNoLogind) {
		t.Fatalf("without a system bus: %v", err)
	}
	startFakeLogind(t, t.TempDir())
	if err := LockPolicyWorks(context.Background()); err != nil {
		t.Fatalf("with logind: %v", err)
	}
	if p := DefaultLockPolicy(nil); p != registry.LockSleep {
		t.Fatalf("default policy with logind: %s", p)
	}
}
