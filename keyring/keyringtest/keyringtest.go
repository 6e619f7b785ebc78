// Package keyringtest starts a real Secret Service for tests: a private D-Bus session bus
// (dbus-daemon) with gnome-keyring-daemon on it, its login keyring unlocked with a test
// password, all in a temporary home. Nothing of the user's session is touched.
package keyringtest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/vaultui/vaultui/internal/testdeps"
)

// Password unlocks the test keyring.
const Password = "keyring test password"

// Service is a test keyring that can be stopped and started again on its bus, as a Secret
// Service that comes up late at login or restarts: the items it stored stay in its home.
type Service struct {
	Addr string // the bus address
	env  []string
	cmd  *exec.Cmd
}

// StartService runs the bus and the keyring until the test ends; it sets
// DBUS_SESSION_BUS_ADDRESS for the test (so the test must not be parallel). It skips (or fails,
// see testdeps) when dbus-daemon or gnome-keyring-daemon is not installed (Debian: dbus,
// gnome-keyring).
func StartService(t testing.TB) *Service {
	t.Helper()
	addr, env := startBus(t)
	s := &Service{Addr: addr, env: env}
	t.Cleanup(s.Stop)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	s.Start(t)
	return s
}

// Start runs gnome-keyring-daemon on the bus, its login keyring unlocked, and waits until it
// serves the Secret Service.
func (s *Service) Start(t testing.TB) {
	t.Helper()
	kr := exec.Command("gnome-keyring-daemon", "--unlock", "--foreground", "--components=secrets")
	kr.Env = s.env
	kr.Stdin = strings.NewReader(Password)
	if err := kr.Start(); err != nil {
		t.Fatalf("gnome-keyring-daemon: %v", err)
	}
	s.cmd = kr
	if err := waitForService(s.Addr, 15*time.Second); err != nil {
		t.Fatalf("the test keyring did not come up: %v", err)
	}
}

// Stop ends gnome-keyring-daemon and waits until it has left the bus; the bus stays.
func (s *Service) Stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s.cmd = nil
	waitForNoService(s.Addr, 15*time.Second)
}

// StartBus runs a private session bus with nothing on it until the test ends and returns its
// address. It skips (or fails, see testdeps) when dbus-daemon or gnome-keyring-daemon is not
// installed.
func StartBus(t testing.TB) string {
	t.Helper()
	addr, _ := startBus(t)
	return addr
}

// SilentBus returns the address of a session bus socket that accepts connections and never
// answers (a hung or overloaded session), open until the test ends. It needs no programs.
func SilentBus(t testing.TB) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "bus")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c) // hold it open, say nothing
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return "unix:path=" + sock
}

// startBus returns the bus address and the environment for programs on it (a temporary
// home, runtime and data dir, and the bus address).
func startBus(t testing.TB) (string, []string) {
	t.Helper()
	testdeps.Need(t, testdeps.DBus)
	home, err := os.MkdirTemp("", "vkr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	run := filepath.Join(home, "run")
	if err := os.MkdirAll(run, 0o700); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOME="+home, "XDG_DATA_HOME="+filepath.Join(home, "data"),
		"XDG_RUNTIME_DIR="+run, "XDG_CONFIG_HOME="+filepath.Join(home, "config"))
	// Our own configuration: no service directories, so nothing is started on demand (the
	// system's session configuration would activate the real gnome-keyring).
	conf := filepath.Join(home, "bus.conf")
	if err := os.WriteFile(conf, []byte(busConfig(filepath.Join(run, "bus"))), 0o600); err != nil {
		t.Fatal(err)
	}
	bus := exec.Command("dbus-daemon", "--config-file="+conf, "--nofork", "--print-address=1")
	bus.Env = env
	out, err := bus.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.Start(); err != nil {
		t.Fatalf("dbus-daemon: %v", err)
	}
	t.Cleanup(func() { bus.Process.Kill(); bus.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon printed no address: %v", err)
	}
	addr = strings.TrimSpace(addr)
	return addr, append(env, "DBUS_SESSION_BUS_ADDRESS="+addr)
}

// waitForService waits until org.freedesktop.secrets has an owner with a default collection.
func waitForService(addr string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var last error
	for time.Now().Before(deadline) {
		last = func() error {
			conn, err := dbus.Connect(addr)
			if err != nil {
				return err
			}
			defer conn.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			var coll dbus.ObjectPath
			err = conn.Object("org.freedesktop.secrets", "/org/freedesktop/secrets").
				CallWithContext(ctx, "org.freedesktop.Secret.Service.ReadAlias", 0, "default").Store(&coll)
			if err == nil && (coll == "/" || coll == "") {
				err = fmt.Errorf("no default collection yet")
			}
			return err
		}()
		if last == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return last
}

// waitForNoService waits until org.freedesktop.secrets has no owner.
func waitForNoService(addr string, limit time.Duration) {
	conn, err := dbus.Connect(addr)
	if err != nil {
		return // the bus is gone too
	}
	defer conn.Close()
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var owned bool
		if conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, "org.freedesktop.secrets").Store(&owned) != nil || !owned {
			return
		}
	}
}

// busConfig is a minimal session bus listening at socket: anyone of this uid may own any name
// and talk to anyone; no service is activated.
func busConfig(socket string) string {
	return `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=` + socket + `</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`
}
