package extpass

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/internal/testdeps"
	"github.com/vaultui/vaultui/keyring/keyringtest"
)

// TestRunSecretTool: libsecret's secret-tool, the usual password program of a desktop
// without vaultui's keyring support, against a real gnome-keyring on a private bus.
func TestRunSecretTool(t *testing.T) {
	testdeps.Need(t, testdeps.SecretTool)
	keyringtest.StartService(t)
	store := exec.Command("secret-tool", "store", "--label=work vault", "vaultui", "work")
	store.Stdin = strings.NewReader("pass word from the keyring")
	if out, err := store.CombinedOutput(); err != nil {
		t.Fatalf("secret-tool store: %v: %s", err, out)
	}
	pw, err := Run(context.Background(), Split("secret-tool lookup vaultui work"), Options{})
	if err != nil || string(pw) != "pass word from the keyring" {
		t.Fatalf("got %q, %v", pw, err)
	}
	// Nothing stored under that attribute: secret-tool prints nothing and exits 1.
	if _, err := Run(context.Background(), Split("secret-tool lookup vaultui other"), Options{}); err == nil || !strings.Contains(err.Error(), "secret-tool exited with status 1") {
		t.Fatalf("lookup of a missing entry: %v", err)
	}
}
