package vfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

// Shared storage is one cipherdir used by two machines at once; here two mounts of it in
// one process stand for them. "birth times" keeps the cipherdir in the test's temporary
// directory (ext4 here); "no birth times" inside another vaultui mount, which gives none, as
// most network file systems do, so nodes are known by inode number and type alone.
func sharedPair(t *testing.T, bt bool) (a, b string, vlt *gocryptfs.Vault) {
	t.Helper()
	dir := ""
	if !bt {
		outer, _ := mountTest(t, volumeOf(realVault(t, "", crypto.AESGCM)), Options{})
		dir = filepath.Join(outer, "cipher")
		// vault.Create syncs directories, which a mount does not support: made elsewhere.
		if err := os.CopyFS(dir, os.DirFS(realVault(t, "", crypto.AESGCM).Dir)); err != nil {
			t.Fatal(err)
		}
		var err error
		if vlt, err = gocryptfs.Unlock(context.Background(), dir, []byte("test password")); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(vlt.Close)
	} else {
		vlt = realVault(t, "", crypto.AESGCM)
	}
	if hasBirthTime(t, vlt.Dir) != bt {
		t.Skipf("birth times %v where %v was wanted", !bt, bt)
	}
	a, _ = mountTest(t, volumeOf(vlt), Options{SharedStorage: true})
	b, _ = mountTest(t, volumeOf(vlt), Options{SharedStorage: true})
	return a, b, vlt
}

// forBirthTimes runs test on a pair of mounts of a gocryptfs vault with birth times and
// without, and of a Cryptomator vault.
func forBirthTimes(t *testing.T, test func(t *testing.T, a, b string)) {
	for _, bt := range []bool{true, false} {
		name := "birth times"
		if !bt {
			name = "no birth times"
		}
		t.Run(name, func(t *testing.T) {
			a, b, _ := sharedPair(t, bt)
			test(t, a, b)
		})
	}
	t.Run("cryptomator", func(t *testing.T) {
		vol, _ := cryptomatorVolume(t)
		a, _ := mountTest(t, vol, Options{SharedStorage: true})
		b, _ := mountTest(t, vol, Options{SharedStorage: true})
		test(t, a, b)
	})
}

// TestSharedStorageSeesChanges: what one mount writes, the other shows at once: a new name it
// had looked up in vain, a file's new size, and new contents through a handle it holds open
// and has read before (a kernel that kept its pages or its size would show the old ones).
func TestSharedStorageSeesChanges(t *testing.T) {
	forBirthTimes(t, func(t *testing.T, a, b string) {
		if _, err := os.Stat(filepath.Join(b, "f")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("f before it exists: %v", err)
		}
		v1 := bytes.Repeat([]byte("one "), 1250)
		if err := os.WriteFile(filepath.Join(a, "f"), v1, 0o644); err != nil {
			t.Fatal(err)
		}
		h, err := os.Open(filepath.Join(b, "f"))
		if err != nil {
			t.Fatalf("f through the other mount: %v", err)
		}
		defer h.Close()
		buf := make([]byte, 3*crypto.BlockSize)
		if n, _ := h.ReadAt(buf, 0); !bytes.Equal(buf[:n], v1) {
			t.Fatalf("first read: %q...", buf[:min(n, 16)])
		}

		// Rewritten in place (same inode), longer.
		v2 := bytes.Repeat([]byte("two "), 2000)
		if err := os.WriteFile(filepath.Join(a, "f"), v2, 0o644); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(filepath.Join(b, "f")); err != nil || fi.Size() != int64(len(v2)) {
			t.Fatalf("size after the rewrite: %v, %d bytes, want %d", err, fi.Size(), len(v2))
		}
		if n, _ := h.ReadAt(buf, 0); !bytes.Equal(buf[:n], v2) {
			t.Fatalf("open handle after the rewrite: %d bytes %q...", n, buf[:min(n, 16)])
		}
		// A few bytes changed, size unchanged, within the modification time's resolution.
		w, err := os.OpenFile(filepath.Join(a, "f"), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		for i := range 20 {
			mark := []byte(fmt.Sprintf("<%02d>", i))
			if _, err := w.WriteAt(mark, 100); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, 4)
			if _, err := h.ReadAt(got, 100); err != nil || !bytes.Equal(got, mark) {
				t.Fatalf("write %d: the other mount reads %q, %v", i, got, err)
			}
		}
		// Handles are direct I/O; shared mappings still work (Linux 6.6+ allows them).
		m, err := syscall.Mmap(int(h.Fd()), 0, len(v2), syscall.PROT_READ, syscall.MAP_SHARED)
		if err != nil {
			t.Fatalf("mmap: %v", err)
		}
		// Fault the pages in inside a system call: this process serves the mount, and a page
		// fault taken in Go code cannot be preempted, so a garbage collection that stops the
		// world while the fault waits for this mount's server deadlocks the test (seen in CI).
		if err := unix.Mlock(m); err != nil {
			t.Fatalf("mlock of the mapping: %v", err)
		}
		if !bytes.Equal(m[:100], v2[:100]) || string(m[100:104]) != "<19>" {
			t.Errorf("mapped: %q", m[96:108])
		}
		syscall.Munmap(m) // unlocks it too
		if ents, err := os.ReadDir(b); err != nil || len(ents) != 1 || ents[0].Name() != "f" {
			t.Fatalf("listing through the other mount: %v %v", ents, err)
		}
	})
}

