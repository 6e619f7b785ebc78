package format_test

import (
	"math"
	"testing"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/format"
)

// A gocryptfs geometry sizes files exactly as crypto's content encryption does, for every
// cipher: the walker takes sizes from the geometry, the mount still from crypto.
func TestGeometryMatchesGocryptfs(t *testing.T) {
	key := make([]byte, crypto.MasterKeyLen)
	for _, id := range []crypto.CipherID{crypto.AESGCM, crypto.AESSIV, crypto.XChaCha, crypto.AEGIS} {
		ce, err := crypto.NewContentEnc(id, key, true)
		if err != nil {
			t.Fatal(err)
		}
		g := format.Geometry{HeaderLen: crypto.HeaderLen, BlockSize: crypto.BlockSize, BlockOverhead: ce.BlockOverhead()}
		for plain := int64(0); plain < 3*crypto.BlockSize+2; plain++ {
			if got, want := g.CipherSize(plain), int64(ce.CipherSize(uint64(plain))); got != want {
				t.Fatalf("%s: CipherSize(%d) = %d, crypto says %d", id, plain, got, want)
			}
		}
		for c := int64(0); c < 3*int64(ce.CipherBlockSize())+40; c++ {
			p, ok := g.PlainSize(c)
			want, err := ce.PlainSize(uint64(c))
			if ok != (err == nil) || ok && p != int64(want) {
				t.Fatalf("%s: PlainSize(%d) = %d, %v; crypto says %d, %v", id, c, p, ok, want, err)
			}
		}
	}
}

// A Cryptomator file of no content is its header alone.
func TestEmptyFileHeader(t *testing.T) {
	g := format.Geometry{HeaderLen: 68, BlockSize: 32 << 10, BlockOverhead: 28, EmptyHasHeader: true}
	if g.CipherSize(0) != 68 {
		t.Fatalf("CipherSize(0) = %d, want the header's 68", g.CipherSize(0))
	}
	if p, ok := g.PlainSize(68); !ok || p != 0 {
		t.Fatalf("PlainSize(68) = %d, %v", p, ok)
	}
	if _, ok := g.PlainSize(68 + 28); ok {
		t.Fatal("a last chunk of only its overhead has a size")
	}
}

// TestMaxPlainSize: the largest cleartext size is the largest whose cipher file a file
// system can have at all (an int64 size), for each geometry: its cipher size fits and maps
// back, and one byte more would need more cipher bytes than an int64 counts.
func TestMaxPlainSize(t *testing.T) {
	cipherSize := func(g format.Geometry, plain uint64) uint64 { // CipherSize without overflow
		bs, oh := uint64(g.BlockSize), uint64(g.BlockOverhead)
		n := uint64(g.HeaderLen) + plain/bs*(bs+oh)
		if rest := plain % bs; rest > 0 {
			n += rest + oh
		}
		return n
	}
	for _, g := range []format.Geometry{
		{HeaderLen: 18, BlockSize: 4096, BlockOverhead: 32},
		{HeaderLen: 18, BlockSize: 4096, BlockOverhead: 48},
		{HeaderLen: 68, BlockSize: 32768, BlockOverhead: 28, EmptyHasHeader: true},
		{HeaderLen: 88, BlockSize: 32768, BlockOverhead: 48, EmptyHasHeader: true},
	} {
		m := g.MaxPlainSize()
		if c := cipherSize(g, uint64(m)); c > math.MaxInt64 || g.CipherSize(m) != int64(c) {
			t.Errorf("%+v: MaxPlainSize %d takes %d cipher bytes", g, m, c)
		}
		if p, ok := g.PlainSize(g.CipherSize(m)); !ok || p != m {
			t.Errorf("%+v: round trip of %d: %d, %v", g, m, p, ok)
		}
		if c := cipherSize(g, uint64(m)+1); c <= math.MaxInt64 {
			t.Errorf("%+v: %d bytes, one more than MaxPlainSize, fit in %d cipher bytes", g, m+1, c)
		}
	}
}
