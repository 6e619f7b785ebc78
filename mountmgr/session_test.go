package mountmgr

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/keyring/keyringtest"
	"github.com/vaultui/vaultui/registry"
)

// fakeLogind owns org.freedesktop.login1 on a private bus: Inhibit hands out the write end of
// a pipe and reports when every copy of it is closed (the lock released); the test emits
// PrepareForSleep, Lock and Unlock.
type fakeLogind struct {
	conn     *dbus.Conn
	mu       sync.Mutex
	taken    int
	released chan []mountEntry // the mounts under base when a lock was released
	base     string
}

func (f *fakeLogind) Inhibit(what, who, why, mode string) (dbus.UnixFD, *dbus.Error) {
	if what != "sleep" || mode != "delay" {
		return 0, dbus.MakeFailedError(os.ErrInvalid)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return 0, dbus.MakeFailedError(err)
	}
	go func() {
		io.Copy(io.Discard, r) // EOF once the daemon closed its copy
		r.Close()
		f.released <- mountsUnder(f.base)
	}()
	fd := dbus.UnixFD(w.Fd())
	// Our copy closes once the reply has carried the descriptor: when the daemon holds it,
	// which is also when the lock counts as taken (inhibitors). Bounded: a daemon that never
	// takes it gets our copy closed all the same, and the lock never counts.
	go func() {
		defer w.Close()
		var st syscall.Stat_t
		if syscall.Fstat(int(fd), &st) != nil {
			return
		}
		for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			if f.daemonHolds(st.Ino) {
				f.mu.Lock()
				f.taken++
				f.mu.Unlock()
				return
			}
		}
	}()
	return fd, nil
}

// daemonHolds reports whether the test's daemon has pipe ino open.
func (f *fakeLogind) daemonHolds(ino uint64) bool {
	pid, err := os.ReadFile(filepath.Join(f.base, "run", "vaultui", "daemon.lock"))
	if err != nil {
		return false
	}
	fds, _ := filepath.Glob(filepath.Join("/proc", strings.TrimSpace(string(pid)), "fd", "*"))
	for _, p := range fds {
		if l, _ := os.Readlink(p); l == fmt.Sprintf("pipe:[%d]", ino) {
			return true
		}
	}
	return false
}

// inhibitors counts the delay locks the daemon has received.
func (f *fakeLogind) inhibitors() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.taken
}

