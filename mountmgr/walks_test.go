package mountmgr

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault"
	"github.com/vaultui/vaultui/vault/format"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

// TestWalksThroughDaemon: fsck and export of a mounted vault by the daemon, with its key,
// give what the offline walk gives, damage included; the export keeps its refusals.
func TestWalksThroughDaemon(t *testing.T) {
	base := daemonEnv(t)
	cipherdir, mp, pw := newVault(t, base, crypto.AESGCM)
	c := connect(t)
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: append([]byte(nil), pw...)}); err != nil {
		t.Fatal(err)
	}
	defer c.Unmount(context.Background(), mp, true)
	data := bytes.Repeat([]byte("through the daemon\n"), 2000)
	if err := os.Mkdir(filepath.Join(mp, "dir"), 0o750); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string][]byte{"dir/a": []byte("a"), "big": data, "bad \xff name": nil} {
		if err := os.WriteFile(filepath.Join(mp, name), content, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("dir/a", filepath.Join(mp, "link")); err != nil {
		t.Fatal(err)
	}
	offline, err := gocryptfs.Unlock(context.Background(), cipherdir, pw)
	if err != nil {
		t.Fatal(err)
	}
	defer offline.Close()

	var last vault.FsckProgress
	problems, err := c.Fsck(ctx(t), cipherdir, func(p vault.FsckProgress) { last = p })
	if err != nil || problems != nil {
		t.Fatalf("fsck through the daemon: %v, %v", problems, err)
	}
	if last.Counting || last.Done != 5 || last.Total != 5 {
		t.Errorf("last progress %+v, want 5 of 5 entries", last)
	}

	mounted, plain := filepath.Join(base, "out-mounted"), filepath.Join(base, "out-offline")
	if err := c.Export(ctx(t), mp, mounted, vault.ExportOptions{}); err != nil {
		t.Fatalf("export through the daemon (named by mount point): %v", err)
	}
	if err := vault.ExportVolume(ctx(t), offline.Volume(), plain, vault.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	sameTree(t, mounted, plain)
	if got, _ := os.ReadFile(filepath.Join(mounted, "big")); !bytes.Equal(got, data) {
		t.Error("exported big differs")
	}
	for _, dest := range []string{filepath.Join(cipherdir, "x"), filepath.Join(mp, "x"), mounted} {
		err := c.Export(ctx(t), cipherdir, dest, vault.ExportOptions{})
		if err == nil {
			t.Errorf("export to %s: no error", dest)
		}
		if dest != mounted {
			if _, serr := os.Lstat(dest); serr == nil {
				t.Errorf("export to %s (%v) made it", dest, err)
			}
		}
	}

	// One flipped byte in the content of big: the same finding both ways.
	cpath := cipherOf(t, cipherdir, len(data))
	flip(t, cpath, 4200)
	want, err := vault.FsckVolume(ctx(t), offline.Volume(), nil)
	if err != nil || len(want) != 1 || want[0].Kind != format.KindContent {
		t.Fatalf("offline fsck of the damaged vault: %+v, %v", want, err)
	}
	got, err := c.Fsck(ctx(t), mp, nil)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("fsck through the daemon: %+v, %v; offline %+v", got, err, want)
	}
	var damaged []vault.Problem
	err = c.Export(ctx(t), cipherdir, filepath.Join(base, "forced"), vault.ExportOptions{Force: true,
		Damaged: func(p vault.Problem) { damaged = append(damaged, p) }})
	if !errors.Is(err, vault.ErrCorrupt) || !reflect.DeepEqual(damaged, want) {
		t.Fatalf("forced export: %v, damage %+v", err, damaged)
	}
	if err := c.Export(ctx(t), cipherdir, filepath.Join(base, "stopped"), vault.ExportOptions{}); !errors.Is(err, vault.ErrCorrupt) {
		t.Fatalf("export of the damaged vault: %v", err)
	}
}

// TestWalkEnds: a client that goes away mid-walk, and an unmount meanwhile, each end the
// daemon's walk, which leaves the daemon serving and the vault unmountable at once.
func TestWalkEnds(t *testing.T) {
	base := daemonEnv(t)
	cipherdir, mp, pw := newVault(t, base, crypto.AESGCM)
	c := connect(t)
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw}); err != nil {
		t.Fatal(err)
	}
	// A big sparse file takes the walk seconds, and no disk.
	f, err := os.Create(filepath.Join(mp, "huge"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(32 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()

	// The client goes away once the walk has begun.
	wctx, cancel := context.WithCancel(ctx(t))
	start := time.Now()
	_, err = c.Fsck(wctx, cipherdir, func(p vault.FsckProgress) {
		if !p.Counting {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled fsck: %v", err)
	}
	logged := func(what string) bool {
		for i := 0; i < 500; i++ {
			b, _ := os.ReadFile(filepath.Join(base, "state", "vaultui", "daemon.log"))
			if strings.Contains(string(b), what) {
				return true
			}
			time.Sleep(10 * time.Millisecond)
		}
		return false
	}
	if !logged("fsck of " + cipherdir + ": the client went away; stopped") {
		t.Fatal("the daemon did not log the end of the walk whose client went away")
	}
	t.Logf("cancelled after %v", time.Since(start))

	// An unmount during a walk ends it at once, with an error that says so.
	done := make(chan error, 1)
	begun := make(chan struct{})
	go func() {
		c2 := connect(t)
		var once bool
		_, err := c2.Fsck(ctx(t), mp, func(p vault.FsckProgress) {
			if !p.Counting && !once {
				once = true
				close(begun)
			}
		})
		done <- err
	}()
	select {
	case <-begun:
	case err := <-done:
		t.Fatalf("fsck ended before the unmount: %v", err)
	}
	start = time.Now()
	if err := c.Unmount(ctx(t), mp, false); err != nil {
		t.Fatalf("unmount during a walk: %v", err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotMounted) || !strings.Contains(err.Error(), "unmounted during the fsck") {
			t.Errorf("fsck cut by the unmount: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("fsck still running 10s after the unmount")
	}
	t.Logf("walk ended %v after the unmount began", time.Since(start))
	if _, err := c.Status(ctx(t)); err != nil {
		t.Fatalf("daemon after the walks: %v", err)
	}
	if _, err := c.Fsck(ctx(t), cipherdir, nil); !errors.Is(err, ErrNotMounted) {
		t.Errorf("fsck of an unmounted vault through the daemon: %v", err)
	}
}

// cipherOf finds the cipher file in dir whose content is plaintext size n.
func cipherOf(t *testing.T, dir string, n int) string {
	t.Helper()
	blocks := (n + crypto.BlockSize - 1) / crypto.BlockSize
	want := int64(crypto.HeaderLen + n + blocks*crypto.AESGCM.BlockOverhead())
	var found string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil && info.Size() == want {
				found = p
			}
		}
		return nil
	})
	if found == "" {
		t.Fatalf("no cipher file of %d bytes in %s", want, dir)
	}
	return found
}

// flip inverts the byte at off of file p, keeping its modification time.
func flip(t *testing.T, p string, off int64) {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
	f.Close()
	os.Chtimes(p, st.ModTime(), st.ModTime())
}

// sameTree fails t unless the trees at a and b hold the same names, modes, times and contents.
func sameTree(t *testing.T, a, b string) {
	t.Helper()
	list := func(root string) map[string]string {
		out := map[string]string{}
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				t.Error(err)
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			info, err := os.Lstat(p)
			if err != nil {
				t.Error(err)
				return nil
			}
			desc := info.Mode().String()
			if rel != "." {
				desc += " " + info.ModTime().String()
			}
			switch {
			case info.Mode().IsRegular():
				c, _ := os.ReadFile(p)
				desc += " " + string(c)
			case info.Mode()&fs.ModeSymlink != 0:
				l, _ := os.Readlink(p)
				desc += " -> " + l
			}
			out[rel] = desc
			return nil
		})
		return out
	}
	la, lb := list(a), list(b)
	if !reflect.DeepEqual(la, lb) {
		t.Errorf("trees differ:\n%v\n%v", la, lb)
	}
}

// TestWireTextKeepsBytes: names need not be UTF-8; findings and progress keep their bytes
// across the socket, where a JSON string would replace them.
func TestWireTextKeepsBytes(t *testing.T) {
	for _, s := range []string{"", "plain/name.txt", "bad \xff name", "\x1b[31m", "ü/\xc3"} {
		p := vault.Problem{Path: s, CipherPath: "c", Kind: format.KindContent, Detail: s + " failed", FirstBlock: 1, LastBlock: 2}
		b, err := json.Marshal(response{Problems: wiredList([]vault.Problem{p}), Progress: &wired[vault.FsckProgress]{vault.FsckProgress{Path: s}}})
		if err != nil {
			t.Fatal(err)
		}
		var back response
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%q: %v (%s)", s, err, b)
		}
		got := back.Problems[0].v
		if got.Path != s || got.Detail != s+" failed" || got.FirstBlock != 1 || got.LastBlock != 2 || back.Progress.v.Path != s {
			t.Errorf("%q came back as %+v, progress %q", s, got, back.Progress.v.Path)
		}
	}
}

// TestWalkKeepsMountFromIdling: a walk through the daemon uses the vault without the mount,
// so the mount's idle timer must not cut it; once it ends, the vault idles out as before.
func TestWalkKeepsMountFromIdling(t *testing.T) {
	base := daemonEnv(t)
	cipherdir, mp, pw := newVault(t, base, crypto.AESGCM)
	c := connect(t)
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw, Idle: time.Second}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(mp, "huge"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 40); err != nil {
		t.Fatal(err)
	}
	f.Close()
	wctx, cancel := context.WithCancel(ctx(t))
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := c.Fsck(wctx, cipherdir, nil)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("fsck of 1 TiB ended within 3 s (%v): too short to show the idle timer waits", err)
	case <-time.After(3 * time.Second):
	}
	if len(mountsUnder(base)) == 0 {
		t.Fatal("the mount idled out during a walk")
	}
	cancel()
	<-done
	deadline := time.Now().Add(30 * time.Second) // room for a loaded machine
	for len(mountsUnder(base)) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("idle mount still mounted 30 s after the walk")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
