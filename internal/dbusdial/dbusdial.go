// Package dbusdial opens private D-Bus connections that give up after a timeout. The keyring
// (session bus) and the mount daemon's logind watch (system bus) both dial through it, so
// neither can hang on a bus socket that accepts but never answers.
//
// It imports only godbus; keyring and mountmgr import it.
package dbusdial

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/godbus/dbus/v5"
)

// ErrNoAnswer: the bus accepted the connection but did not finish the handshake in time (a
// busy or hung session), as opposed to no bus at all.
var ErrNoAnswer = errors.New("no answer")

// Dial opens a private connection with open (dbus.SessionBusPrivateNoAutoStartup,
// dbus.SystemBusPrivate) and authenticates, giving up after timeout: a bus socket that accepts
// but never answers must not hang the caller. The keyring and the daemon's logind watch share
// it.
func Dial(ctx context.Context, timeout time.Duration, open func(...dbus.ConnOption) (*dbus.Conn, error)) (*dbus.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type result struct {
		conn *dbus.Conn
		err  error
	}
	done := make(chan result, 1)
	go func() {
		conn, err := open()
		if err == nil {
			if err = conn.Auth(nil); err == nil {
				err = conn.Hello()
			}
			if err != nil {
				conn.Close()
			}
		}
		done <- result{conn, err}
	}()
	select {
	case r := <-done:
		return r.conn, r.err
	case <-ctx.Done():
		go func() { // close it if it ever connects
			if r := <-done; r.conn != nil {
				r.conn.Close()
			}
		}()
		return nil, fmt.Errorf("%w within %v", ErrNoAnswer, timeout)
	}
}