func startFakeLogind(t *testing.T, base string) *fakeLogind {
	addr := keyringtest.StartBus(t)
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	f := &fakeLogind{conn: conn, released: make(chan []mountEntry, 4), base: base}
	if err := conn.Export(f, logindPath, logindManager); err != nil {
		t.Fatal(err)
	}
	if reply, err := conn.RequestName(logindName, dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("owning %s: %v %v", logindName, reply, err)
	}
	t.Setenv("DBUS_SYSTEM_BUS_ADDRESS", addr)
	return f
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestLockOnSleepAndScreenLock drives the daemon with a fake logind: sleep unmounts the
// sleep and sleep+screenlock vaults before the delay lock is released, resume mounts the
// sleep one again from the keyring, unlock the sleep+screenlock one, and a screen lock
// unmounts only the sleep+screenlock one; a never vault stays throughout.
func TestLockOnSleepAndScreenLock(t *testing.T) {
	base := daemonEnv(t)
	logind := startFakeLogind(t, base)
	keyringtest.StartService(t)

	sleepDir, sleepMP, sleepPW := newVault(t, base, crypto.AESGCM)
	screenDir, screenMP, screenPW := newVault(t, base, crypto.AESGCM)
	neverDir, neverMP, neverPW := newVault(t, base, crypto.AESGCM)
	// Registered through a symlink, mounted by its real path: still the same vault, and its
	// policy applies.
	linkedDir, linkedMP, linkedPW := newVault(t, base, crypto.AESGCM)
	linkedLink := filepath.Join(base, "linked")
	if err := os.Symlink(linkedDir, linkedLink); err != nil {
		t.Fatal(err)
	}
	register(t,
		registry.Entry{Name: "s", CipherDir: sleepDir, MountPoint: sleepMP, MountAtStart: true, Lock: registry.LockSleep},
		registry.Entry{Name: "l", CipherDir: screenDir, MountPoint: screenMP, MountAtStart: true, Lock: registry.LockScreen},
		registry.Entry{Name: "n", CipherDir: neverDir, MountPoint: neverMP, Lock: registry.LockNever},
		registry.Entry{Name: "y", CipherDir: linkedLink, MountPoint: linkedMP, Lock: registry.LockSleep})
	storePasswords(t, map[string][]byte{sleepDir: sleepPW, screenDir: screenPW})

	c := connect(t)
	for dir, mp := range map[string]string{sleepDir: sleepMP, screenDir: screenMP, neverDir: neverMP, linkedDir: linkedMP} {
		pw := map[string][]byte{sleepDir: sleepPW, screenDir: screenPW, neverDir: neverPW, linkedDir: linkedPW}[dir]
		if _, err := c.Mount(ctx(t), MountRequest{CipherDir: dir, MountPoint: mp, Password: append([]byte(nil), pw...)}); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, "the delay lock", func() bool { return logind.inhibitors() == 1 })
	mounted := func(mp string) bool {
		for _, e := range mountsUnder(base) {
			if e.MountPoint == mp {
				return true
			}
		}
		return false
	}

	// Sleep: both locking vaults are gone by the time the lock is released.
	if err := logind.conn.Emit(logindPath, logindManager+".PrepareForSleep", true); err != nil {
		t.Fatal(err)
	}
	select {
	case left := <-logind.released:
		if len(left) != 1 || left[0].MountPoint != neverMP {
			t.Fatalf("mounts when the delay lock was released: %+v, want only the never vault", left)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the delay lock was not released after PrepareForSleep(true)")
	}

	// Resume: the lock is taken again, the sleep vault comes back, the screenlock one waits.
	logind.conn.Emit(logindPath, logindManager+".PrepareForSleep", false)
	waitUntil(t, "the sleep vault mounted again", func() bool { return mounted(sleepMP) })
	waitUntil(t, "a new delay lock", func() bool { return logind.inhibitors() == 2 })
	if mounted(screenMP) {
		t.Fatal("the sleep+screenlock vault came back before the unlock")
	}
	session := dbus.ObjectPath("/org/freedesktop/login1/session/_31")
	logind.conn.Emit(session, logindSession+".Unlock")
	waitUntil(t, "the screenlock vault mounted after unlock", func() bool { return mounted(screenMP) })

	// A screen lock takes only the sleep+screenlock vault, even while a file is open in it.
	f, err := os.Create(screenMP + "/open")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Whole pages, which the kernel keeps after writing them through.
	if _, err := f.Write(bytes.Repeat([]byte("before the lock\n"), 512)); err != nil {
		t.Fatal(err)
	}
	logind.conn.Emit(session, logindSession+".Lock")
	waitUntil(t, "the screenlock vault unmounted on lock", func() bool { return !mounted(screenMP) })
	if !mounted(sleepMP) || !mounted(neverMP) {
		t.Fatal("a screen lock unmounted a vault whose policy does not say so")
	}
	// The mount disappears (detached) a moment before it is cut off and that is recorded:
	// wait for the record, then try the file opened before.
	var evs []Event
	waitUntil(t, "the lock's unmount event", func() bool {
		var err error
		if evs, err = c.Events(ctx(t), 0); err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.Kind == EventUnmounted && e.Reason == ReasonLock && e.CipherDir == screenDir {
				return true
			}
		}
		return false
	})
	_, rerr := f.ReadAt(make([]byte, 4), 0)
	_, werr := f.Write([]byte("after the lock"))
	if werr == nil {
		werr = f.Sync()
	}
	var got []string
	cut := false
	for _, e := range evs {
		if e.Kind == EventUnmounted && e.Reason == ReasonLock && e.CipherDir == screenDir {
			// The open file made it busy: the event names who was cut off and how.
			cut = strings.Contains(e.Detail, "in use by") && strings.Contains(e.Detail, "detached")
			t.Logf("lock event: %s", e.Detail)
			// Cut off (fusectl reachable: always as root): the open file fails from now on.
			if strings.Contains(e.Detail, "cut off") && !errors.Is(werr, syscall.ENOTCONN) {
				t.Errorf("writing to a file opened before the lock: %v, want ENOTCONN", werr)
			}
			if strings.Contains(e.Detail, "cut off") && !errors.Is(rerr, syscall.ENOTCONN) {
				t.Errorf("reading what the kernel had cached of a file opened before the lock: %v, want ENOTCONN", rerr)
			}
			if os.Geteuid() == 0 && !strings.Contains(e.Detail, "cut off") {
				t.Errorf("as root the connection must be aborted: %s", e.Detail)
			}
		}
		if e.Kind == EventUnmounted {
			got = append(got, map[string]string{sleepDir: "s", screenDir: "l", neverDir: "n"}[e.CipherDir]+"/"+e.Reason)
		}
	}
	sort := strings.Join(got, " ")
	for _, want := range []string{"s/sleep", "l/sleep", "l/lock"} {
		if !strings.Contains(sort, want) {
			t.Errorf("unmount events %s lack %s", sort, want)
		}
	}
	if !cut {
		t.Error("the busy vault's lock event does not say who was cut off")
	}
	if strings.Contains(sort, "n/") {
		t.Errorf("the never vault was unmounted: %s", sort)
	}
}

// TestNoLogind: without logind on the system bus the daemon says the feature is unavailable
// and works as before.
func TestNoLogind(t *testing.T) {
	base := daemonEnv(t)
	t.Setenv("DBUS_SYSTEM_BUS_ADDRESS", keyringtest.StartBus(t))
	cipherdir, mp, pw := newVault(t, base, crypto.AESGCM)
	c := connect(t)
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the log line", func() bool {
		log, _ := os.ReadFile(base + "/state/vaultui/daemon.log")
		return strings.Contains(string(log), "lock on sleep and screen lock unavailable: logind is not running")
	})
}

