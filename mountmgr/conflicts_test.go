package mountmgr

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault"
)

// TestConflictWithNonUTF8NameThroughDaemon: a sync tool's conflict copy of a file whose
// name is not UTF-8 is listed by the daemon under its exact bytes, and settles through it.
func TestConflictWithNonUTF8NameThroughDaemon(t *testing.T) {
	base := daemonEnv(t)
	cipherdir, mp, pw := newVault(t, base, crypto.AESGCM)
	c := connect(t)
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw}); err != nil {
		t.Fatal(err)
	}
	defer c.Unmount(context.Background(), mp, true)
	const (
		name   = "r\xe9sum\xe9.txt"
		shown  = "r\xe9sum\xe9 (conflict 2026-11-30 Syncthing).txt"
		marker = ".sync-conflict-20261130-101010-ABCDEF7"
		copied = "the copy, 100 bytes: ......................................................................... end"
		later  = "the original, rewritten after the copy was made"
	)
	// conflict makes a Syncthing copy of name as it is (copied), then rewrites name.
	var copyPath string
	conflict := func() string {
		t.Helper()
		if err := os.WriteFile(filepath.Join(mp, name), []byte(copied), 0o640); err != nil {
			t.Fatal(err)
		}
		cipher := cipherOf(t, cipherdir, len(copied))
		b, err := os.ReadFile(cipher)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cipher+marker, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mp, name), []byte(later), 0o640); err != nil {
			t.Fatal(err)
		}
		return cipher + marker
	}
	list := func() []vault.ConflictEntry {
		t.Helper()
		got, err := c.Conflicts(ctx(t), mp)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Path != shown || got[0].Of != name {
			t.Fatalf("conflicts: %+v; want one, %q of %q", got, shown, name)
		}
		return got
	}
	read := func(n string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(mp, n))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	copyPath = conflict()
	if _, err := c.SettleConflict(ctx(t), mp, list()[0].Path, vault.KeepCopy); err != nil {
		t.Fatal(err)
	}
	if got := read(name); got != copied {
		t.Fatalf("after --keep copy %q holds %q", name, got)
	}
	// (Checked in the cipherdir: a lookup of the name through the mount now would be cached,
	// and hide the next copy, made behind the mount's back, for the cache's timeout.)
	if _, err := os.Lstat(copyPath); !os.IsNotExist(err) {
		t.Fatalf("after --keep copy the copy is still there: %v", err)
	}

	copyPath = conflict()
	if _, err := c.SettleConflict(ctx(t), mp, list()[0].Path, vault.KeepBoth); err != nil {
		t.Fatal(err)
	}
	if got, want := read(name), later; got != want {
		t.Fatalf("after --keep both %q holds %q", name, got)
	}
	if got := read(shown); got != copied {
		t.Fatalf("after --keep both %q holds %q", shown, got)
	}
	if got, err := c.Conflicts(ctx(t), mp); err != nil || len(got) != 0 {
		t.Fatalf("after settling: conflicts %+v, %v", got, err)
	}
}
