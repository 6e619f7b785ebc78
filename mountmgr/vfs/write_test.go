package vfs

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/vaultui/vaultui/crypto"
)

// TestLargeWrites: writes large enough to be encrypted on another goroutine while the write
// reserves space (sealAhead), in every shape that qualifies and some that do not, read back
// as a model of the file says, and leave a file the offline fsck finds clean.
func TestLargeWrites(t *testing.T) {
	for _, c := range []crypto.CipherID{crypto.AEGIS, crypto.AESGCM} {
		t.Run(c.String(), func(t *testing.T) {
			v := realVault(t, "", c)
			mp, m := mountTest(t, volumeOf(v), Options{})
			p := filepath.Join(mp, "f")
			f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(3, 4))
			var model []byte
			write := func(off int, n int) {
				t.Helper()
				data := make([]byte, n)
				for i := range data {
					data[i] = byte(rng.Uint32())
				}
				if _, err := f.WriteAt(data, int64(off)); err != nil {
					t.Fatalf("write of %d at %d: %v", n, off, err)
				}
				if len(model) < off+n {
					model = append(model, make([]byte, off+n-len(model))...)
				}
				copy(model[off:], data)
			}
			const k = 1024
			write(0, 100)             // small: makes the header, not sealed ahead
			write(0, 1024*k)          // aligned, ends on a block
			write(4096, 512*k)        // aligned overwrite in the middle
			write(1024*k, 300*k+123)  // aligned, ends unaligned at the end of the file
			write(2048*k, 256*k)      // past the end with a hole before it
			write(3000, 400*k)        // unaligned start: merges, not sealed ahead
			write(2048*k+4096, 260*k) // aligned, ends unaligned past the old end
			got, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, model) {
				t.Fatalf("read back %d bytes differing from the %d written", len(got), len(model))
			}
			f.Close()
			if err := unmount(m); err != nil {
				t.Fatal(err)
			}
			fsckClean(t, v)
		})
	}
}

// TestPageAlignedWith: ciphertext for file offset off starts at off's offset within a page,
// with a request's worth of room left, in the buffers the write path uses.
func TestPageAlignedWith(t *testing.T) {
	v := testVolume(t, crypto.AEGIS, true)
	f, err := newRoot(v, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.fsys.close()
	cbs := f.fsys.cbs
	for _, b := range []int64{0, 1, 255, 256, 257, 1000} {
		off := int64(crypto.HeaderLen) + b*int64(cbs)
		cb := f.fsys.getCipherBuf()
		got := pageAlignedWith(*cb, off)
		addr := int64(uintptr(unsafe.Pointer(unsafe.SliceData(got[:1]))))
		if addr%4096 != off%4096 {
			t.Errorf("block %d: slice at page offset %d, file offset at %d", b, addr%4096, off%4096)
		}
		if need := (RequestMax/crypto.BlockSize + 2) * cbs; cap(got) < need {
			t.Errorf("block %d: room for %d bytes, a request needs %d", b, cap(got), need)
		}
		f.fsys.putCipherBuf(cb)
	}
	if got := pageAlignedWith(make([]byte, 0, 10), 18); cap(got) != 10 {
		t.Errorf("a small buffer was shifted: cap %d", cap(got))
	}
}
