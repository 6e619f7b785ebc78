package vfs

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/testdeps"
	"github.com/vaultui/vaultui/vault/layout"
)

// testVolume makes a fresh cipherdir (no gocryptfs.conf: vfs does not read it) with a random
// master key.
func testVolume(t testing.TB, c crypto.CipherID, names bool) GocryptfsVolume {
	t.Helper()
	key := make([]byte, 32)
	rand.Read(key)
	enc, err := crypto.NewContentEnc(c, key, true)
	if err != nil {
		t.Skipf("cipher %s: %v", c, err)
	}
	dir := t.TempDir()
	v := GocryptfsVolume{Dir: dir, Content: enc}
	if names {
		if v.Names, err = crypto.NewNameTransform(key, true, true, 0); err != nil {
			t.Fatal(err)
		}
		v.PerDirIV = true
		fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer syscall.Close(fd)
		if _, err := layout.WriteDirIV(fd); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

// mountTest mounts v on a temp dir and unmounts it when the test ends, even on failure.
func mountTest(t testing.TB, v Volume, opts Options) (string, *Mounted) {
	t.Helper()
	testdeps.Need(t, testdeps.FUSE)
	mp := t.TempDir()
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	m, err := Mount(mp, v, opts)
	if err != nil {
		t.Fatalf("mount on %s: %v", mp, err)
	}
	t.Cleanup(func() {
		// The kernel releases the files a test closed a moment after close returns; until it
		// has, the unmount is busy (seen on a loaded machine). Try again for a few seconds.
		err := unmount(m)
		for deadline := time.Now().Add(5 * time.Second); err != nil && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
			err = unmount(m)
		}
		if err != nil {
			t.Errorf("unmount %s: %v", mp, err)
			// Detached, the file system is served until its last user is gone: wait for
			// that, so the test's later cleanups (wiping the vault's keys) find it stopped.
			if unmountFUSE(mp, true) == nil {
				done := make(chan struct{})
				go func() { m.Wait(); close(done) }()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					t.Errorf("%s: still served 10 s after a lazy unmount; this process's descriptors: %s", mp, openFiles())
				}
			}
		}
	})
	return mp, m
}

// unmountFUSE unmounts mp as the test's user can: umount(2) as root, else fusermount3 -u. lazy
// detaches a busy mount.
// unmount unmounts m's file system and waits for it to stop; it fails (EBUSY) while the mount
// is in use.
func unmount(m *Mounted) error {
	if err := m.Server.Unmount(); err != nil {
		return err
	}
	m.Wait()
	return nil
}

func unmountFUSE(mp string, lazy bool) error {
	if os.Geteuid() == 0 {
		flags := 0
		if lazy {
			flags = syscall.MNT_DETACH
		}
		return syscall.Unmount(mp, flags)
	}
	args := []string{"-u"}
	if lazy {
		args = append(args, "-z")
	}
	out, err := exec.Command("fusermount3", append(args, mp)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("fusermount3 %s %s: %w: %s", strings.Join(args, " "), mp, err, bytes.TrimSpace(out))
	}
	return nil
}

// needAllowOther skips t unless this user may mount with allow_other: root may, anyone else
// only with user_allow_other in /etc/fuse.conf (fusermount3 refuses it otherwise).
func needAllowOther(t testing.TB) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	f, err := os.Open("/etc/fuse.conf")
	if err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "user_allow_other" {
				return
			}
		}
	}
	t.Skip("allow_other needs root, or user_allow_other in /etc/fuse.conf")
}

func TestSmoke(t *testing.T) {
	for _, c := range []crypto.CipherID{crypto.AESGCM, crypto.XChaCha, crypto.AESSIV, crypto.AEGIS} {
		t.Run(string(c), func(t *testing.T) {
			v := testVolume(t, c, true)
			mp, _ := mountTest(t, v, Options{})
			data := make([]byte, 3*crypto.BlockSize+17)
			rand.Read(data)
			p := filepath.Join(mp, "a file")
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(p)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("read back: %v, equal=%v", err, bytes.Equal(got, data))
			}
			fi, err := os.Stat(p)
			if err != nil || fi.Size() != int64(len(data)) {
				t.Fatalf("stat: %v size %d", err, fi.Size())
			}
			if err := os.MkdirAll(filepath.Join(mp, "d1", "d2"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(p, filepath.Join(mp, "d1", "d2", "moved")); err != nil {
				t.Fatal(err)
			}
			got, err = os.ReadFile(filepath.Join(mp, "d1", "d2", "moved"))
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("after rename: %v", err)
			}
			ents, err := os.ReadDir(mp)
			if err != nil || len(ents) != 1 || ents[0].Name() != "d1" {
				t.Fatalf("readdir: %v %v", ents, err)
			}
			// Cipher side: encrypted names, diriv files.
			cents, _ := os.ReadDir(v.Dir)
			for _, e := range cents {
				if e.Name() == "d1" {
					t.Fatal("plaintext name on disk")
				}
			}
			if _, err := os.Stat(filepath.Join(mp, "missing")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("missing: %v", err)
			}
		})
	}
}

func TestMknodFIFO(t *testing.T) {
	v := testVolume(t, crypto.AESGCM, true)
	mp, _ := mountTest(t, v, Options{})
	p := filepath.Join(mp, "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("lstat: %v %v", fi, err)
	}
	ents, _ := os.ReadDir(mp)
	if len(ents) != 1 || ents[0].Name() != "fifo" {
		t.Fatalf("readdir: %v", ents)
	}
}

// TestTruncatingOpen: O_TRUNC (sent with OPEN) empties the file for every handle, and the next
// write starts a new header.
func TestTruncatingOpen(t *testing.T) {
	v := testVolume(t, crypto.AESGCM, true)
	mp, _ := mountTest(t, v, Options{})
	p := filepath.Join(mp, "f")
	old := bytes.Repeat([]byte("old "), 5000)
	if err := os.WriteFile(p, old, 0o644); err != nil {
		t.Fatal(err)
	}
	reader, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	buf := make([]byte, len(old))
	if _, err := reader.ReadAt(buf, 0); err != nil || !bytes.Equal(buf, old) {
		t.Fatalf("first read: %v", err)
	}
	if err := os.WriteFile(p, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	n, _ := reader.ReadAt(buf, 0)
	if string(buf[:n]) != "new" {
		t.Fatalf("old handle reads %q after the truncating rewrite", buf[:min(n, 20)])
	}
	if fi, _ := os.Stat(p); fi.Size() != 3 {
		t.Fatalf("size %d", fi.Size())
	}
}

// openFiles lists what this process has open, for a mount that something still holds.
func openFiles() string {
	ents, _ := os.ReadDir("/proc/self/fd")
	var out []string
	for _, e := range ents {
		if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil {
			out = append(out, e.Name()+"="+target)
		}
	}
	return strings.Join(out, " ")
}
