package format_test

import (
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