// TestLockOnSleepUnreadableRegistry: when the registry cannot be read at sleep, no vault's
// lock policy can be known, and the lock fails closed: every vault is unmounted before the
// delay lock is released (a sleep vault used to stay mounted), and the log says why.
func TestLockOnSleepUnreadableRegistry(t *testing.T) {
	base := daemonEnv(t)
	logind := startFakeLogind(t, base)
	sleepDir, sleepMP, sleepPW := newVault(t, base, crypto.AESGCM)
	neverDir, neverMP, neverPW := newVault(t, base, crypto.AESGCM)
	register(t,
		registry.Entry{Name: "s", CipherDir: sleepDir, MountPoint: sleepMP, Lock: registry.LockSleep},
		registry.Entry{Name: "n", CipherDir: neverDir, MountPoint: neverMP, Lock: registry.LockNever})
	c := connect(t)
	for dir, pw := range map[string][]byte{sleepDir: sleepPW, neverDir: neverPW} {
		mp := map[string]string{sleepDir: sleepMP, neverDir: neverMP}[dir]
		if _, err := c.Mount(ctx(t), MountRequest{CipherDir: dir, MountPoint: mp, Password: pw}); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, "the delay lock", func() bool { return logind.inhibitors() == 1 })
	// Cut short, as a crash of an editor or a full disk might leave it.
	regPath, _ := registry.DefaultPath()
	if err := os.WriteFile(regPath, []byte(`{"version":1,"vaults":[{"name":"s",`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := logind.conn.Emit(logindPath, logindManager+".PrepareForSleep", true); err != nil {
		t.Fatal(err)
	}
	select {
	case left := <-logind.released:
		if len(left) != 0 {
			t.Fatalf("mounts when the delay lock was released with an unreadable registry: %+v, want none", left)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the delay lock was not released after PrepareForSleep(true)")
	}
	log, _ := os.ReadFile(base + "/state/vaultui/daemon.log")
	if !strings.Contains(string(log), "lock policies unknown: unmounting every vault") {
		t.Errorf("the log does not say why every vault was unmounted:\n%s", log)
	}
}
