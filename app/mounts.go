package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vaultui/vaultui/internal/termsafe"
	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/registry"
	"github.com/vaultui/vaultui/vault"
)

// The mounts' use cases besides mount: unmount (one, or all), the live status and the event
// log, all over the App's one daemon client.

// MountFor is the request that mounts e as registered: its mount point, read-only and idle
// options are the defaults a front end's choices override. An entry without a mount point
// (a registry edited by hand) mounts where a vault of its name does by default; an
// unregistered vault (no name) has none, and the front end must ask for one.
func MountFor(e registry.Entry) MountRequest {
	mp := e.MountPoint
	if mp == "" && e.Name != "" {
		mp = DefaultMountPoint(e.Name)
	}
	return MountRequest{Vault: VaultOf(e), MountPoint: mp, ReadOnly: e.ReadOnly, Idle: e.Idle,
		Reverse: e.Reverse, Exclude: slices.Clone(e.Exclude), SharedStorage: e.SharedStorage}
}

// Unmount unmounts the vault named by arg: a registered name, a cipherdir or a mount point;
// lazy detaches a mount in use (mountmgr.Client.Unmount). An arg that is neither a
// registered name nor an existing path wraps vault.ErrNotFound; a vault that is not mounted
// is named as arg names it, wrapping mountmgr.ErrNotMounted.
func (a *App) Unmount(ctx context.Context, arg string, lazy bool) error {
	target, registered := arg, false
	if reg, err := a.Registry(); err == nil {
		if e, ok := reg.Lookup(arg); ok {
			target, registered = e.CipherDir, true
		}
	}
	if _, err := os.Lstat(target); !registered && errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%q is neither a registered vault nor a mount point: %w", arg, vault.ErrNotFound)
	}
	if abs, err := filepath.Abs(target); err == nil {
		target = abs // before leaveMount moves the working directory
	}
	a.leaveMount(target)
	err := a.daemonCall(ctx, func(d Daemon) error { return d.Unmount(ctx, target, lazy) })
	if errors.Is(err, mountmgr.ErrNotMounted) {
		return mountmgr.ErrorOf(mountmgr.ErrNotMounted, "%s is not mounted", termsafe.Escape(arg))
	}
	return err
}

// leaveMount moves this process's working directory out of the vaultui mount it is in, to
// the mount point's parent, when that mount is target's (its cipherdir or its mount point, by
// identity; any mount for ""). The kernel counts a working directory as a use of the mount:
// left there, an unmount asked from inside (a shell's "cd ~/Vaults/work && vaultui unmount
// work", or a TUI started there) would fail, with this process named as what holds it.
// Nothing is done when the working directory is on no mount of ours.
func (a *App) leaveMount(target string) {
	cwd, err := os.Readlink("/proc/self/cwd") // the kernel's path, not $PWD's
	if err != nil {
		return
	}
	mounts, _ := a.kernelMounts()
	var in *mountmgr.MountInfo
	for i, m := range mounts {
		if (cwd == m.MountPoint || strings.HasPrefix(cwd, strings.TrimSuffix(m.MountPoint, "/")+"/")) &&
			(in == nil || len(m.MountPoint) > len(in.MountPoint)) {
			in = &mounts[i]
		}
	}
	if in == nil || target != "" && !sameFile(target, in.CipherDir) && !sameFile(target, in.MountPoint) {
		return
	}
	if os.Chdir(filepath.Dir(in.MountPoint)) != nil {
		os.Chdir("/")
	}
}

// sameFile reports whether paths a and b name one file, by identity.
func sameFile(a, b string) bool {
	ia, err := vault.IDOf(a)
	if err != nil {
		return false
	}
	ib, err := vault.IDOf(b)
	return err == nil && ia == ib
}

// NamedMount is a mount with the name its vault is registered under ("" when none).
type NamedMount struct {
	mountmgr.MountInfo
	Name string
}

// UnmountedAll is what UnmountAll did: the mounts that were in place and are gone, and those
// still mounted by the daemons of other runtime directories (not this one's to unmount).
type UnmountedAll struct {
	Unmounted []NamedMount
	Others    []mountmgr.MountInfo
}

