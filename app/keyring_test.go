package app

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/vaultui/vaultui/keyring"
	"github.com/vaultui/vaultui/keyring/keyringtest"
)

// TestKeyringTrouble: no keyring at all is no news where the password is asked anyway; a
// keyring that did not answer, stayed locked or failed is; each has a short reason.
func TestKeyringTrouble(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+filepath.Join(t.TempDir(), "missing"))
	_, noBus := keyring.Open(context.Background(), keyring.Options{})

	// A bus that accepts and never answers: the keyring is there but silent.
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", keyringtest.SilentBus(t))
	_, silent := keyring.Open(context.Background(), keyring.Options{CallTimeout: 200 * time.Millisecond})

	for _, c := range []struct {
		err  error
		why  string
		news bool
	}{
		{noBus, "no D-Bus session bus", false},
		{silent, "D-Bus session bus timed out", true},
		{fmt.Errorf("%w: the unlock prompt was dismissed", keyring.ErrLocked), "keyring is locked: the unlock prompt was dismissed", true},
	} {
		why, news := KeyringTrouble(c.err)
		if why != c.why || news != c.news {
			t.Errorf("KeyringTrouble(%v) = %q, %v; want %q, %v", c.err, why, news, c.why, c.news)
		}
	}
}
