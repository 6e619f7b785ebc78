package mountmgr

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"
	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/keyring"
	"github.com/vaultui/vaultui/mountmgr/extpass"
	"github.com/vaultui/vaultui/registry"
	"github.com/vaultui/vaultui/vault"
)

// Why a vault was unmounted by its lock policy (Event.Reason).
const (
	ReasonSleep = "sleep"
	ReasonLock  = "lock"
)

const (
	logindName         = "org.freedesktop.login1"
	logindPath         = dbus.ObjectPath("/org/freedesktop/login1")
	logindManager      = "org.freedesktop.login1.Manager"
	logindSession      = "org.freedesktop.login1.Session"
	logindSessionsPath = dbus.ObjectPath("/org/freedesktop/login1/session")
	sessionCallTimeout = 5 * time.Second
)

// sessionWatch carries out the vaults' lock policies on logind's signals from the system bus
// (DBUS_SYSTEM_BUS_ADDRESS, else the default socket): before the machine sleeps
// (PrepareForSleep(true)) it unmounts the vaults whose policy is sleep or sleep+screenlock,
// holding a delay inhibitor lock so the machine waits for that; when the screen locks (a
// session's Lock signal) it unmounts the sleep+screenlock ones. After resume (sleep policy)
// or unlock (sleep+screenlock) it mounts again those of them with the automount option and
// a keyring password.
type sessionWatch struct {
	d            *daemon
	conn         *dbus.Conn
	registryPath string

	mu      sync.Mutex
	inhibit *os.File         // the delay lock; nil while not held
	locked  []registry.Entry // unmounted by a policy, to mount again
}

// watchSession runs until ctx is done. Without a system bus or logind (containers, CI) it
// logs that lock on sleep and screen lock are unavailable and returns: a state, not an error.
func (d *daemon) watchSession(ctx context.Context, registryPath string) {
	conn, err := dialLogind(ctx)
	if err != nil {
		d.log.Printf("%v", err)
		return
	}
	defer conn.Close()
	w := &sessionWatch{d: d, conn: conn, registryPath: registryPath}
	for _, m := range [][]dbus.MatchOption{
		{dbus.WithMatchObjectPath(logindPath), dbus.WithMatchInterface(logindManager), dbus.WithMatchMember("PrepareForSleep")},
		{dbus.WithMatchPathNamespace(logindSessionsPath), dbus.WithMatchInterface(logindSession), dbus.WithMatchMember("Lock")},
		{dbus.WithMatchPathNamespace(logindSessionsPath), dbus.WithMatchInterface(logindSession), dbus.WithMatchMember("Unlock")},
	} {
		if err := conn.AddMatchSignal(m...); err != nil {
			d.log.Printf("lock on sleep and screen lock unavailable: %v", err)
			return
		}
	}
	ch := make(chan *dbus.Signal, 16)
	conn.Signal(ch)
	w.takeInhibitor(ctx)
	d.log.Printf("watching logind: vaults are unmounted by their lock policy")
	defer w.releaseInhibitor()
	for {
		select {
		case <-ctx.Done():
			return
		case s, ok := <-ch:
			if !ok {
				d.log.Printf("system bus connection lost: lock on sleep and screen lock stop")
				return
			}
			w.handle(ctx, s)
		}
	}
}

func (w *sessionWatch) handle(ctx context.Context, s *dbus.Signal) {
	switch s.Name {
	case logindManager + ".PrepareForSleep":
		start, _ := s.Body[0].(bool)
		if start {
			w.lock(func(p string) bool { return p == registry.LockSleep || p == registry.LockScreen }, ReasonSleep)
			w.releaseInhibitor() // now the machine may sleep
			return
		}
		w.takeInhibitor(ctx)
		w.remount(ctx, registry.LockSleep, "remount after sleep") // sleep+screenlock ones wait for the unlock
	case logindSession + ".Lock":
		w.lock(func(p string) bool { return p == registry.LockScreen }, ReasonLock)
	case logindSession + ".Unlock":
		w.remount(ctx, registry.LockScreen, "remount after unlock")
	}
}

// takeInhibitor takes logind's delay lock for sleep, so PrepareForSleep(true) gives us time
// (logind's InhibitDelayMaxSec, 5 s by default) to unmount before the machine sleeps.
func (w *sessionWatch) takeInhibitor(ctx context.Context) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.inhibit != nil {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, sessionCallTimeout)
	defer cancel()
	var fd dbus.UnixFD
	err := w.conn.Object(logindName, logindPath).CallWithContext(cctx, logindManager+".Inhibit", 0,
		"sleep", "vaultui", "Unmounting vaults before sleep", "delay").Store(&fd)
	if err != nil {
		w.d.log.Printf("logind: no delay lock (%v): vaults may still be mounted when the machine sleeps", err)
		return
	}
	w.inhibit = os.NewFile(uintptr(fd), "logind-inhibit")
}

func (w *sessionWatch) releaseInhibitor() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.inhibit != nil {
		w.inhibit.Close()
		w.inhibit = nil
	}
}

