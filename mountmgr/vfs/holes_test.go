package vfs

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/vaultui/vaultui/crypto"
)

// allocated is what the cipher file p occupies on disk.
func allocated(t *testing.T, p string) int64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks * 512
}

// TestHolesStaySparse: in the gocryptfs format a write past the end of a file, or a
// truncate up, leaves the blocks in between a hole of the cipher file, as gocryptfs does
// (file_holes.go): the mount allocates the header, the partial old last block and the
// blocks written, not the gap. xfstests' generic/014, 129 and 130 need sparse files.
func TestHolesStaySparse(t *testing.T) {
	v := testVolume(t, crypto.AESGCM, false) // plaintext names: the cipher file has the name
	mp, _ := mountTest(t, v, Options{})
	const slack = 16 << 10 // the cipher file system's block rounding, with room to spare
	cases := []struct {
		name   string
		before int64 // the file's size first (written with data)
		off    int64 // then: a write of n bytes at off, or a truncate to off when n is 0
		n      int
	}{
		{"one byte at 100 MiB", 0, 100 << 20, 1},
		{"50 KiB at 1.6 MB", 0, 1600 << 10, 50 << 10},
		{"50 KiB at 1.6 MB after 10,000 bytes", 10000, 1600 << 10, 50 << 10},
		{"truncate to 100 MiB and 17", 0, 100<<20 + 17, 0},
		{"truncate to 100 MiB and 17 after 5,000 bytes", 5000, 100<<20 + 17, 0},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := string(rune('a' + i))
			p := filepath.Join(mp, name)
			model := bytes.Repeat([]byte{'x'}, int(c.before))
			if err := os.WriteFile(p, model, 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(p, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var data []byte
			if c.n > 0 {
				data = bytes.Repeat([]byte{'d'}, c.n)
				if _, err := f.WriteAt(data, c.off); err != nil {
					t.Fatal(err)
				}
			} else if err := f.Truncate(c.off); err != nil {
				t.Fatal(err)
			}
			// What gocryptfs allocates: the header and the blocks holding data (the old
			// ones, the new ones), each rounded up to the file system's 4 KiB blocks.
			dataBlocks := (c.before+crypto.BlockSize-1)/crypto.BlockSize + int64(c.n+2*crypto.BlockSize-1)/crypto.BlockSize + 1
			want := 4096 + dataBlocks*int64(crypto.BlockSize+v.Content.BlockOverhead())
			if got := allocated(t, filepath.Join(v.Dir, name)); got > want+slack {
				t.Errorf("the cipher file allocates %d KiB, want at most %d KiB (the gap is a hole)", got>>10, (want+slack)>>10)
			}
			// The hole reads as zeros and the data as written.
			fi, err := f.Stat()
			if size := c.off + int64(c.n); err != nil || fi.Size() != size {
				t.Fatalf("size %d, %v; want %d", fi.Size(), err, size)
			}
			check := func(at int64, want []byte) {
				t.Helper()
				got := make([]byte, len(want))
				if _, err := f.ReadAt(got, at); err != nil || !bytes.Equal(got, want) {
					t.Errorf("read of %d bytes at %d: %v, not as written", len(want), at, err)
				}
			}
			check(0, model)
			gap := min(c.off-c.before, 1<<20)
			check(c.before, make([]byte, gap))
			check(c.off-gap, make([]byte, gap))
			check(c.off, data)
		})
	}
}