// TestSharedStorageBlockWriters: two mounts writing different bytes of one block, each a
// read-modify-write of the whole block, lose none of each other's writes, from the first
// ones, which race to write the empty file's header, on; the file holds both at the end and
// every block authenticates.
func TestSharedStorageBlockWriters(t *testing.T) {
	forBirthTimes(t, func(t *testing.T, a, b string) {
		if err := os.WriteFile(filepath.Join(a, "f"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		const rounds = 400
		var wg sync.WaitGroup
		errs := make(chan error, 2)
		writer := func(mp string, off int64, tag byte) {
			defer wg.Done()
			fh, err := os.OpenFile(filepath.Join(mp, "f"), os.O_RDWR, 0)
			if err != nil {
				errs <- err
				return
			}
			defer fh.Close()
			got := make([]byte, 8)
			for i := range rounds {
				mark := []byte(fmt.Sprintf("%c%07d", tag, i))
				if _, err := fh.WriteAt(mark, off); err != nil {
					errs <- fmt.Errorf("%c: write %d: %w", tag, i, err)
					return
				}
				if _, err := fh.ReadAt(got, off); err != nil || !bytes.Equal(got, mark) {
					errs <- fmt.Errorf("%c: write %d reads back as %q (%v): lost to the other mount's write", tag, i, got, err)
					return
				}
			}
		}
		wg.Add(2)
		go writer(a, 10, 'A')
		go writer(b, 2000, 'B')
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		for _, mp := range []string{a, b} {
			got, err := os.ReadFile(filepath.Join(mp, "f"))
			if err != nil {
				t.Fatalf("%s: %v", mp, err)
			}
			if len(got) != 2008 || string(got[10:18]) != fmt.Sprintf("A%07d", rounds-1) || string(got[2000:]) != fmt.Sprintf("B%07d", rounds-1) {
				t.Errorf("%s: final content %d bytes, %q at 10, %q at 2000", mp, len(got), got[10:min(len(got), 18)], got[min(len(got), 2000):])
			}
		}
	})
}

// TestSharedStorageRecreated: a file and a directory deleted and made again through one
// mount show as the new ones through the other, which had looked them up and listed them; a
// handle it held on the old file still reads the old file, as on a local file system.
func TestSharedStorageRecreated(t *testing.T) {
	forBirthTimes(t, func(t *testing.T, a, b string) {
		old := bytes.Repeat([]byte("old "), 1000)
		if err := os.WriteFile(filepath.Join(a, "f"), old, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(a, "d"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(a, "d", "x"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		h, err := os.Open(filepath.Join(b, "f"))
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		if got, err := os.ReadFile(filepath.Join(b, "f")); err != nil || !bytes.Equal(got, old) {
			t.Fatalf("f through the other mount: %v", err)
		}
		if ents, err := os.ReadDir(filepath.Join(b, "d")); err != nil || len(ents) != 1 || ents[0].Name() != "x" {
			t.Fatalf("d through the other mount: %v %v", ents, err)
		}

		// Same size and type: nothing but the content and the identity tells them apart.
		fresh := bytes.Repeat([]byte("new "), 1000)
		if err := os.Remove(filepath.Join(a, "f")); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(a, "f"), fresh, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(filepath.Join(a, "d")); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(a, "d"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(a, "d", "y"), []byte("y"), 0o644); err != nil {
			t.Fatal(err)
		}

		if got, err := os.ReadFile(filepath.Join(b, "f")); err != nil || !bytes.Equal(got, fresh) {
			t.Errorf("recreated f through the other mount: %v, new content %v", err, bytes.Equal(got, fresh))
		}
		var sa, sb syscall.Stat_t
		if err := syscall.Stat(filepath.Join(a, "f"), &sa); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Stat(filepath.Join(b, "f"), &sb); err != nil || sa.Ino != sb.Ino {
			t.Errorf("inode numbers %d and %d (%v)", sa.Ino, sb.Ino, err)
		}
		buf := make([]byte, len(old))
		if n, err := h.ReadAt(buf, 0); n != len(old) || !bytes.Equal(buf, old) {
			t.Errorf("handle on the deleted f: %d bytes, %v, old content %v", n, err, bytes.Equal(buf, old))
		}
		ents, err := os.ReadDir(filepath.Join(b, "d"))
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		if err != nil || !slices.Equal(names, []string{"y"}) {
			t.Errorf("recreated d through the other mount: %v %v", names, err)
		}
		if got, err := os.ReadFile(filepath.Join(b, "d", "y")); err != nil || string(got) != "y" {
			t.Errorf("d/y through the other mount: %q %v", got, err)
		}
	})
}

// TestSharedStorageCreateOverTheirs: a create that finds the name made by another machine
// since the kernel looked it up opens that file as open(2) would: its mode stays, its content
// stays unless O_TRUNC, which empties it. On each format, and for a Cryptomator name long
// enough to be stored in a .c9s folder (the file is its contents.c9r).
func TestSharedStorageCreateOverTheirs(t *testing.T) {
	for _, c := range []struct {
		name string
		v    func(t *testing.T) Volume
		file string
	}{
		{"gocryptfs", func(t *testing.T) Volume { return volumeOf(realVault(t, "", crypto.AESGCM)) }, "g"},
		{"cryptomator", func(t *testing.T) Volume { v, _ := cryptomatorVolume(t); return v }, "g"},
		{"cryptomator long name", func(t *testing.T) Volume { v, _ := cryptomatorVolume(t); return v }, strings.Repeat("g", 200)},
	} {
		t.Run(c.name, func(t *testing.T) { createOverTheirs(t, c.v(t), c.file) })
	}
}

func createOverTheirs(t *testing.T, v Volume, g string) {
	a, _ := mountTest(t, v, Options{SharedStorage: true})
	_, mb := mountTest(t, v, Options{SharedStorage: true})
	if err := os.WriteFile(filepath.Join(a, g), []byte("theirs"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(a, g), 0o640); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		flags uint32
		want  string
	}{{syscall.O_RDWR, "theirs"}, {syscall.O_RDWR | syscall.O_TRUNC, ""}} {
		var out fuse.EntryOut
		_, fh, _, errno := mb.root.Create(context.Background(), g, c.flags, 0o666, &out)
		if errno != 0 {
			t.Fatalf("create over an existing file (flags %#x): %v", c.flags, errno)
		}
		fh.(*file).close()
		got, err := os.ReadFile(filepath.Join(a, g))
		fi, _ := os.Stat(filepath.Join(a, g))
		if err != nil || string(got) != c.want || fi.Mode().Perm() != 0o640 {
			t.Errorf("flags %#x: content %q (%v), mode %v; want %q, 0640", c.flags, got, err, fi.Mode().Perm(), c.want)
		}
	}
	var out fuse.EntryOut
	if _, _, _, errno := mb.root.Create(context.Background(), g, syscall.O_RDWR|syscall.O_EXCL, 0o600, &out); errno != syscall.EEXIST {
		t.Errorf("O_EXCL create over an existing file: %v, want EEXIST", errno)
	}
}
