package crypto

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"testing"
)

func testKey() []byte {
	k := make([]byte, MasterKeyLen)
	for i := range k {
		k[i] = byte(0xa0 + i)
	}
	return k
}

// eachCipher runs f for every cipher.
func eachCipher(t *testing.T, f func(t *testing.T, e *ContentEnc)) {
	for _, c := range Ciphers {
		t.Run(c.String(), func(t *testing.T) {
			e, err := NewContentEnc(c, testKey(), true)
			if err != nil {
				t.Fatal(err)
			}
			f(t, e)
		})
	}
}

func randBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func TestContentRoundTrip(t *testing.T) {
	eachCipher(t, func(t *testing.T, e *ContentEnc) {
		wantNonce := map[CipherID]int{AESGCM: 16, XChaCha: 24, AESSIV: 16, AEGIS: 32}[e.Cipher()]
		if e.NonceSize() != wantNonce || e.BlockOverhead() != wantNonce+16 || e.CipherBlockSize() != BlockSize+wantNonce+16 {
			t.Fatalf("nonce %d overhead %d block %d", e.NonceSize(), e.BlockOverhead(), e.CipherBlockSize())
		}
		id := randBytes(FileIDLen)
		for _, n := range []int{1, 15, 16, 17, 4095, 4096, 4097, 8192, 32*BlockSize + 5, 70 * BlockSize} {
			pt := randBytes(n)
			for _, first := range []uint64{0, 7, 1 << 40} {
				prefix := []byte("prefix")
				ct := e.EncryptBlocks(append([]byte(nil), prefix...), pt, first, id)
				if !bytes.Equal(ct[:len(prefix)], prefix) {
					t.Fatal("EncryptBlocks clobbered dst")
				}
				ct = ct[len(prefix):]
				if got := uint64(len(ct) + HeaderLen); got != e.CipherSize(uint64(n)) {
					t.Fatalf("n=%d: ciphertext %d bytes + header, CipherSize says %d", n, len(ct), e.CipherSize(uint64(n)))
				}
				got, err := e.DecryptBlocks([]byte("x"), ct, first, id)
				if err != nil {
					t.Fatalf("n=%d first=%d: %v", n, first, err)
				}
				if got[0] != 'x' || !bytes.Equal(got[1:], pt) {
					t.Fatalf("n=%d first=%d: round trip mismatch", n, first)
				}
				// A different block number or file ID must fail on block 0.
				if _, err := e.DecryptBlocks(nil, ct, first+1, id); !isBlockErr(err, first+1) {
					t.Fatalf("wrong block number: %v", err)
				}
				if _, err := e.DecryptBlocks(nil, ct, first, randBytes(FileIDLen)); !isBlockErr(err, first) {
					t.Fatalf("wrong file ID: %v", err)
				}
			}
		}
		// Two encryptions of the same block differ (random nonces).
		a := e.EncryptBlocks(nil, make([]byte, 100), 0, id)
		b := e.EncryptBlocks(nil, make([]byte, 100), 0, id)
		if bytes.Equal(a, b) {
			t.Fatal("nonces repeat")
		}
	})
}

func isBlockErr(err error, block uint64) bool {
	var be *BlockError
	return errors.As(err, &be) && be.Block == block && errors.Is(err, ErrAuth)
}

func TestContentTamper(t *testing.T) {
	eachCipher(t, func(t *testing.T, e *ContentEnc) {
		id := randBytes(FileIDLen)
		pt := randBytes(5*BlockSize + 100)
		ct := e.EncryptBlocks(nil, pt, 3, id)
		cbs := e.CipherBlockSize()
		// Flip a byte in the nonce, body and tag of each block: exactly that
		// block fails, and the blocks before it are returned.
		for blk := 0; blk < 6; blk++ {
			end := min((blk+1)*cbs, len(ct))
			for _, off := range []int{blk * cbs, blk*cbs + e.NonceSize() + 3, end - 1} {
				bad := bytes.Clone(ct)
				bad[off] ^= 0x40
				got, err := e.DecryptBlocks(nil, bad, 3, id)
				if !isBlockErr(err, uint64(3+blk)) {
					t.Fatalf("flip at %d (block %d): err %v", off, blk, err)
				}
				if !bytes.Equal(got, pt[:blk*BlockSize]) {
					t.Fatalf("flip in block %d: returned %d bytes, want the %d before it", blk, len(got), blk*BlockSize)
				}
			}
		}
		// Truncating the last block to the overhead or less is an error.
		for cut, wantBad := range map[int]uint64{1: 8, 100: 7} {
			short := ct[:5*cbs+e.BlockOverhead()+1-cut]
			got, err := e.DecryptBlocks(nil, short, 3, id)
			if !isBlockErr(err, wantBad) || len(got) != int(wantBad-3)*BlockSize {
				t.Fatalf("cut %d: %v after %d bytes, want block %d", cut, err, len(got), wantBad)
			}
		}
	})
}

