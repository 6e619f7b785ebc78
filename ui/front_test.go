package ui

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/registry"
	"github.com/vaultui/vaultui/vault"
)

// reverseVault is a registered reverse vault: a plaintext folder whose encrypted view is
// mounted, with an exclusion rule and registry options that are the mount's defaults.
func reverseVault() Vault {
	return Vault{Entry: registry.Entry{Name: "docs", CipherDir: "/home/u/Documents", MountPoint: "/home/u/Vaults/docs.enc",
		Reverse: true, Exclude: []string{"*.iso"}}, Cipher: "AES-SIV-512"}
}

// TestMountReverseVault: the TUI mounts a reverse vault as app.MountFor says (its encrypted
// view, with its exclusion rules), read-only, and offers no read-only choice for it.
func TestMountReverseVault(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	fb.vaults = append(fb.vaults, reverseVault())
	tm := newTestModel(t, fb)
	tm.keys("j", "j", "m")
	s, ok := tm.current.(*mountScreen)
	if !ok || s.v.Name != "docs" {
		t.Fatalf("m on docs opened %T", tm.current)
	}
	wantView(t, tm, "reverse · read-only view")
	if v := tm.View(); containsAny(v, "Read-only") {
		t.Fatalf("the mount form of a reverse vault offers a read-only choice:\n%s", v)
	}
	tm.keys("hunter22", "enter")
	if len(fb.mountReqs) != 1 {
		t.Fatalf("%d mount requests", len(fb.mountReqs))
	}
	req := fb.mountReqs[0]
	if !req.Reverse || !slices.Equal(req.Exclude, []string{"*.iso"}) || req.Vault.CipherDir != "/home/u/Documents" ||
		req.Vault.Name != "docs" || req.MountPoint != "/home/u/Vaults/docs.enc" {
		t.Fatalf("mount request %+v, want the reverse view of docs as registered", req)
	}
	wantView(t, tm, "docs mounted at")
}

// TestReverseVaultOffersNoWrites: password change, fsck, conflicts and convert are refused for
// a reverse vault with app's reason, before any screen asks for anything.
func TestReverseVaultOffersNoWrites(t *testing.T) {
	fb := newFake()
	fb.vaults = []Vault{reverseVault()}
	tm := newTestModel(t, fb)
	for _, k := range []string{"p", "f", "c"} {
		tm.keys(k)
		if tm.current != nil {
			t.Fatalf("%s on a reverse vault opened %T", k, tm.current)
		}
		wantView(t, tm, "docs: no ", "reverse vault's encrypted view is read-only")
	}
	tm.keys("i")
	if v := tm.View(); containsAny(v, "convert cipher") {
		t.Fatalf("info of a reverse vault offers convert:\n%s", v)
	}
	tm.keys("C")
	if _, ok := tm.current.(*infoScreen); !ok {
		t.Fatalf("C on a reverse vault's info opened %T", tm.current)
	}
}

// TestListShowsReverseBadge: the list marks a reverse vault.
func TestListShowsReverseBadge(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	fb.vaults = append(fb.vaults, reverseVault())
	tm := newTestModel(t, fb)
	wantView(t, tm, "docs  reverse · read-only view")
	golden(t, tm, "list")
}

// TestAddLeavesDefaultsToApp: the add screen sends what was typed, and app.Add's answer (a
// taken name, the defaults it filled) is what the screen shows.
func TestAddLeavesDefaultsToApp(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	tm := newTestModel(t, fb)
	tm.keys("a", "/data/work.crypt", "enter")
	wantView(t, tm, `vault name "work": already registered`)
	if len(fb.addReqs) != 1 || fb.addReqs[0] != (app.NewEntry{CipherDir: "/data/work.crypt"}) {
		t.Fatalf("add requests %+v, want the folder alone", fb.addReqs)
	}
	tm.keys("tab", "w2", "enter")
	wantView(t, tm, "Added w2.")
	if got := fb.addReqs[1]; got.Name != "w2" || got.MountPoint != "" || got.Lock != "" {
		t.Fatalf("add request %+v, want the name alone besides the folder", got)
	}
	if v := fb.vaults[len(fb.vaults)-1]; v.MountPoint != "/home/u/Vaults/w2" {
		t.Fatalf("added %+v", v)
	}
}

