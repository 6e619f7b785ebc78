package cli

import (
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/vaultui/vaultui/keyring/keyringtest"
)

// TestKeyringScripts runs testdata/keyring/*.txtar against a real gnome-keyring on a private
// session bus: remember a password, mount without a prompt, a stored password that stopped
// working, forget it, and no keyring at all.
func TestKeyringScripts(t *testing.T) {
	addr := keyringtest.StartService(t).Addr
	testscript.Run(t, mountScriptParams(t, "testdata/keyring", func(env *testscript.Env) {
		env.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
		env.Setenv("KEYRING_BUS", addr)
	}))
}