// DecryptBlocksZeroing gives zeros for each bad block, reports each one, and decrypts the
// good blocks after it; nothing of a bad block's unauthenticated decryption gets through, even
// into a destination whose spare capacity holds old data.
func TestContentZeroing(t *testing.T) {
	eachCipher(t, func(t *testing.T, e *ContentEnc) {
		id := randBytes(FileIDLen)
		pt := randBytes(5*BlockSize + 100)
		ct := e.EncryptBlocks(nil, pt, 7, id)
		cbs := e.CipherBlockSize()
		for _, badBlocks := range [][]int{{}, {0}, {1, 2}, {1, 3}, {5}, {0, 1, 2, 3, 4, 5}} {
			bad := bytes.Clone(ct)
			want := bytes.Clone(pt)
			for _, b := range badBlocks {
				bad[b*cbs+e.NonceSize()+1] ^= 0x01
				clear(want[b*BlockSize : min((b+1)*BlockSize, len(want))])
			}
			dst := bytes.Repeat([]byte{0xAA}, 3+len(pt)+BlockSize)[:3] // old data in the capacity
			var seen []int
			got := e.DecryptBlocksZeroing(dst, bad, 7, id, func(be *BlockError) {
				if !errors.Is(be, ErrAuth) {
					t.Errorf("block %d: %v does not wrap ErrAuth", be.Block, be.Err)
				}
				seen = append(seen, int(be.Block)-7)
			})
			if !bytes.Equal(got[:3], []byte{0xAA, 0xAA, 0xAA}) || !bytes.Equal(got[3:], want) {
				t.Fatalf("bad blocks %v: wrong plaintext (%d bytes, want %d)", badBlocks, len(got)-3, len(want))
			}
			if fmt.Sprint(seen) != fmt.Sprint(badBlocks) {
				t.Fatalf("bad blocks %v: reported %v", badBlocks, seen)
			}
		}
		// A last block cut to the overhead or less yields nothing, and is reported.
		short := ct[:5*cbs+e.BlockOverhead()]
		n := 0
		got := e.DecryptBlocksZeroing(nil, short, 7, id, func(*BlockError) { n++ })
		if n != 1 || !bytes.Equal(got, pt[:5*BlockSize]) {
			t.Fatalf("cut last block: %d reports, %d bytes", n, len(got))
		}
	})
}

func TestContentHolesAndZeroNonce(t *testing.T) {
	eachCipher(t, func(t *testing.T, e *ContentEnc) {
		id := randBytes(FileIDLen)
		pt := randBytes(3 * BlockSize)
		ct := e.EncryptBlocks(nil, pt, 0, id)
		cbs := e.CipherBlockSize()
		clear(ct[cbs : 2*cbs]) // block 1 becomes a hole
		got, err := e.DecryptBlocks(nil, ct, 0, id)
		if err != nil {
			t.Fatal(err)
		}
		want := bytes.Clone(pt)
		clear(want[BlockSize : 2*BlockSize])
		if !bytes.Equal(got, want) {
			t.Fatal("hole did not read as zeros")
		}
		// An all-zero nonce in a block that is not entirely zero is an error.
		bad := bytes.Clone(ct)
		clear(bad[2*cbs : 2*cbs+e.NonceSize()])
		if _, err := e.DecryptBlocks(nil, bad, 0, id); !isBlockErr(err, 2) {
			t.Fatalf("all-zero nonce: %v", err)
		}
		// A short all-zero block is not a hole.
		if _, err := e.DecryptBlocks(nil, make([]byte, cbs-1), 9, id); !isBlockErr(err, 9) {
			t.Fatalf("short zero block: %v", err)
		}
	})
}