// lock unmounts the live mounts whose registry entry's policy matches. A busy mount is cut
// off (see cutOff): a lock cannot wait for its users. When the registry cannot be read, no
// mount's policy can be known and the lock fails closed: every mount is taken as having the
// strictest policy (as an entry with a policy this version does not know is), because
// leaving mounted a vault the user asked to lock is the one outcome a lock must not have.
func (w *sessionWatch) lock(match func(policy string) bool, why string) {
	reg, err := registry.Load(w.registryPath)
	if err != nil {
		w.d.log.Printf("%s: %v; lock policies unknown: unmounting every vault", why, err)
	}
	for _, mp := range w.d.mountPoints() {
		w.d.mu.Lock()
		m := w.d.mounts[mp]
		w.d.mu.Unlock()
		if m == nil {
			continue
		}
		// The registry entry of this vault by identity: mounted through another path (a
		// symlink), it still gets its policy.
		var entry *registry.Entry
		policy := registry.LockScreen // the strictest, for a registry that cannot be read
		if reg != nil {
			for i, e := range reg.Vaults {
				if id, err := vault.IDOf(e.CipherDir); err == nil && id == m.vid {
					entry = &reg.Vaults[i]
				}
			}
			if entry == nil {
				continue
			}
			policy = entry.LockPolicy()
		}
		if !match(policy) {
			continue
		}
		err := w.d.unmountFor(mp, false, why)
		if errors.Is(err, ErrBusy) {
			err = w.d.cutOff(mp, m, why)
		}
		if err != nil {
			w.d.log.Printf("%s: unmounting %s: %s", why, mp, logSafe(err))
			continue
		}
		if entry == nil {
			w.d.log.Printf("%s: unmounted %s (lock policy unknown: the registry cannot be read)", why, mp)
			continue
		}
		w.d.log.Printf("%s: unmounted %s (lock policy %s)", why, mp, policy)
		if entry.MountAtStart {
			w.mu.Lock()
			w.locked = append(w.locked, *entry)
			w.mu.Unlock()
		}
	}
}

// cutOff unmounts a busy mount at once: it is detached (no one reaches it by path) and its
// FUSE connection is aborted through fusectl, so the processes that had files open get
// ENOTCONN from then on, the file system closes and its keys are wiped. Where fusectl is not
// mounted (/sys/fs/fuse/connections), those files keep being served until they are closed;
// the event says which.
func (d *daemon) cutOff(mp string, m *mount, why string) error {
	who := pids(holders(m.dev, 5))
	if err := d.unmount(mp, true); err != nil {
		return err
	}
	detail := "in use by " + who + ": detached and cut off (open files now fail)"
	m.fs.DropOpenPages() // else the kernel keeps answering reads of cached pages after the abort
	conn := fmt.Sprint(m.dev)
	if unix.Major(m.dev) == 0 {
		conn = fmt.Sprint(unix.Minor(m.dev))
	}
	if err := abortFuseConn(conn); err != nil {
		detail = "in use by " + who + ": detached; its open files are served until closed (cannot abort the FUSE connection: " + err.Error() + ")"
	}
	d.log.Printf("%s: %s %s", why, mp, detail)
	d.events.add(Event{Kind: EventUnmounted, CipherDir: m.info.CipherDir, MountPoint: mp, Reason: why, Detail: detail, Reverse: m.info.Reverse})
	return nil
}

// abortFuseConn aborts the FUSE connection conn through fusectl: at /sys/fs/fuse/connections
// where it is mounted (systemd does), else, as root, by mounting fusectl in a private mount
// namespace of a throw-away thread, so the machine's mount table is not touched.
func abortFuseConn(conn string) error {
	err := os.WriteFile(filepath.Join("/sys/fs/fuse/connections", conn, "abort"), []byte("1"), 0)
	if err == nil || os.Geteuid() != 0 {
		return err
	}
	return onThrowawayThread(func() error {
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			return fmt.Errorf("unshare: %w", err)
		}
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			return fmt.Errorf("making mounts private: %w", err)
		}
		dir, err := os.MkdirTemp("", "vaultui-fusectl")
		if err != nil {
			return err
		}
		defer os.Remove(dir)
		if err := unix.Mount("fusectl", dir, "fusectl", 0, ""); err != nil {
			return fmt.Errorf("mounting fusectl: %w", err)
		}
		defer unix.Unmount(dir, 0)
		return os.WriteFile(filepath.Join(dir, conn, "abort"), []byte("1"), 0)
	})
}

// onThrowawayThread runs f on an OS thread that ends with it, so that what f changes of its
// thread (its mount namespace) goes with it. Never on the main thread: the runtime cannot end
// that one and parks it instead, keeping the change for the life of the process, and
// /proc/self shows the main thread. The daemon's mount table would then be a private copy
// (new mount IDs, none of the later mounts: every vault "no longer mounted here"), and the
// copy would hold each vault's file system after its unmount.
func onThrowawayThread(f func() error) error {
	done := make(chan error, 1)
	go throwaway(f, done)
	return <-done
}

