package vfs

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/vaultui/vaultui/crypto"
)

// TestLargeReads: full-size read requests (ReadMax, several per 1 MiB read) return the file
// as written, across a hole and up to an end in the middle of a request; and a corrupt block
// in the middle of a request fails the whole request with EIO (no plaintext of it is
// released), is reported, and leaves the blocks around it readable one by one.
func TestLargeReads(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("reads reach the file system in full-size requests only with the readahead raised, which needs root")
	}
	for _, c := range []crypto.CipherID{crypto.AEGIS, crypto.AESGCM} {
		t.Run(c.String(), func(t *testing.T) {
			vlt := realVault(t, "", c)
			v := volumeOf(vlt)
			mp, m := mountTest(t, v, Options{})
			p := filepath.Join(mp, "f")
			rng := rand.New(rand.NewPCG(5, 6))
			want := make([]byte, 3<<20+1234)
			for i := range want {
				want[i] = byte(rng.Uint32())
			}
			clear(want[1<<20 : 1<<20+300<<10]) // a hole of 300 KiB, never written
			f, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt(want[:1<<20], 0); err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt(want[1<<20+300<<10:], 1<<20+300<<10); err != nil {
				t.Fatal(err)
			}
			f.Close()
			got, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("read back %d bytes differing from the %d written", len(got), len(want))
			}
			if err := unmount(m); err != nil {
				t.Fatal(err)
			}

			// Block 100 lies in the middle of a request (ReadMax is 64 blocks: 64-127).
			const bad = 100
			dir, stored := cipherName(t, vlt, "f")
			cipherFile := filepath.Join(dir, stored)
			raw, err := os.ReadFile(cipherFile)
			if err != nil {
				t.Fatal(err)
			}
			raw[crypto.HeaderLen+bad*v.Content.CipherBlockSize()+50] ^= 0x80
			if err := os.WriteFile(cipherFile, raw, 0o644); err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var reported []uint64
			m2, err := Mount(mp, v, Options{Logger: testLogger(t), AuthFailed: func(_ string, block uint64) {
				mu.Lock()
				reported = append(reported, block)
				mu.Unlock()
			}})
			if err != nil {
				t.Fatal(err)
			}
			*m = *m2
			if got, err := os.ReadFile(p); !errors.Is(err, syscall.EIO) {
				t.Fatalf("whole file: %d bytes, %v; want EIO", len(got), err)
			}
			f, err = os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			for _, b := range []int{bad + 1, bad, bad - 1} { // backwards: readahead must not hide the answer
				buf := make([]byte, crypto.BlockSize)
				_, err := f.ReadAt(buf, int64(b)*crypto.BlockSize)
				if b == bad {
					if !errors.Is(err, syscall.EIO) {
						t.Errorf("block %d: %v, want EIO", b, err)
					}
					continue
				}
				if err != nil || !bytes.Equal(buf, want[b*crypto.BlockSize:(b+1)*crypto.BlockSize]) {
					t.Errorf("block %d: %v, or not as written", b, err)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			for _, b := range reported {
				if b != bad {
					t.Errorf("AuthFailed reported block %d, only %d is corrupt", b, bad)
				}
			}
			if len(reported) == 0 {
				t.Errorf("AuthFailed never heard of block %d", bad)
			}
		})
	}
}