func TestContentBadInput(t *testing.T) {
	e, err := NewContentEnc(AESGCM, testKey(), true)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := e.DecryptBlocks(nil, nil, 0, nil); err != nil || len(out) != 0 {
		t.Fatal("empty input")
	}
	if _, err := NewContentEnc(AESGCM, make([]byte, 31), true); err == nil {
		t.Fatal("31-byte master key accepted")
	}
	if _, err := NewContentEnc("rot13", testKey(), true); !errors.Is(err, ErrUnknownCipher) {
		t.Fatal(err)
	}
	for _, c := range []CipherID{XChaCha, AEGIS} {
		if _, err := NewContentEnc(c, testKey(), false); err == nil {
			t.Errorf("%s without HKDF accepted", c)
		}
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a 5-byte file ID did not panic")
			}
		}()
		e.EncryptBlocks(nil, []byte("x"), 0, make([]byte, 5))
	}()
}

// TestContentLegacyKeys covers vaults without HKDF (gocryptfs <= 1.2): the
// GCM key is the master key and the SIV key its SHA-512.
func TestContentLegacyKeys(t *testing.T) {
	for _, c := range []CipherID{AESGCM, AESSIV} {
		a, err := NewContentEnc(c, testKey(), false)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := NewContentEnc(c, testKey(), true)
		ct := a.EncryptBlocks(nil, []byte("legacy"), 0, nil)
		if _, err := b.DecryptBlocks(nil, ct, 0, nil); err == nil {
			t.Errorf("%s: legacy and HKDF keys are the same", c)
		}
		if pt, err := a.DecryptBlocks(nil, ct, 0, nil); err != nil || string(pt) != "legacy" {
			t.Errorf("%s legacy round trip: %q %v", c, pt, err)
		}
	}
}

func TestContentNoAllocs(t *testing.T) {
	for _, c := range []CipherID{AESGCM, XChaCha, AEGIS} {
		t.Run(c.String(), func(t *testing.T) {
			if c == XChaCha && puregoBuild {
				t.Skip("x/crypto's portable XChaCha20-Poly1305 allocates per call under the purego tag")
			}
			e, _ := NewContentEnc(c, testKey(), true)
			id := randBytes(FileIDLen)
			pt := randBytes(32 * BlockSize)
			ct := make([]byte, 0, e.CipherSize(uint64(len(pt))))
			out := make([]byte, 0, len(pt))
			ct = e.EncryptBlocks(ct, pt, 0, id)
			if n := testing.AllocsPerRun(20, func() { e.EncryptBlocks(ct[:0], pt, 0, id) }); n != 0 {
				t.Errorf("EncryptBlocks: %v allocations", n)
			}
			if n := testing.AllocsPerRun(20, func() {
				if _, err := e.DecryptBlocks(out[:0], ct, 0, id); err != nil {
					panic(err)
				}
			}); n != 0 {
				t.Errorf("DecryptBlocks: %v allocations", n)
			}
		})
	}
}

func TestContentConcurrent(t *testing.T) {
	eachCipher(t, func(t *testing.T, e *ContentEnc) {
		errs := make(chan error, 8)
		for g := range 8 {
			go func() {
				id := randBytes(FileIDLen)
				for i := range 20 {
					pt := randBytes(1 + (g*4096+i*977)%(40*BlockSize))
					got, err := e.DecryptBlocks(nil, e.EncryptBlocks(nil, pt, uint64(i), id), uint64(i), id)
					if err == nil && !bytes.Equal(got, pt) {
						err = fmt.Errorf("mismatch")
					}
					if err != nil {
						errs <- err
						return
					}
				}
				errs <- nil
			}()
		}
		for range 8 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
	})
}

func TestSymlinkEncoding(t *testing.T) {
	e, _ := NewContentEnc(AESGCM, testKey(), true)
	c := e.EncryptSymlink("target/with spaces")
	if bytes.ContainsAny([]byte(c), "=+/") {
		t.Fatalf("raw base64url expected, got %q", c)
	}
	e.SetPaddedBase64(true)
	p := e.EncryptSymlink("x") // 1+32 = 33 bytes: 44 chars with padding
	if len(p)%4 != 0 {
		t.Fatalf("padded base64 expected, got %q", p)
	}
	for _, s := range []string{c, p} {
		if _, err := e.DecryptSymlink(s); err != nil {
			t.Fatal(err)
		}
	}
	// A target has one spelling, as names do: no line breaks, no stray trailing bits.
	c2 := c[:5] + "\n" + c[5:]
	for _, bad := range append([]string{"!!!", "AAAA", string(bytes.Repeat([]byte("A"), 6000)), c2}, nameSpellings(c)...) {
		if bad == c {
			continue
		}
		if _, err := e.DecryptSymlink(bad); err == nil {
			t.Errorf("DecryptSymlink(%.10q) succeeded", bad)
		}
	}
}

