package mountmgr

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/crypto"
)

// connectAs connects as a client of build, starting (or replacing) a daemon that claims the
// same build.
func connectAs(t *testing.T, build string) *Client {
	t.Helper()
	t.Setenv(testBuildEnv, build) // the build of a daemon this client starts
	defer func(was func() string) { clientBuild = was }(clientBuild)
	clientBuild = func() string { return build }
	c, err := Connect(ctx(t))
	if err != nil {
		t.Fatalf("connect as build %s: %v", build, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func daemonOf(t *testing.T, c *Client) DaemonInfo {
	t.Helper()
	info, err := c.Daemon(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// Issue 39 item 12: a daemon of another build (go run's, since rebuilt) is replaced when it
// has nothing mounted; a client of its own build keeps using it.
func TestOtherBuildReplacesIdleDaemon(t *testing.T) {
	daemonEnv(t)
	a := daemonOf(t, connectAs(t, "build-A"))
	if a.Build != "build-A" {
		t.Fatalf("the daemon reports build %q, want build-A", a.Build)
	}
	if again := daemonOf(t, connectAs(t, "build-A")); again.PID != a.PID {
		t.Errorf("a client of the same build replaced the daemon (pid %d, then %d)", a.PID, again.PID)
	}
	c := connectAs(t, "build-B")
	b := daemonOf(t, c)
	if b.Build != "build-B" || b.PID == a.PID {
		t.Fatalf("after a client of build-B: daemon pid %d of build %q; want a new one (not %d) of build-B", b.PID, b.Build, a.PID)
	}
	// Its lock is free (so the new one runs); the process itself is gone soon after.
	waitGone(t, a.PID)
	if n := c.Notice(); n != "" {
		t.Errorf("notice after replacing an idle daemon: %q", n)
	}
}

// A daemon of another build with a vault mounted stays (replacing it would unmount the vault),
// the client says so once, with how to restart it; once unmounted it is replaced.
func TestOtherBuildKeepsDaemonWithMounts(t *testing.T) {
	base := daemonEnv(t)
	cipherdir, mp, pw := newVault(t, base, crypto.AESGCM)
	old := connectAs(t, "build-A")
	if _, err := old.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw}); err != nil {
		t.Fatal(err)
	}
	a := daemonOf(t, old)

	c := connectAs(t, "build-B")
	if got := daemonOf(t, c); got.PID != a.PID || got.Build != "build-A" {
		t.Fatalf("a client of build-B got daemon pid %d of build %q; want the one with the mount, pid %d of build-A", got.PID, got.Build, a.PID)
	}
	n := c.Notice()
	for _, want := range []string{"another build", "build-A", "build-B", "1 vault mounted", "vaultui unmount --all"} {
		if !strings.Contains(n, want) {
			t.Errorf("notice %q lacks %q", n, want)
		}
	}
	if err := os.WriteFile(filepath.Join(mp, "still"), []byte("here"), 0o644); err != nil {
		t.Errorf("the mount does not work after a client of another build came: %v", err)
	}
	if n := connectAs(t, "build-B").Notice(); n != "" {
		t.Errorf("a second client of build-B was told again: %q", n)
	}
	if n := connectAs(t, "build-C").Notice(); n == "" {
		t.Errorf("a client of a third build was not told")
	}

	// As the notice says: unmount --all, then any command runs this build's daemon.
	if err := c.UnmountAll(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if got := daemonOf(t, connectAs(t, "build-B")); got.Build != "build-B" || got.PID == a.PID {
		t.Errorf("after unmount --all: daemon pid %d of build %q; want a new one of build-B", got.PID, got.Build)
	}
}

// A daemon of an unknown build (ours "", the executable unreadable) is used as is: there is no
// telling it is another.
func TestUnknownBuildKeepsDaemon(t *testing.T) {
	c := &Client{daemon: DaemonInfo{Build: "build-A"}}
	if !c.sameBuild("") || !c.sameBuild("build-A") || c.sameBuild("build-B") {
		t.Errorf("sameBuild: want true for an unknown or equal build, false for another")
	}
}
