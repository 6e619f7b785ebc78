package cryptomator

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/crypto"
)

// Known answers from cryptolib's own tests (the reference implementation): "hello world"
// encrypted under an all-zero 512-bit master key with fixed randomness.
//   - SIV_GCM (cryptolib v2 FileContentCryptorImplTest.testFileEncryption): header nonce
//     12 x 0x55, content key 32 x 0x77, chunk nonce 12 x 0x55.
//   - SIV_CTRMAC (cryptolib v1 FileContentCryptorImplTest.testFileEncryption): header nonce,
//     content key and chunk nonce all zero.
var contentVectors = []struct {
	combo CipherCombo
	rand  []byte // what the random source returns, in order
	file  string // base64
}{
	{SIVGCM, bytes.Join([][]byte{bytes.Repeat([]byte{0x55}, 12), bytes.Repeat([]byte{0x77}, 32), bytes.Repeat([]byte{0x55}, 12)}, nil),
		"VVVVVVVVVVVVVVVVC+/OFHHE8UvKYTOPlrMO5rCRLAI7/zk8Hjoisja03+yi9ugeeMz1evZhxDExrawl93vf9DKQPx5VVVVVVVVVVVVVVVVSxe6Nf7RO8orsVTzHAmXlNSy1oJpDrg9coV0="},
	{SIVCTRMAC, make([]byte, 16+32+16),
		"AAAAAAAAAAAAAAAAAAAAACNqP4ddv3Z2rUiiFJKEIIdTD4r7x0U2ualjtPHEy3OLzqdAPU1ga24VjC86+zlHN49BfMdzvHF3f9EE0LSnRLSsu6ps3IRcJgAAAAAAAAAAAAAAAAAAAAC08KwUzWD+5t8kxipYZGvVj719S6Z+RGH1cZcl9SEoEV7XUZ4rzO6+hdzo"},
}

func zeroKey() *Masterkey { return new(Masterkey) }

func TestContentVectors(t *testing.T) {
	for _, v := range contentVectors {
		t.Run(string(v.combo), func(t *testing.T) {
			want, err := base64.StdEncoding.DecodeString(v.file)
			if err != nil {
				t.Fatal(err)
			}
			c, err := NewContent(v.combo, zeroKey())
			if err != nil {
				t.Fatal(err)
			}
			var pt bytes.Buffer
			if _, err := c.Decrypt(&pt, bytes.NewReader(want)); err != nil {
				t.Fatal(err)
			}
			if pt.String() != "hello world" {
				t.Fatalf("decrypted %q", pt.String())
			}
			c.Rand = bytes.NewReader(v.rand)
			var ct bytes.Buffer
			if _, err := c.Encrypt(&ct, strings.NewReader("hello world")); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(ct.Bytes(), want) {
				t.Fatalf("encrypted\n%x\nwant\n%x", ct.Bytes(), want)
			}
			if got := c.Geometry().CipherSize(11); got != int64(len(want)) {
				t.Fatalf("CipherSize(11) = %d, the file is %d", got, len(want))
			}
		})
	}
}

// The specification's rule for SIV_GCM chunks, built by hand with the standard library: the
// associated data is the chunk number (8 bytes, big-endian) and then the header nonce. The
// swapped order, which some secondary descriptions give, must not open.
func TestGCMChunkAssociatedDataOrder(t *testing.T) {
	c, err := NewContent(SIVGCM, zeroKey())
	if err != nil {
		t.Fatal(err)
	}
	contentKey := bytes.Repeat([]byte{0x77}, 32)
	headerNonce := bytes.Repeat([]byte{0x55}, 12)
	c.Rand = bytes.NewReader(append(append([]byte(nil), headerNonce...), contentKey...))
	h, _, err := c.NewHeader()
	if err != nil {
		t.Fatal(err)
	}
	block, _ := aes.NewCipher(contentKey)
	gcm, _ := cipher.NewGCM(block)
	chunkNonce := make([]byte, 12)
	rand.Read(chunkNonce)
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], 5)
	seal := func(ad []byte) []byte {
		return gcm.Seal(append([]byte(nil), chunkNonce...), chunkNonce, []byte("chunk five"), ad)
	}
	specAD := append(append([]byte(nil), n[:]...), headerNonce...)
	swappedAD := append(append([]byte(nil), headerNonce...), n[:]...)
	pt, err := c.OpenChunk(nil, seal(specAD), 5, h)
	if err != nil || string(pt) != "chunk five" {
		t.Fatalf("chunk sealed per the specification: %q, %v", pt, err)
	}
	if pt, err := c.OpenChunk(nil, seal(swappedAD), 5, h); err == nil {
		t.Fatalf("chunk sealed with nonce-then-number opened: %q", pt)
	}
}

