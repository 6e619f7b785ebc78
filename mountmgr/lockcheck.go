package mountmgr

import (
	"context"
	"errors"
	"fmt"

	"github.com/godbus/dbus/v5"

	"github.com/vaultui/vaultui/internal/dbusdial"
	"github.com/vaultui/vaultui/registry"
)

// ErrNoLogind: lock policies (sleep, sleep+screenlock) cannot work here, because nothing
// announces sleep and screen lock: no system bus, or no logind on it (containers, CI, some
// minimal desktops). The daemon then leaves vaults mounted through sleep.
var ErrNoLogind = errors.New("lock on sleep and screen lock unavailable")

// dialLogind connects to the system bus (DBUS_SYSTEM_BUS_ADDRESS, else the default socket) and
// checks that logind is on it; the error wraps ErrNoLogind and says which is missing. The
// daemon's session watch and LockPolicyWorks use it, so the front ends say what the daemon
// will do.
func dialLogind(ctx context.Context) (*dbus.Conn, error) {
	conn, err := dbusdial.Dial(ctx, sessionCallTimeout, dbus.SystemBusPrivate)
	if err != nil {
		return nil, fmt.Errorf("%w: no system bus (%v)", ErrNoLogind, err)
	}
	var has bool
	cctx, cancel := context.WithTimeout(ctx, sessionCallTimeout)
	err = conn.BusObject().CallWithContext(cctx, "org.freedesktop.DBus.NameHasOwner", 0, logindName).Store(&has)
	cancel()
	if err != nil || !has {
		conn.Close()
		if err == nil {
			return nil, fmt.Errorf("%w: logind is not running", ErrNoLogind)
		}
		return nil, fmt.Errorf("%w: logind is not running (%v)", ErrNoLogind, err)
	}
	return conn, nil
}

// LockPolicyWorks reports whether the lock policies can work on this machine: nil when
// logind is there to announce sleep and screen lock, else an error wrapping ErrNoLogind. It
// blocks for at most a few seconds.
func LockPolicyWorks(ctx context.Context) error {
	conn, err := dialLogind(ctx)
	if err != nil {
		return err
	}
	return conn.Close()
}

// DefaultLockPolicy is the lock policy a new vault gets: sleep where it can work (works is
// LockPolicyWorks's answer), never where it cannot, so no vault is promised a lock that
// will not happen.
func DefaultLockPolicy(works error) string {
	if works != nil {
		return registry.LockNever
	}
	return registry.LockSleep
}
