package vfs

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
)

// TestStatDuringWrites: a stat while a write extends the file sees the size before the write
// or after it, never 0. The cipher file grows a page at a time while a write is copied in, and
// a size between two blocks that no file of whole blocks has used to be reported as 0
// (xfstests generic/207: after an extending direct write completed, fstat gave 0).
func TestStatDuringWrites(t *testing.T) {
	v := testVolume(t, crypto.AESGCM, false)
	mp, _ := mountTest(t, v, Options{})
	p := filepath.Join(mp, "f")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var done atomic.Bool
	errc := make(chan error, 1)
	go func() {
		defer done.Store(true)
		buf := make([]byte, 256<<10)
		for i := range 300 {
			if _, err := f.WriteAt(buf, int64(i*len(buf))); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	var last int64
	stats := 0
	for !done.Load() {
		var st unix.Stat_t
		if err := unix.Fstat(int(f.Fd()), &st); err != nil {
			t.Fatal(err)
		}
		stats++
		if st.Size < last {
			t.Fatalf("stat %d gave size %d after %d: a write extending the file is seen torn", stats, st.Size, last)
		}
		last = st.Size
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}