func throwaway(f func() error, done chan<- error) {
	runtime.LockOSThread()
	if unix.Gettid() == unix.Getpid() {
		// The main thread: this goroutine holds it until f is done, so f runs on another.
		inner := make(chan error, 1)
		go throwaway(f, inner)
		done <- <-inner
		runtime.UnlockOSThread()
		return
	}
	// Never unlocked: the thread ends with this goroutine.
	done <- f()
}

// remount mounts again the automount vaults of the given policy that a lock unmounted; why
// is the reason of the events of those it cannot mount.
func (w *sessionWatch) remount(ctx context.Context, policy, why string) {
	w.mu.Lock()
	var todo, keep []registry.Entry
	for _, e := range w.locked {
		if e.LockPolicy() == policy {
			todo = append(todo, e)
		} else {
			keep = append(keep, e)
		}
	}
	w.locked = keep
	w.mu.Unlock()
	if len(todo) > 0 {
		w.d.mountFromKeyring(ctx, todo, why)
	}
}

// keyringPatience bounds how long mountFromKeyring waits for a Secret Service that is not on
// the session bus yet, or does not answer: at login the daemon may start before the keyring
// has registered, or while it is busy unlocking, and a keyring that is merely late must not
// leave every automount vault unmounted. No session bus at all, a keyring that stays locked
// or a password that is not stored fail at once.
const keyringPatience = 60 * time.Second

// keyringRetry is the pause between attempts to reach a keyring that is coming up.
const keyringRetry = time.Second

// keyringComing tells a keyring that may still come up (or answer) from one that will not.
func keyringComing(err error) bool {
	return errors.Is(err, keyring.ErrNoService) || errors.Is(err, keyring.ErrNoAnswer)
}

// mountFromKeyring mounts each entry with its password: from its password program when the
// registry names one (mountmgr/extpass: no terminal, bounded in time), else from the keyring,
// waiting up to keyringPatience for one that is coming up.
// Each failure is an event (mount_failed with reason why) and a log line; neither ever holds
// the password or the program's output.
func (d *daemon) mountFromKeyring(ctx context.Context, todo []registry.Entry, why string) {
	failed := func(v registry.Entry, err error) {
		d.log.Printf("%s %s (%s): %s", why, v.Name, v.CipherDir, logSafe(err))
		d.events.add(Event{Kind: EventMountFailed, CipherDir: v.CipherDir, MountPoint: v.MountPoint,
			Reason: why, Detail: err.Error(), Reverse: v.Reverse})
	}
	var kr *keyring.Keyring
	var krErr error // why the keyring cannot be had, once patience ran out
	defer func() {
		if kr != nil {
			kr.Close()
		}
	}()
	var giveUp time.Time // set by the first failure of a keyring that may still come
	// wait reports whether to try again after err, having paused.
	wait := func(err error) bool {
		if !keyringComing(err) {
			return false
		}
		if giveUp.IsZero() {
			giveUp = time.Now().Add(keyringPatience)
			d.log.Printf("%s: waiting up to %v for the keyring (%s)", why, keyringPatience, logSafe(err))
		}
		if time.Now().After(giveUp) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(keyringRetry):
			return true
		}
	}
	// open opens the keyring unless it is open, waiting for one that is coming.
	open := func() error {
		for kr == nil && krErr == nil {
			k, err := keyring.Open(ctx, keyring.Options{})
			switch {
			case err == nil:
				kr = k
			case !wait(err):
				krErr = err
			}
		}
		return krErr
	}
	password := func(v registry.Entry) ([]byte, error) {
		if len(v.ExtPass) > 0 {
			return extpass.Run(ctx, v.ExtPass, extpass.Options{})
		}
		for {
			if err := open(); err != nil {
				return nil, err
			}
			pw, err := kr.Get(ctx, v.CipherDir)
			if keyringComing(err) { // the service left or hung: open it again
				kr.Close()
				kr = nil
				if wait(err) {
					continue
				}
			}
			if errors.Is(err, keyring.ErrNotFound) {
				err = fmt.Errorf("no password in the keyring (store one with: vaultui mount --remember %s, or name a password program with vaultui edit --extpass)", v.Name)
			}
			return pw, err
		}
	}
	for _, v := range todo {
		if v.MountPoint == "" {
			failed(v, errors.New("no mount point registered"))
			continue
		}
		pw, err := password(v)
		if err != nil {
			failed(v, err)
			continue
		}
		if _, err := d.mount(ctx, &MountRequest{CipherDir: v.CipherDir, MountPoint: v.MountPoint, Password: pw,
			ReadOnly: v.ReadOnly, Idle: v.Idle, Reverse: v.Reverse, Exclude: v.Exclude, SharedStorage: v.SharedStorage,
			KDFCost: v.KDFCost}); err != nil {
			failed(v, err)
		}
	}
}
