package vfs

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/layout"
)

// dirent is one entry getdents(2) returned: its name and the offset that continues after it.
type dirent struct {
	name string
	off  int64
}

// getdentsAll reads fd's entries from its current offset to the end, a few per call.
func getdentsAll(t *testing.T, fd int) []dirent {
	t.Helper()
	var out []dirent
	buf := make([]byte, 600) // a few entries per call: many READDIRs, resumed by offset
	for {
		n, err := unix.Getdents(fd, buf)
		if err != nil {
			t.Fatalf("getdents: %v", err)
		}
		if n == 0 {
			return out
		}
		for b := buf[:n]; len(b) > 0; {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
			off := int64(binary.NativeEndian.Uint64(b[8:]))
			reclen := int(binary.NativeEndian.Uint16(b[16:]))
			name := b[19:reclen]
			if i := slices.Index(name, 0); i >= 0 {
				name = name[:i]
			}
			out = append(out, dirent{string(name), off})
			b = b[reclen:]
		}
	}
}

func names(ents []dirent) []string {
	var s []string
	for _, e := range ents {
		s = append(s, e.name)
	}
	return s
}

// TestDirectoryOffsets: the listing is a stream that decrypts names as the kernel asks, with
// conflict copies after the cipher entries; an offset handed out (telldir) leads back to the
// entries after it (seekdir), forwards and backwards, and offset 0 starts over (rewinddir).
func TestDirectoryOffsets(t *testing.T) {
	v := realVault(t, "", crypto.AESGCM)
	mp, _ := mountTest(t, volumeOf(v), Options{})
	var want []string
	for i := range 150 {
		name := fmt.Sprintf("file with a longer name %03d", i)
		if err := os.WriteFile(filepath.Join(mp, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		want = append(want, name)
	}
	// A Syncthing conflict copy of one of them, made in the cipherdir while mounted.
	_, stored := cipherName(t, v, want[7])
	b, err := os.ReadFile(filepath.Join(v.Dir, stored))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(v.Dir, stored+".sync-conflict-20261130-101010-ABCDEF7"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	want = append(want, "file with a longer name 007 (conflict 2026-11-30 Syncthing)", ".", "..")

	fd, err := unix.Open(mp, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	all := getdentsAll(t, fd)
	if got := names(all); !sameSet(joinNUL(got), joinNUL(want)) || len(got) != len(want) {
		t.Fatalf("listing: %d entries %q\nwant %d: %q", len(got), got, len(want), want)
	}
	if last := all[len(all)-1].name; last != want[150] {
		t.Errorf("last entry %q, want the conflict copy after the cipher entries", last)
	}
	for _, k := range []int{len(all) - 2, 3, 100, 0, len(all) - 1} {
		if _, err := unix.Seek(fd, all[k].off, 0); err != nil {
			t.Fatalf("seekdir to entry %d: %v", k, err)
		}
		if got := names(getdentsAll(t, fd)); !slices.Equal(got, names(all[k+1:])) {
			t.Errorf("after seekdir to entry %d (%q): %q, want %q", k, all[k].name, got, names(all[k+1:]))
		}
	}
	if _, err := unix.Seek(fd, 0, 0); err != nil {
		t.Fatal(err)
	}
	if got := names(getdentsAll(t, fd)); !slices.Equal(got, names(all)) {
		t.Errorf("after rewinddir: %q, want %q", got, names(all))
	}
}

func joinNUL(s []string) string {
	var b []byte
	for _, x := range s {
		b = append(b, x...)
		b = append(b, 0)
	}
	return string(b)
}

// TestListingWhileChanging: listings that run while other entries come and go still show
// every entry that stays, exactly once. (An entry removed and made again during a listing
// may show twice, as on any file system: it is a new entry.)
func TestListingWhileChanging(t *testing.T) {
	v := realVault(t, "", crypto.AEGIS)
	mp, _ := mountTest(t, volumeOf(v), Options{})
	stable := map[string]bool{}
	for i := range 60 {
		name := fmt.Sprintf("stays-%02d", i)
		if err := os.WriteFile(filepath.Join(mp, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
		stable[name] = true
	}
	done := make(chan struct{})
	churned := make(chan error, 1)
	go func() {
		defer close(churned)
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			p := filepath.Join(mp, fmt.Sprintf("comes-and-goes-%d", i%40))
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				churned <- err
				return
			}
			if i%3 == 0 {
				if err := os.Remove(p); err != nil {
					churned <- err
					return
				}
			}
		}
	}()
	for round := range 30 {
		ents, err := os.ReadDir(mp)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for _, e := range ents {
			seen[e.Name()]++
		}
		for name := range stable {
			if seen[name] != 1 {
				t.Errorf("round %d: %q listed %d times, want once", round, name, seen[name])
			}
		}
	}
	close(done)
	if err := <-churned; err != nil {
		t.Fatal(err)
	}
}

// TestFsyncDir: fsync of a directory (coreutils "sync DIR", databases after a create or
// rename) succeeds, for the root and a subdirectory, listed or not, and the handle still
// lists. It failed with EOPNOTSUPP: go-fuse's handle for a Readdir-only node has no FSYNCDIR.
func TestFsyncDir(t *testing.T) {
	for _, names := range []bool{true, false} {
		t.Run(fmt.Sprintf("names=%v", names), func(t *testing.T) {
			v := testVolume(t, crypto.AESGCM, names)
			mp, _ := mountTest(t, v, Options{})
			sub := filepath.Join(mp, "sub")
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(sub, "f"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, dir := range []string{mp, sub} {
				d, err := os.Open(dir)
				if err != nil {
					t.Fatal(err)
				}
				if err := d.Sync(); err != nil {
					t.Errorf("fsync %s before listing: %v", dir, err)
				}
				if ents, err := d.ReadDir(-1); err != nil || len(ents) != 1 {
					t.Errorf("listing %s: %v %v", dir, ents, err)
				}
				if err := unix.Fdatasync(int(d.Fd())); err != nil {
					t.Errorf("fdatasync %s after listing: %v", dir, err)
				}
				d.Close()
			}
		})
	}
}

// mayBeCopyOf only spares ParseConflict names it would refuse: every tool's copy of
// gocryptfs.diriv passes it.
func TestMayBeCopyOf(t *testing.T) {
	copies := []string{
		"gocryptfs.sync-conflict-20261130-101010-ABCDEF7.diriv",
		"gocryptfs.diriv.sync-conflict-20261130-101010-ABCDEF7",
		"gocryptfs (conflicted copy 2026-11-30 101010).diriv",
		"gocryptfs (Ann's conflicted copy 2026-11-30).diriv",
		"gocryptfs_conflict-20261130-101010.diriv",
		"gocryptfs (1).diriv",
		"gocryptfs-LAPTOP.diriv",
		"gocryptfs.diriv-LAPTOP",
	}
	for _, name := range copies {
		if _, ok := layout.ParseConflict(name, func(base string) bool { return base == crypto.DirIVName }); !ok {
			t.Errorf("ParseConflict(%q): not a copy of %s", name, crypto.DirIVName)
		}
		if !mayBeCopyOf(name, crypto.DirIVName) {
			t.Errorf("mayBeCopyOf(%q) = false", name)
		}
	}
	for _, name := range []string{crypto.DirIVName, "gocryptfs.conf", "gocryptfs.longname.abc", "Zm9vYmFyYmF6cXV4cXV1eA-LAPTOP", "gocryptfs.longname.abc-LAPTOP.name"} {
		if mayBeCopyOf(name, crypto.DirIVName) {
			t.Errorf("mayBeCopyOf(%q) = true", name)
		}
	}
}
