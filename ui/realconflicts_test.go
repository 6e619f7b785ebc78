package ui

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/internal/vaulttest"
	"github.com/vaultui/vaultui/keyring"
	"github.com/vaultui/vaultui/vault"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

// syncedVault makes a real vault (vault.Create, password "pw") holding report.odt, notes and
// d/x.txt, and gives each a conflict copy the way a sync tool makes one: another cipher file
// (so the copy's content differs) renamed with the tool's marker, a newer modification time
// on the report's copy. It returns the cipherdir.
func syncedVault(t *testing.T) string {
	t.Helper()
	src := t.TempDir()
	os.Mkdir(filepath.Join(src, "d"), 0o755)
	for p, data := range map[string]string{
		"report.odt": "original", "report copy": "the copy",
		"notes": "notes v1", "notes copy": "notes v2",
		"d/x.txt": "x v1", "d/x copy": "x v2",
	} {
		if err := os.WriteFile(filepath.Join(src, p), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(t.TempDir(), "v.crypt")
	if _, err := vault.Create(context.Background(), dir, []byte("pw"), vault.CreateOptions{ScryptLogN: 10}); err != nil {
		t.Fatal(err)
	}
	v, err := gocryptfs.Unlock(context.Background(), dir, []byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if err := vaulttest.Import(context.Background(), v, src); err != nil {
		t.Fatal(err)
	}
	cipher := map[string]string{}
	vault.WalkVolume(context.Background(), v.Volume(), func(n vault.Node) error {
		cipher[n.Path] = filepath.Join(dir, filepath.FromSlash(n.CipherPath))
		return nil
	}, nil)
	for _, c := range []struct{ of, from, marker string }{
		{"report.odt", "report copy", ".sync-conflict-20261130-101010-ABCDEF7"}, // Syncthing
		{"notes", "notes copy", " (Ann's conflicted copy 2026-11-29)"},          // Dropbox
		{"d/x.txt", "d/x copy", "_conflict-20261128-090000"},                    // ownCloud
	} {
		if err := os.Rename(cipher[c.from], cipher[c.of]+c.marker); err != nil {
			t.Fatal(err)
		}
	}
	later := time.Now().Add(time.Hour)
	os.Chtimes(cipher["report.odt"]+".sync-conflict-20261130-101010-ABCDEF7", later, later)
	return dir
}

func paths(list []vault.ConflictEntry) []string {
	var out []string
	for _, c := range list {
		out = append(out, c.Path+" <- "+c.Of)
	}
	sort.Strings(out)
	return out
}

// plainFiles reads every file of the vault offline: path → content.
func plainFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "out")
	v, err := gocryptfs.Unlock(context.Background(), dir, []byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if err := vault.ExportVolume(context.Background(), v.Volume(), dst, vault.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	filepath.WalkDir(dst, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dst, p)
			out[filepath.ToSlash(rel)] = string(b)
		}
		return nil
	})
	return out
}

var wantCopies = []string{
	"d/x (conflict 2026-11-28 ownCloud).txt <- d/x.txt",
	"notes (conflict 2026-11-29 Dropbox) <- notes",
	"report (conflict 2026-11-30 Syncthing).odt <- report.odt",
}

func find(t *testing.T, list []vault.ConflictEntry, of string) vault.ConflictEntry {
	t.Helper()
	for _, c := range list {
		if c.Of == of {
			return c
		}
	}
	t.Fatalf("no copy of %s in %v", of, paths(list))
	return vault.ConflictEntry{}
}

// settleEachWay keeps both versions of report.odt, the original of notes and the copy of
// d/x.txt through s, and checks the vault's files after each.
func settleEachWay(t *testing.T, b *realBackend, dir string, s ConflictSession, files func() map[string]string) {
	t.Helper()
	ctx := context.Background()
	list, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(list); !reflect.DeepEqual(got, wantCopies) {
		t.Fatalf("copies %q, want %q", got, wantCopies)
	}
	report := find(t, list, "report.odt")
	if report.Tool != "Syncthing" || report.Date != "2026-11-30" || report.Size != int64(len("the copy")) || report.Newer != "copy" || report.Dir {
		t.Fatalf("report's copy: %+v", report)
	}
	if c := find(t, list, "notes"); c.Tool != "Dropbox" || c.Date != "2026-11-29" {
		t.Fatalf("notes' copy: %+v", c)
	}

	if err := s.Settle(ctx, report.Path, vault.KeepBoth); err != nil {
		t.Fatal(err)
	}
	if err := s.Settle(ctx, find(t, list, "notes").Path, vault.KeepOriginal); err != nil {
		t.Fatal(err)
	}
	if err := s.Settle(ctx, find(t, list, "d/x.txt").Path, vault.KeepCopy); err != nil {
		t.Fatal(err)
	}
	if list, err := s.List(ctx); err != nil || len(list) != 0 {
		t.Fatalf("after settling all: %v, %v", paths(list), err)
	}
	if n, err := b.CountConflicts(dir); err != nil || n.N != 0 {
		t.Fatalf("count after settling: %+v, %v", n, err)
	}
	want := map[string]string{
		"report.odt": "original", "report (conflict 2026-11-30 Syncthing).odt": "the copy",
		"notes":   "notes v1",
		"d/x.txt": "x v2",
	}
	if got := files(); !reflect.DeepEqual(got, want) {
		t.Fatalf("files after settling: %q, want %q", got, want)
	}
	if err := s.Settle(ctx, report.Path, vault.KeepOriginal); err == nil {
		t.Fatal("a settled copy (an ordinary file now) could be settled again")
	}
	if got := files(); !reflect.DeepEqual(got, want) {
		t.Fatalf("settling a settled copy changed files: %q", got)
	}
}

// TestRealBackendConflictsLocked settles one copy each way in a vault that is not mounted.
func TestRealBackendConflictsLocked(t *testing.T) {
	dir := syncedVault(t)
	b := testBackend()
	ctx := context.Background()
	if n, err := b.CountConflicts(dir); err != nil || n != (ConflictCount{N: 3, Complete: true}) {
		t.Fatalf("CountConflicts = %+v, %v", n, err)
	}
	if _, err := b.OpenConflicts(ctx, dir, "", []byte("wrong")); !errors.Is(err, ErrWrongPassword) {
		t.Fatalf("wrong password: %v", err)
	}
	s, err := b.OpenConflicts(ctx, dir, "", []byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	settleEachWay(t, b, dir, s, func() map[string]string { return plainFiles(t, dir) })
}

// testBackend is the real backend with no keyring: tests give passwords.
func testBackend() *realBackend {
	return &realBackend{app: app.New(app.Options{Keyring: func(context.Context) (app.Keyring, error) {
		return nil, keyring.ErrUnavailable
	}})}
}