// The target length of an encrypted symlink follows from its stored length alone (so a stat
// need not read it), for every cipher; padded base64 says it cannot tell.
func TestSymlinkTargetLen(t *testing.T) {
	eachCipher(t, func(t *testing.T, e *ContentEnc) {
		for n := 1; n <= 4095; n += 1 + n/7 {
			c := e.EncryptSymlink(string(bytes.Repeat([]byte("t"), n)))
			if got, ok := e.SymlinkTargetLen(len(c)); !ok || got != n {
				t.Fatalf("SymlinkTargetLen(%d) = %d, %v; want %d", len(c), got, ok, n)
			}
		}
		e.SetPaddedBase64(true)
		if _, ok := e.SymlinkTargetLen(44); ok {
			t.Fatal("SymlinkTargetLen claims to know the length under padded base64")
		}
	})
}

func TestOffsets(t *testing.T) {
	eachCipher(t, func(t *testing.T, e *ContentEnc) {
		ov := uint64(e.BlockOverhead())
		for _, p := range []uint64{0, 1, 4095, 4096, 4097, 8192, 1<<20 + 3, 10 << 20} {
			c := e.CipherSize(p)
			got, err := e.PlainSize(c)
			if err != nil || got != p {
				t.Errorf("PlainSize(CipherSize(%d)=%d) = %d, %v", p, c, got, err)
			}
		}
		if c := e.CipherSize(1); c != HeaderLen+1+ov {
			t.Errorf("CipherSize(1) = %d", c)
		}
		if n, err := e.PlainSize(HeaderLen); n != 0 || err != nil {
			t.Errorf("header-only file: %d, %v", n, err)
		}
		for _, c := range []uint64{1, 17, HeaderLen + 1, HeaderLen + ov, HeaderLen + uint64(e.CipherBlockSize()) + ov} {
			if _, err := e.PlainSize(c); !errors.Is(err, ErrCipherSize) {
				t.Errorf("PlainSize(%d): %v, want ErrCipherSize", c, err)
			}
		}
		if e.BlockCipherOffset(2) != HeaderLen+2*uint64(e.CipherBlockSize()) {
			t.Error("BlockCipherOffset")
		}
	})
}

func TestFileHeader(t *testing.T) {
	h, err := NewFileHeader()
	if err != nil {
		t.Fatal(err)
	}
	b := h.Bytes()
	if len(b) != HeaderLen || b[0] != 0 || b[1] != 2 {
		t.Fatalf("header bytes %x", b)
	}
	h2, err := ParseFileHeader(append(b, 1, 2, 3))
	if err != nil || h2 != h {
		t.Fatalf("parse: %v", err)
	}
	bad := [][]byte{b[:17], append([]byte{0, 1}, b[2:]...), make([]byte, HeaderLen), append([]byte{0, 2}, make([]byte, 16)...)}
	for i, x := range bad {
		if _, err := ParseFileHeader(x); !errors.Is(err, ErrBadHeader) {
			t.Errorf("bad header %d accepted: %v", i, err)
		}
	}
}

