package crypto

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

func TestBlockIVAddsToTheLow64Bits(t *testing.T) {
	for _, tc := range []struct {
		block0 string
		n      uint64
		want   string
	}{
		{"00000000000000000000000000000000", 0, "00000000000000000000000000000000"},
		{"00000000000000000000000000000000", 0x27, "00000000000000000000000000000027"},
		// The carry does not reach the high half: it wraps.
		{"ffffffffffffffffffffffffffffffff", 0x28, "ffffffffffffffff0000000000000027"},
		{"0102030405060708090a0b0c0d0e0f10", 1, "0102030405060708090a0b0c0d0e0f11"},
	} {
		b0, _ := hex.DecodeString(tc.block0)
		got := hex.EncodeToString(BlockIV(b0, tc.n))
		if got != tc.want {
			t.Errorf("BlockIV(%s, %#x) = %s, want %s", tc.block0, tc.n, got, tc.want)
		}
		if hex.EncodeToString(b0) != tc.block0 {
			t.Errorf("BlockIV changed its input")
		}
	}
}

func TestPathIVSeparatesPathsAndPurposes(t *testing.T) {
	// The definition, spelled out once: SHA-256 of path, a zero byte, the purpose.
	h := sha256.Sum256([]byte("a/b\x00FILEID"))
	if got := PathIV("a/b", PurposeFileID); !bytes.Equal(got, h[:16]) {
		t.Fatalf("PathIV = %x, want %x", got, h[:16])
	}
	seen := map[string]string{}
	for _, p := range []string{"", "a", "a/b", "ab"} {
		for _, pur := range []IVPurpose{PurposeDirIV, PurposeFileID, PurposeSymlinkIV, PurposeBlock0IV} {
			k := string(PathIV(p, pur))
			if prev, dup := seen[k]; dup {
				t.Errorf("%q %s and %s share an IV", p, pur, prev)
			}
			seen[k] = p + " " + string(pur)
		}
	}
}

func TestEncryptBlocksIVIsDeterministicAndDecrypts(t *testing.T) {
	e, err := NewContentEnc(AESSIV, testKey(), true)
	if err != nil {
		t.Fatal(err)
	}
	pt := randBytes(3*BlockSize + 100)
	id := PathIV("dir/file", PurposeFileID)
	b0 := PathIV("dir/file", PurposeBlock0IV)
	c1 := e.EncryptBlocksIV(nil, pt, 0, id, b0)
	c2 := e.EncryptBlocksIV([]byte("prefix"), pt, 0, id, b0)
	if !bytes.Equal(c1, c2[len("prefix"):]) || string(c2[:6]) != "prefix" {
		t.Fatal("same input, different ciphertext (or dst not appended to)")
	}
	if len(c1) != len(pt)+4*e.BlockOverhead() {
		t.Fatalf("ciphertext is %d bytes, want %d", len(c1), len(pt)+4*e.BlockOverhead())
	}
	for n := 0; n < 4; n++ {
		off := n * e.CipherBlockSize()
		if got, want := c1[off:off+16], BlockIV(b0, uint64(n)); !bytes.Equal(got, want) {
			t.Errorf("block %d nonce %x, want %x", n, got, want)
		}
	}
	back, err := e.DecryptBlocks(nil, c1, 0, id)
	if err != nil || !bytes.Equal(back, pt) {
		t.Fatalf("does not decrypt: %v", err)
	}
	// A run starting at block 2 is the same bytes as blocks 2.. of the whole file.
	tail := e.EncryptBlocksIV(nil, pt[2*BlockSize:], 2, id, b0)
	if !bytes.Equal(tail, c1[2*e.CipherBlockSize():]) {
		t.Error("blocks 2.. differ when encrypted on their own")
	}
	if bytes.Equal(e.EncryptBlocksIV(nil, pt, 0, id, PathIV("dir/other", PurposeBlock0IV)), c1) {
		t.Error("another path gives the same ciphertext")
	}

	link := e.EncryptSymlinkIV("../target", PathIV("dir/link", PurposeSymlinkIV))
	if link != e.EncryptSymlinkIV("../target", PathIV("dir/link", PurposeSymlinkIV)) {
		t.Error("symlink target not deterministic")
	}
	if got, err := e.DecryptSymlink(link); err != nil || got != "../target" {
		t.Errorf("symlink target decrypts to %q, %v", got, err)
	}
}

func TestEncryptBlocksIVRefusesNonceMisuseCiphers(t *testing.T) {
	for _, c := range Ciphers {
		if c == AESSIV {
			continue
		}
		e, err := NewContentEnc(c, testKey(), true)
		if err != nil {
			t.Fatal(err)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: derived nonces accepted", c)
				}
			}()
			e.EncryptBlocksIV(nil, []byte("x"), 0, nil, make([]byte, e.NonceSize()))
		}()
	}
}
