package app

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/registry"
	"github.com/vaultui/vaultui/vault"
)

// TestUnmountAllReports: what was in place and is gone is reported, by registered name; a
// detached or stale mount is not counted, nor one that stayed (busy, and the error says so);
// another daemon's mounts are named apart.
func TestUnmountAllReports(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	t.Setenv("HOME", home)
	regPath := filepath.Join(home, "vaults.json")
	if _, err := registry.Update(regPath, func(r *registry.Registry) error {
		return r.Add(registry.Entry{Name: "work", CipherDir: "/c/work", MountPoint: "/m/work"})
	}); err != nil {
		t.Fatal(err)
	}
	d := &fakeDaemon{mounts: []mountmgr.MountInfo{
		{CipherDir: "/c/work", MountPoint: "/m/work"},
		{CipherDir: "/c/other", MountPoint: "/m/other"},
		{CipherDir: "/c/gone", MountPoint: "/m/gone", Detached: true},
		{CipherDir: "/c/busy", MountPoint: "/m/busy"},
	}, busy: map[string]bool{"/m/busy": true}}
	a := New(Options{Registry: regPath, Connect: func(context.Context) (Daemon, error) { return d, nil }})
	a.kernelMounts = func() ([]mountmgr.MountInfo, error) {
		return []mountmgr.MountInfo{{CipherDir: "/c/x", MountPoint: "/m/x"}}, nil
	}
	res, err := a.UnmountAll(ctx)
	if !errors.Is(err, mountmgr.ErrBusy) {
		t.Fatalf("a busy mount must fail the call: %v", err)
	}
	var got []string
	for _, m := range res.Unmounted {
		got = append(got, m.Name+"@"+m.MountPoint)
	}
	if strings.Join(got, " ") != "work@/m/work @/m/other" {
		t.Fatalf("unmounted %q", got)
	}
	d.busy = nil
	res, err = a.UnmountAll(ctx)
	if err != nil || len(res.Unmounted) != 1 || res.Unmounted[0].MountPoint != "/m/busy" || len(res.Others) != 1 || res.Others[0].MountPoint != "/m/x" {
		t.Fatalf("second run: %+v, %v", res, err)
	}
}

// TestUnmountNamesTheVaultAsGiven: a registered name is unmounted by its cipherdir; an
// unknown one is refused before the daemon; "not mounted" names it as the user did.
func TestUnmountNamesTheVaultAsGiven(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	t.Setenv("HOME", home)
	regPath := filepath.Join(home, "vaults.json")
	if _, err := registry.Update(regPath, func(r *registry.Registry) error {
		return r.Add(registry.Entry{Name: "work", CipherDir: "/c/work", MountPoint: "/m/work"})
	}); err != nil {
		t.Fatal(err)
	}
	d := &fakeDaemon{mounts: []mountmgr.MountInfo{{CipherDir: "/c/work", MountPoint: "/m/work"}}}
	a := New(Options{Registry: regPath, Connect: func(context.Context) (Daemon, error) { return d, nil }})
	if err := a.Unmount(ctx, "nosuch", false); !errors.Is(err, vault.ErrNotFound) {
		t.Fatalf("unknown: %v", err)
	}
	if err := a.Unmount(ctx, "work", false); err != nil || len(d.mounts) != 0 {
		t.Fatalf("by name: %v, left %+v", err, d.mounts)
	}
	if err := a.Unmount(ctx, "work", false); !errors.Is(err, mountmgr.ErrNotMounted) || err.Error() != "work is not mounted" {
		t.Fatalf("not mounted: %v", err)
	}
}

// TestEventsCarryNames: events name their vault by its registered name.
func TestEventsCarryNames(t *testing.T) {
	home := t.TempDir()
	regPath := filepath.Join(home, "vaults.json")
	if _, err := registry.Update(regPath, func(r *registry.Registry) error {
		return r.Add(registry.Entry{Name: "work", CipherDir: "/c/work", MountPoint: "/m/work"})
	}); err != nil {
		t.Fatal(err)
	}
	d := &fakeDaemon{events: []mountmgr.Event{{Seq: 1, CipherDir: "/c/work"}, {Seq: 2, CipherDir: "/c/x"}}}
	a := New(Options{Registry: regPath, Connect: func(context.Context) (Daemon, error) { return d, nil }})
	evs, err := a.Events(context.Background(), 0)
	if err != nil || len(evs) != 2 || evs[0].Name != "work" || evs[1].Name != "" {
		t.Fatalf("%+v, %v", evs, err)
	}
}

// TestForwardOnly: a reverse vault refuses what works on a vault's own encrypted files, with
// its name and ErrReverseView; any other vault is let through.
func TestForwardOnly(t *testing.T) {
	if err := ForwardOnly(registry.Entry{Name: "work", CipherDir: "/data/work"}, "fsck"); err != nil {
		t.Fatalf("forward vault: %v", err)
	}
	err := ForwardOnly(registry.Entry{Name: "docs", CipherDir: "/home/u/Documents", Reverse: true}, "fsck")
	if !errors.Is(err, ErrReverseView) || !strings.Contains(err.Error(), "docs: no fsck") {
		t.Fatalf("reverse vault: %v", err)
	}
}

// TestMountForReverse: a reverse vault's registry entry mounts its encrypted view with its
// exclusion rules (the TUI and the CLI both build their requests from MountFor).
func TestMountForReverse(t *testing.T) {
	e := registry.Entry{Name: "docs", CipherDir: "/home/u/Documents", MountPoint: "/m", Reverse: true, Exclude: []string{"*.iso"}}
	r := MountFor(e)
	if !r.Reverse || len(r.Exclude) != 1 || r.Exclude[0] != "*.iso" || r.Vault.Name != "docs" || r.MountPoint != "/m" {
		t.Fatalf("MountFor = %+v", r)
	}
	r.Exclude[0] = "changed"
	if e.Exclude[0] != "*.iso" {
		t.Fatal("MountFor shares the entry's exclusion rules")
	}
}