func TestParseCipher(t *testing.T) {
	for in, want := range map[string]CipherID{"gcm": AESGCM, "AES-GCM": AESGCM, "aegis": AEGIS, "XChaCha": XChaCha, "siv": AESSIV, "aes-siv": AESSIV} {
		if got, err := ParseCipher(in); err != nil || got != want {
			t.Errorf("ParseCipher(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseCipher("des"); !errors.Is(err, ErrUnknownCipher) {
		t.Error(err)
	}
	names := map[CipherID]string{AESGCM: "AES-256-GCM", XChaCha: "XChaCha20-Poly1305", AESSIV: "AES-SIV-512", AEGIS: "AEGIS-256X2"}
	for c, n := range names {
		if c.String() != n || !c.Valid() {
			t.Errorf("%q.String() = %q", string(c), c.String())
		}
		if back, err := ParseCipher(n); err != nil || back != c {
			t.Errorf("ParseCipher(%q) = %v, %v", n, back, err)
		}
	}
}

func benchContent(b *testing.B, decrypt bool) {
	for _, c := range Ciphers {
		b.Run(c.String(), func(b *testing.B) {
			e, err := NewContentEnc(c, testKey(), true)
			if err != nil {
				b.Fatal(err)
			}
			id := randBytes(FileIDLen)
			pt := randBytes(32 * BlockSize)
			ct := e.EncryptBlocks(nil, pt, 0, id)
			out := make([]byte, 0, len(ct))
			b.SetBytes(int64(len(pt)))
			b.ReportAllocs()
			for b.Loop() {
				if decrypt {
					if _, err := e.DecryptBlocks(out[:0], ct, 0, id); err != nil {
						b.Fatal(err)
					}
				} else {
					e.EncryptBlocks(out[:0], pt, 0, id)
				}
			}
		})
	}
}

func BenchmarkEncryptBlocks128K(b *testing.B) { benchContent(b, false) }
func BenchmarkDecryptBlocks128K(b *testing.B) { benchContent(b, true) }

func FuzzDecryptBlocks(f *testing.F) {
	e, _ := NewContentEnc(AESGCM, testKey(), true)
	id := make([]byte, FileIDLen)
	id[3] = 9
	f.Add(e.EncryptBlocks(nil, []byte("hello fuzz"), 0, id), uint64(0))
	f.Add(e.EncryptBlocks(nil, make([]byte, BlockSize+1), 5, id), uint64(5))
	f.Add(make([]byte, e.CipherBlockSize()), uint64(1))
	f.Add([]byte{1, 2, 3}, uint64(0))
	f.Fuzz(func(t *testing.T, ct []byte, first uint64) {
		out, err := e.DecryptBlocks([]byte("p"), ct, first, id)
		if len(out) < 1 || out[0] != 'p' {
			t.Fatal("dst prefix lost")
		}
		if err != nil {
			var be *BlockError
			if !errors.As(err, &be) || !errors.Is(err, ErrAuth) || be.Block < first {
				t.Fatalf("unexpected error %v", err)
			}
			if uint64(len(out)-1) != (be.Block-first)*BlockSize {
				t.Fatalf("returned %d bytes before bad block %d", len(out)-1, be.Block)
			}
			return
		}
		if size, err := e.PlainSize(uint64(len(ct)) + HeaderLen); err != nil || size != uint64(len(out)-1) {
			t.Fatalf("decrypted %d bytes, PlainSize says %d, %v", len(out)-1, size, err)
		}
	})
}

// TestAEGISBatchPath checks that AEGIS goes through the batch entry point
// and that batched and one-at-a-time sealing interoperate, holes and
// failures included.
func TestAEGISBatchPath(t *testing.T) {
	batched, _ := NewContentEnc(AEGIS, testKey(), true)
	if batched.batch == nil {
		t.Fatal("AEGIS ContentEnc does not use the batch entry point")
	}
	single, _ := NewContentEnc(AEGIS, testKey(), true)
	single.batch = nil
	id := randBytes(FileIDLen)
	pt := randBytes(70*BlockSize + 9)
	for _, dir := range [][2]*ContentEnc{{batched, single}, {single, batched}} {
		ct := dir[0].EncryptBlocks(nil, pt, 11, id)
		got, err := dir[1].DecryptBlocks(nil, ct, 11, id)
		if err != nil || !bytes.Equal(got, pt) {
			t.Fatalf("batched/single mismatch: %v", err)
		}
		cbs := dir[0].CipherBlockSize()
		clear(ct[40*cbs : 41*cbs]) // a hole in the second batch
		ct[50*cbs+40] ^= 1         // a bad block after it
		ct[60*cbs+40] ^= 1         // and another
		got, err = dir[1].DecryptBlocks(nil, ct, 11, id)
		if !isBlockErr(err, 11+50) || len(got) != 50*BlockSize {
			t.Fatalf("bad block: %v after %d bytes", err, len(got))
		}
		if !bytes.Equal(got[:40*BlockSize], pt[:40*BlockSize]) || !bytes.Equal(got[40*BlockSize:41*BlockSize], make([]byte, BlockSize)) {
			t.Fatal("plaintext before the bad block is wrong")
		}
	}
}