func containsAny(s string, parts ...string) bool {
	return slices.ContainsFunc(parts, func(p string) bool { return strings.Contains(s, p) })
}

// TestInfoOfReverseVault: the info screen of a reverse vault says what it mounts and which
// rules leave files out of the view (app.EntryFacts), and reads the reverse config.
func TestInfoOfReverseVault(t *testing.T) {
	fb := newFake()
	fb.vaults = []Vault{reverseVault()}
	tm := newTestModel(t, fb)
	tm.keys("i")
	wantView(t, tm, "View", app.ReverseView, "Excluded", "*.iso", "AEGIS-256X2")
	if len(fb.infoOf) != 1 || !fb.infoOf[0].Reverse || fb.infoOf[0].CipherDir != "/home/u/Documents" {
		t.Fatalf("info read %+v, want the reverse vault's entry", fb.infoOf)
	}
}

// TestRealBackendInfoReverse: the real backend reads a reverse vault's
// .gocryptfs.reverse.conf (its folder has no gocryptfs.conf).
func TestRealBackendInfoReverse(t *testing.T) {
	dir := t.TempDir()
	if _, err := vault.CreateReverse(context.Background(), dir, []byte("pw"), vault.CreateOptions{Cipher: crypto.AESSIV, ScryptLogN: 10}); err != nil {
		t.Fatal(err)
	}
	fields, err := testBackend().Info(context.Background(), registry.Entry{Name: "docs", CipherDir: dir, Reverse: true})
	if err != nil {
		t.Fatalf("info of a reverse vault: %v", err)
	}
	if i := slices.IndexFunc(fields, func(f vault.Fact) bool { return f.Label == "Cipher" }); i < 0 || fields[i].Value != "AES-SIV-512" {
		t.Fatalf("info %+v, want Cipher AES-SIV-512", fields)
	}
}

// TestMountPointFromCore: a vault registered without a mount point mounts where the core
// says (app.MountFor, as the CLI does), which the mount screen shows.
func TestMountPointFromCore(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	fb := newFake()
	fb.vaults = []Vault{{Entry: registry.Entry{Name: "bare", CipherDir: "/data/bare.crypt"}, Cipher: "AES-256-GCM"}}
	tm := newTestModel(t, fb)
	want := filepath.Join(home, "Vaults", "bare")
	if mp := app.MountFor(fb.vaults[0].Entry).MountPoint; mp != want {
		t.Fatalf("app.MountFor: mount point %q, want %q", mp, want)
	}
	tm.keys("m")
	wantView(t, tm, "Mount point  ~/Vaults/bare")
	tm.keys("hunter22", "enter")
	if len(fb.mountReqs) != 1 || fb.mountReqs[0].MountPoint != want {
		t.Fatalf("mount requests %+v, want one at %s", fb.mountReqs, want)
	}
}

// TestMountModesShown: a vault mounted with one-off options (read-only, shared storage from
// `vaultui mount --ro --sharedstorage`) says so in its list row and its info, although its
// registered options are plain.
func TestMountModesShown(t *testing.T) {
	fb := newFake()
	twoVaults(fb)
	mounts := mountWork(fb, 0, 0)
	mounts[0].ReadOnly, mounts[0].SharedStorage = true, true
	tm := newTestModel(t, fb)
	tm.send(mountsMsg(mounts))
	wantView(t, tm, "mounted at /home/u/Vaults/work, read-only, shared storage")
	// At 60 columns too the rates give way, rather than be clipped to "read 0".
	tm.send(tea.WindowSizeMsg{Width: 60, Height: 16})
	wantView(t, tm, "/Vaults/work, read-only, shared storage")
	notInView(t, tm, "read 0")
	tm.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	tm.keys("i")
	wantView(t, tm, "since", "shared storage")
}