// The specification's rules for SIV_CTRMAC, applied by hand with the standard library: the
// header is nonce (16), AES-CTR(encryption master key, nonce) of the payload (8 reserved
// bytes, content key), HMAC-SHA256(MAC master key, nonce || encrypted payload); a chunk is
// nonce (16), AES-CTR(content key, nonce) of the cleartext, HMAC-SHA256(MAC master key,
// header nonce || chunk number || chunk nonce || ciphertext).
func TestCTRMACFromSpecification(t *testing.T) {
	k, _ := NewMasterkey()
	c, err := NewContent(SIVCTRMAC, k)
	if err != nil {
		t.Fatal(err)
	}
	headerNonce, contentKey, chunkNonce := make([]byte, 16), make([]byte, 32), make([]byte, 16)
	rand.Read(headerNonce)
	rand.Read(contentKey)
	rand.Read(chunkNonce)
	payload := append(bytes.Repeat([]byte{0xFF}, 8), contentKey...)
	encBlock, _ := aes.NewCipher(k.enc[:])
	encPayload := make([]byte, len(payload))
	cipher.NewCTR(encBlock, headerNonce).XORKeyStream(encPayload, payload)
	header := append(append([]byte(nil), headerNonce...), encPayload...)
	header = hmacSHA256(k.mac[:], header, header)

	contentBlock, _ := aes.NewCipher(contentKey)
	msg := []byte("a chunk of a migrated vault")
	ct := make([]byte, len(msg))
	cipher.NewCTR(contentBlock, chunkNonce).XORKeyStream(ct, msg)
	var num [8]byte
	binary.BigEndian.PutUint64(num[:], 3)
	chunk := append(append([]byte(nil), chunkNonce...), ct...)
	chunk = hmacSHA256(k.mac[:], chunk, headerNonce, num[:], chunk)

	h, err := c.OpenHeader(header)
	if err != nil {
		t.Fatal(err)
	}
	pt, err := c.OpenChunk(nil, chunk, 3, h)
	if err != nil || !bytes.Equal(pt, msg) {
		t.Fatalf("OpenChunk = %q, %v", pt, err)
	}
	if _, err := c.OpenChunk(nil, chunk, 2, h); !errors.Is(err, crypto.ErrAuth) {
		t.Fatalf("as chunk 2: %v", err)
	}
	// And what SealChunk makes, checked by hand.
	sealed, err := c.SealChunk(nil, msg, 3, h)
	if err != nil {
		t.Fatal(err)
	}
	body := sealed[:len(sealed)-32]
	if want := hmacSHA256(k.mac[:], nil, headerNonce, num[:], body); !bytes.Equal(sealed[len(sealed)-32:], want) {
		t.Fatal("SealChunk's MAC is not the specification's")
	}
	got := make([]byte, len(msg))
	cipher.NewCTR(contentBlock, body[:16]).XORKeyStream(got, body[16:])
	if !bytes.Equal(got, msg) {
		t.Fatal("SealChunk's ciphertext is not AES-CTR under the content key")
	}
}

func hmacSHA256(key, dst []byte, parts ...[]byte) []byte {
	c := &Content{macKey: key}
	return c.mac(dst, parts...)
}

