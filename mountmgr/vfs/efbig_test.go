package vfs

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/vaultui/vaultui/crypto"
)

// TestTooBigIsEFBIG: a size the cipher file cannot have (its cipher size past what the
// cipherdir's file system holds, or past what any file holds) fails with EFBIG, as POSIX and
// pjdfstest's truncate/12 want, not ENOSPC, for a truncation and for a write, on each format;
// the file is left as it was.
func TestTooBigIsEFBIG(t *testing.T) {
	for _, c := range []struct {
		name string
		v    func(t *testing.T) Volume
	}{
		{"gocryptfs", func(t *testing.T) Volume { return volumeOf(realVault(t, "", crypto.AESGCM)) }},
		{"cryptomator", func(t *testing.T) Volume { v, _ := cryptomatorVolume(t); return v }},
	} {
		t.Run(c.name, func(t *testing.T) {
			mp, _ := mountTest(t, c.v(t), Options{})
			p := filepath.Join(mp, "f")
			if err := os.WriteFile(p, []byte("contents"), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, size := range []int64{999999999999999999, 1<<63 - 1<<20} {
				if err := os.Truncate(p, size); !errors.Is(err, syscall.EFBIG) {
					t.Errorf("truncate to %d: %v, want EFBIG", size, err)
				}
			}
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			for _, off := range []int64{999999999999999999, 1<<63 - 1<<20} {
				if _, err := f.WriteAt([]byte("x"), off); !errors.Is(err, syscall.EFBIG) {
					t.Errorf("write at %d: %v, want EFBIG", off, err)
				}
			}
			if b, err := os.ReadFile(p); err != nil || string(b) != "contents" {
				t.Errorf("after: %q, %v", b, err)
			}
		})
	}
}