// UnmountAll unmounts every vault of the daemon and says what that was. A mount that was
// already detached or stale before is not counted; one still in place after is not either
// (err says why).
func (a *App) UnmountAll(ctx context.Context) (UnmountedAll, error) {
	var out UnmountedAll
	var before, after []mountmgr.MountInfo
	a.leaveMount("")
	err := a.daemonCall(ctx, func(d Daemon) error {
		var err error
		if before, err = d.Status(ctx); err != nil {
			return err
		}
		err = d.UnmountAll(ctx)
		if st, serr := d.Status(ctx); serr == nil {
			after = st
		}
		return err
	})
	if before == nil && err != nil {
		return out, err
	}
	still := map[string]bool{}
	for _, m := range after {
		if !m.Detached {
			still[m.MountPoint] = true
		}
	}
	names := a.names()
	for _, m := range before {
		if m.Stale || m.Detached || still[m.MountPoint] {
			continue
		}
		out.Unmounted = append(out.Unmounted, NamedMount{MountInfo: m, Name: names[m.CipherDir]})
	}
	if err != nil {
		return out, err
	}
	if all, verr := a.kernelMounts(); verr == nil {
		for _, m := range all {
			if !still[m.MountPoint] {
				out.Others = append(out.Others, m)
			}
		}
	}
	return out, nil
}

// names maps each registered cipherdir to its name (empty when the registry cannot be read).
func (a *App) names() map[string]string {
	names := map[string]string{}
	if reg, err := a.Registry(); err == nil {
		for _, v := range reg.Vaults {
			names[v.CipherDir] = v.Name
		}
	}
	return names
}

// Watch calls each with the daemon's mounts about once a second until ctx is done (then it
// returns nil) or the daemon goes away.
func (a *App) Watch(ctx context.Context, each func([]mountmgr.MountInfo)) error {
	return a.daemonCall(ctx, func(d Daemon) error { return d.Watch(ctx, each) })
}

// DaemonInfo says how the daemon runs (its pid, a log it cannot write).
func (a *App) DaemonInfo(ctx context.Context) (mountmgr.DaemonInfo, error) {
	return daemonGet(ctx, a, func(d Daemon) (mountmgr.DaemonInfo, error) { return d.Daemon(ctx) })
}

// NamedEvent is a daemon event with the name its vault is registered under ("" when none).
type NamedEvent struct {
	mountmgr.Event
	Name string `json:"name,omitempty"`
}

func (a *App) named(evs []mountmgr.Event) []NamedEvent {
	names := a.names()
	out := make([]NamedEvent, 0, len(evs))
	for _, e := range evs {
		out = append(out, NamedEvent{Event: e, Name: names[e.CipherDir]})
	}
	return out
}

// Events returns the daemon's event log after event number after (0: all), oldest first.
func (a *App) Events(ctx context.Context, after uint64) ([]NamedEvent, error) {
	evs, err := daemonGet(ctx, a, func(d Daemon) ([]mountmgr.Event, error) { return d.Events(ctx, after) })
	return a.named(evs), err
}

// FollowEvents calls each with the events after event number after, then with every new one,
// until ctx is done (then it returns nil) or the daemon goes away.
func (a *App) FollowEvents(ctx context.Context, after uint64, each func([]NamedEvent)) error {
	return a.daemonCall(ctx, func(d Daemon) error {
		return d.FollowEvents(ctx, after, func(evs []mountmgr.Event) { each(a.named(evs)) })
	})
}

// ErrReverseView: what was asked works on a vault's own encrypted files, which a reverse vault
// does not have: its encrypted view is derived from its plaintext folder and read-only.
var ErrReverseView = errors.New("a reverse vault's encrypted view is read-only, derived from its plaintext folder")

// ForwardOnly refuses, for a reverse vault, what writes through a vault or works on its
// encrypted files (change password, fsck, convert, conflicts): the one rule both front ends
// follow so none offers a write to a read-only view. It is nil for any other vault.
func ForwardOnly(e registry.Entry, what string) error {
	if !e.Reverse {
		return nil
	}
	return fmt.Errorf("%s: no %s: %w", termsafe.Escape(e.Name), what, ErrReverseView)
}