func encryptForTest(t *testing.T, c *Content, pt []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := c.Encrypt(&b, bytes.NewReader(pt)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Tampering anywhere (header, a chunk's nonce, ciphertext or tag, chunk order, a header from
// another file, a cut inside a chunk) fails with the chunk named, and nothing of the failing
// chunk reaches the output.
func TestContentTamperingIsDetected(t *testing.T) {
	k, _ := NewMasterkey()
	for _, combo := range []CipherCombo{SIVGCM, SIVCTRMAC} {
		t.Run(string(combo), func(t *testing.T) {
			c, err := NewContent(combo, k)
			if err != nil {
				t.Fatal(err)
			}
			g := c.Geometry()
			pt := make([]byte, 2*ChunkSize+100)
			rand.Read(pt)
			ct := encryptForTest(t, c, pt)
			other := encryptForTest(t, c, pt)
			if int64(len(ct)) != g.CipherSize(int64(len(pt))) {
				t.Fatalf("file of %d bytes, CipherSize says %d", len(ct), g.CipherSize(int64(len(pt))))
			}
			cbs := g.BlockSize + g.BlockOverhead
			chunk1 := g.HeaderLen + cbs
			flip := func(i int) []byte { b := bytes.Clone(ct); b[i] ^= 1; return b }
			swapped := bytes.Clone(ct)
			copy(swapped[g.HeaderLen:], ct[chunk1:chunk1+cbs])
			copy(swapped[chunk1:], ct[g.HeaderLen:g.HeaderLen+cbs])
			for _, tc := range []struct {
				name      string
				file      []byte
				wantChunk int64 // -1: the header
				wantOut   int   // cleartext bytes that may come out before the failure
			}{
				{"header byte", flip(g.HeaderLen / 2), -1, 0},
				{"header nonce", flip(0), -1, 0},
				{"chunk 1 nonce", flip(chunk1), 1, ChunkSize},
				{"chunk 1 ciphertext", flip(chunk1 + 100), 1, ChunkSize},
				{"chunk 1 tag", flip(chunk1 + cbs - 1), 1, ChunkSize},
				{"last chunk", flip(len(ct) - 1), 2, 2 * ChunkSize},
				{"chunks 0 and 1 swapped", swapped, 0, 0},
				{"header of another file", append(bytes.Clone(other[:g.HeaderLen]), ct[g.HeaderLen:]...), 0, 0},
				{"last chunk cut short", ct[:len(ct)-100+g.BlockOverhead-1], 2, 2 * ChunkSize},
				{"cut inside the header", ct[:g.HeaderLen-1], -1, 0},
			} {
				var out bytes.Buffer
				n, err := c.Decrypt(&out, bytes.NewReader(tc.file))
				if !errors.Is(err, crypto.ErrAuth) {
					t.Fatalf("%s: %v, want ErrAuth", tc.name, err)
				}
				var be *crypto.BlockError
				if tc.wantChunk < 0 {
					if errors.As(err, &be) {
						t.Fatalf("%s: blamed chunk %d, want the header", tc.name, be.Block)
					}
				} else if !errors.As(err, &be) || int64(be.Block) != tc.wantChunk {
					t.Fatalf("%s: %v, want chunk %d", tc.name, err, tc.wantChunk)
				}
				if out.Len() != tc.wantOut || int(n) != tc.wantOut || !bytes.Equal(out.Bytes(), pt[:out.Len()]) {
					t.Fatalf("%s: %d bytes came out, want the %d before the failing chunk", tc.name, out.Len(), tc.wantOut)
				}
			}
		})
	}
}

func TestGeometry(t *testing.T) {
	for _, combo := range []CipherCombo{SIVGCM, SIVCTRMAC} {
		c, _ := NewContent(combo, zeroKey())
		g := c.Geometry()
		for _, n := range []int64{0, 1, 15, 16, 17, 4095, 4096, ChunkSize - 1, ChunkSize, ChunkSize + 1, 3*ChunkSize + 7, 1 << 30} {
			cs := g.CipherSize(n)
			if p, ok := g.PlainSize(cs); !ok || p != n {
				t.Errorf("%s: PlainSize(CipherSize(%d)=%d) = %d, %v", combo, n, cs, p, ok)
			}
		}
		if p, ok := g.PlainSize(0); !ok || p != 0 {
			t.Errorf("%s: an empty file: %d, %v", combo, p, ok)
		}
		for _, bad := range []int64{1, int64(g.HeaderLen) - 1, int64(g.HeaderLen) + 1, int64(g.HeaderLen + g.BlockOverhead),
			int64(g.HeaderLen + g.BlockSize + g.BlockOverhead + g.BlockOverhead)} {
			if p, ok := g.PlainSize(bad); ok {
				t.Errorf("%s: PlainSize(%d) = %d, want no size", combo, bad, p)
			}
		}
	}
	gcm, _ := NewContent(SIVGCM, zeroKey())
	if g := gcm.Geometry(); g != (Geometry{HeaderLen: 68, BlockSize: 32768, BlockOverhead: 28, EmptyHasHeader: true}) {
		t.Fatalf("SIV_GCM geometry %+v", g)
	}
	ctr, _ := NewContent(SIVCTRMAC, zeroKey())
	if g := ctr.Geometry(); g != (Geometry{HeaderLen: 88, BlockSize: 32768, BlockOverhead: 48, EmptyHasHeader: true}) {
		t.Fatalf("SIV_CTRMAC geometry %+v", g)
	}
}

// A whole SIV_CTRMAC file built by hand from the specification (the header as in
// TestCTRMACFromSpecification, then chunks of 32 KiB cleartext numbered from 0, the last one
// short) decrypts to its cleartext; the same file with chunk 1 MACed as chunk 0 fails there.
func TestCTRMACWholeFileFromSpecification(t *testing.T) {
	k, _ := NewMasterkey()
	c, err := NewContent(SIVCTRMAC, k)
	if err != nil {
		t.Fatal(err)
	}
	headerNonce, contentKey := make([]byte, 16), make([]byte, 32)
	rand.Read(headerNonce)
	rand.Read(contentKey)
	encBlock, _ := aes.NewCipher(k.enc[:])
	encPayload := make([]byte, 40)
	cipher.NewCTR(encBlock, headerNonce).XORKeyStream(encPayload, append(bytes.Repeat([]byte{0xFF}, 8), contentKey...))
	header := append(append([]byte(nil), headerNonce...), encPayload...)
	header = hmacSHA256(k.mac[:], header, header)
	contentBlock, _ := aes.NewCipher(contentKey)
	plain := make([]byte, 2*ChunkSize+100)
	rand.Read(plain)
	build := func(macNumber func(n uint64) uint64) []byte {
		file := bytes.Clone(header)
		for n := uint64(0); n*ChunkSize < uint64(len(plain)); n++ {
			part := plain[n*ChunkSize : min((n+1)*ChunkSize, uint64(len(plain)))]
			nonce := make([]byte, 16)
			rand.Read(nonce)
			chunk := append(nonce, make([]byte, len(part))...)
			cipher.NewCTR(contentBlock, nonce).XORKeyStream(chunk[16:], part)
			var num [8]byte
			binary.BigEndian.PutUint64(num[:], macNumber(n))
			file = append(file, hmacSHA256(k.mac[:], chunk, headerNonce, num[:], chunk)...)
		}
		return file
	}
	file := build(func(n uint64) uint64 { return n })
	if int64(len(file)) != c.Geometry().CipherSize(int64(len(plain))) {
		t.Fatalf("hand-built file of %d bytes, CipherSize says %d", len(file), c.Geometry().CipherSize(int64(len(plain))))
	}
	var out bytes.Buffer
	if _, err := c.Decrypt(&out, bytes.NewReader(file)); err != nil || !bytes.Equal(out.Bytes(), plain) {
		t.Fatalf("Decrypt: %d bytes, equal %v, %v", out.Len(), bytes.Equal(out.Bytes(), plain), err)
	}
	misnumbered := build(func(n uint64) uint64 {
		if n == 1 {
			return 0
		}
		return n
	})
	var be *crypto.BlockError
	if _, err := c.Decrypt(io.Discard, bytes.NewReader(misnumbered)); !errors.As(err, &be) || be.Block != 1 {
		t.Fatalf("chunk 1 MACed as chunk 0: %v, want chunk 1 named", err)
	}
}
