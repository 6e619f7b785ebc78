package mountmgr

import (
	"context"
	"fmt"
)

// A walk the daemon runs for a client (fsck, export, the conflicts listing, settling one)
// uses a mounted vault's keys for as long as the cipherdir takes to walk, which a big,
// slow or hostile tree makes unbounded. So it holds nothing that an unmount (lock on sleep
// and idle unmount included) or the wiping of the keys waits for longer than one step:
// it stops when its client goes away, when the vault is unmounted, or when the daemon stops.

// keyUse is one such use of a mounted vault's keys. Its keys are not wiped while it lasts (it
// holds unlocked.mu for reading), but its context ends as soon as unlocked.Close begins
// (which signals before it takes the lock, and then waits only for the step under way: the
// walker asks its context between entries), when the client's context ends, or when the
// daemon stops.
type keyUse struct {
	ctx    context.Context
	cancel context.CancelFunc
	client context.Context
	v      *unlocked
	quit   <-chan struct{}
}

// useKeys begins a use of m's keys for a client whose context is client; release ends it.
func (d *daemon) useKeys(client context.Context, m *mount) (*keyUse, error) {
	m.v.mu.RLock()
	if m.v.closed {
		m.v.mu.RUnlock()
		return nil, ErrorOf(ErrNotMounted, "%s was unmounted meanwhile", m.info.CipherDir)
	}
	u := &keyUse{client: client, v: m.v, quit: d.quit}
	u.ctx, u.cancel = context.WithCancel(client)
	stopped := m.v.stopped()
	go func() {
		select {
		case <-d.quit:
		case <-stopped:
		case <-u.ctx.Done():
		}
		u.cancel()
	}()
	return u, nil
}

// release ends the use: the keys may be wiped.
func (u *keyUse) release() {
	u.cancel()
	u.v.mu.RUnlock()
}

// ended returns err of a walk (what, of the vault in cipherDir) that used the keys, or when an
// unmount or the daemon stopping cut it short, an error that says so.
func (u *keyUse) ended(err error, cipherDir, what string) error {
	if u.ctx.Err() == nil || u.client.Err() != nil {
		return err
	}
	select {
	case <-u.v.stopped():
		return ErrorOf(ErrNotMounted, "%s was unmounted during the %s, which ended", cipherDir, what)
	case <-u.quit:
		return fmt.Errorf("the mount daemon is stopping; %s ended: %w", what, u.ctx.Err())
	default:
		return err
	}
}

// clientLeft reports whether the use ended because its client went away.
func (u *keyUse) clientLeft() bool { return u.client.Err() != nil }
