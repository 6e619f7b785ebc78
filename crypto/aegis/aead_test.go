package aegis

import (
	"bytes"
	"crypto/cipher"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// newRand returns a seeded RNG and logs the seed so failures reproduce.
func newRand(t testing.TB) *rand.Rand {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// forEachAEAD runs f on every variant with both tag sizes.
func forEachAEAD(t *testing.T, f func(t *testing.T, v *variant, a cipher.AEAD, key []byte)) {
	for _, c := range constructors {
		for _, tagSize := range []int{16, 32} {
			t.Run(fmt.Sprintf("%s/tag%d", c.v.name, tagSize), func(t *testing.T) {
				key := randBytes(newRand(t), c.v.keySize())
				a, err := c.new(key, tagSize)
				if err != nil {
					t.Fatal(err)
				}
				f(t, c.v, a, key)
			})
		}
	}
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s did not panic", what)
		}
	}()
	f()
}

func TestConstructorErrors(t *testing.T) {
	for _, c := range constructors {
		if _, err := c.new(make([]byte, c.v.keySize()+1), 16); err == nil {
			t.Errorf("%s accepted a wrong key size", c.v.name)
		}
		if _, err := c.new(make([]byte, c.v.keySize()), 24); err == nil {
			t.Errorf("%s accepted tag size 24", c.v.name)
		}
	}
}

// TestAEADConformance is the shared AEAD suite: round trip, append to dst,
// in-place, overlap rules, inputs left intact, and failures on any change.
func TestAEADConformance(t *testing.T) {
	forEachAEAD(t, func(t *testing.T, v *variant, a cipher.AEAD, key []byte) {
		r := newRand(t)
		if a.NonceSize() != v.keySize() || a.Overhead() < 16 {
			t.Fatalf("NonceSize %d Overhead %d", a.NonceSize(), a.Overhead())
		}
		for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 255, 256, 1000, 4096} {
			nonce := randBytes(r, a.NonceSize())
			msg := randBytes(r, n)
			ad := randBytes(r, r.IntN(70))
			msgCopy, adCopy, nonceCopy := bytes.Clone(msg), bytes.Clone(ad), bytes.Clone(nonce)

			// Append to a non-empty dst keeps the prefix.
			prefix := []byte("prefix")
			sealed := a.Seal(bytes.Clone(prefix), nonce, msg, ad)
			if !bytes.Equal(sealed[:len(prefix)], prefix) || len(sealed) != len(prefix)+n+a.Overhead() {
				t.Fatalf("n=%d: Seal did not append correctly", n)
			}
			ct := sealed[len(prefix):]
			if !bytes.Equal(msg, msgCopy) || !bytes.Equal(ad, adCopy) || !bytes.Equal(nonce, nonceCopy) {
				t.Fatalf("n=%d: Seal modified its inputs", n)
			}
			ctCopy := bytes.Clone(ct)
			pt, err := a.Open(bytes.Clone(prefix), nonce, ct, ad)
			if err != nil || !bytes.Equal(pt[len(prefix):], msg) || !bytes.Equal(pt[:len(prefix)], prefix) {
				t.Fatalf("n=%d: Open = %v", n, err)
			}
			if !bytes.Equal(ct, ctCopy) || !bytes.Equal(ad, adCopy) {
				t.Fatalf("n=%d: Open modified its inputs", n)
			}

			// Exact in-place operation.
			buf := make([]byte, n, n+a.Overhead())
			copy(buf, msg)
			inPlace := a.Seal(buf[:0], nonce, buf, ad)
			if !bytes.Equal(inPlace, ct) {
				t.Fatalf("n=%d: in-place Seal differs", n)
			}
			opened, err := a.Open(inPlace[:0], nonce, inPlace, ad)
			if err != nil || !bytes.Equal(opened, msg) {
				t.Fatalf("n=%d: in-place Open = %v", n, err)
			}

			// Any inexact overlap panics.
			if n > 0 {
				big := make([]byte, 2*n+2*a.Overhead()+1)
				copy(big[1:], msg)
				mustPanic(t, "overlapping Seal", func() { a.Seal(big[:0], nonce, big[1:1+n], ad) })
				copy(big, ct)
				mustPanic(t, "overlapping Open", func() { a.Open(big[1:1], nonce, big[:len(ct)], ad) })
			}

			// Wrong nonce, AD, ciphertext or tag: error, nothing released.
			checkFail := func(what string, nonce, ct, ad []byte) {
				t.Helper()
				dst := make([]byte, 3, 3+len(ct))
				for i := range dst[:cap(dst)] {
					dst[:cap(dst)][i] = 0xaa
				}
				got, err := a.Open(dst, nonce, ct, ad)
				if !errors.Is(err, ErrOpen) || got != nil {
					t.Fatalf("n=%d: Open with %s = %v, %v", n, what, got, err)
				}
				for i, b := range dst[3 : 3+max(len(ct)-a.Overhead(), 0)] {
					if b != 0 {
						t.Fatalf("n=%d: Open with %s left byte %d of dst = %#x", n, what, i, b)
					}
				}
			}
			badNonce := bytes.Clone(nonce)
			badNonce[r.IntN(len(badNonce))] ^= 1 << r.IntN(8)
			checkFail("wrong nonce", badNonce, ct, ad)
			checkFail("extra AD", nonce, ct, append(bytes.Clone(ad), 0))
			for i := range ad {
				badAD := bytes.Clone(ad)
				badAD[i] ^= 1 << r.IntN(8)
				checkFail(fmt.Sprintf("AD byte %d flipped", i), nonce, ct, badAD)
			}
			for i := range ct {
				if n > 64 && i < n && i%17 != 0 {
					continue // every tag byte, a sample of the ciphertext
				}
				bad := bytes.Clone(ct)
				bad[i] ^= 1 << r.IntN(8)
				checkFail(fmt.Sprintf("byte %d flipped", i), nonce, bad, ad)
			}
			checkFail("truncated", nonce, ct[:len(ct)-1], ad)
			if n > 0 {
				checkFail("shortened ciphertext", nonce, append(bytes.Clone(ct[:n-1]), ct[n:]...), ad)
			}
		}
		nonce := make([]byte, a.NonceSize())
		if _, err := a.Open(nil, nonce, make([]byte, a.Overhead()-1), nil); !errors.Is(err, ErrOpen) {
			t.Errorf("Open of a too-short ciphertext = %v", err)
		}
		mustPanic(t, "Seal with a short nonce", func() { a.Seal(nil, nonce[1:], nil, nil) })
		mustPanic(t, "Open with a long nonce", func() { a.Open(nil, append(nonce, 0), make([]byte, 64), nil) })
	})
}

// TestAsmMatchesGeneric compares the dispatched implementation (assembly on
// amd64) with the portable one over every length 0..1100, several AD lengths
// and unaligned buffers, and checks the round trip.
func TestAsmMatchesGeneric(t *testing.T) {
	lengths := 1100
	if testing.Short() {
		lengths = 300
	}
	forEachAEAD(t, func(t *testing.T, v *variant, a cipher.AEAD, key []byte) {
		compareWithGeneric(t, v, a, key, lengths)
	})
}

// compareWithGeneric checks a against the portable implementation for every
// message length 0..maxLen.
func compareWithGeneric(t *testing.T, v *variant, a cipher.AEAD, key []byte, maxLen int) {
	r := newRand(t)
	ts := a.Overhead()
	for n := 0; n <= maxLen; n++ {
		adLen := []int{0, 1, 24, 33, 100, 300}[n%6]
		off := n % 7
		nonce := randBytes(r, a.NonceSize())
		msg := randBytes(r, n+off)[off:]
		ad := randBytes(r, adLen+off)[off:]
		want := make([]byte, n+ts)
		sealGeneric(v, want, key, nonce, msg, ad, ts)
		got := a.Seal(make([]byte, off, off+n+ts), nonce, msg, ad)[off:]
		if !bytes.Equal(got, want) {
			t.Fatalf("n=%d ad=%d: Seal differs from portable\n got %x\nwant %x", n, adLen, got, want)
		}
		pt, err := a.Open(make([]byte, off+1, off+1+n)[off+1:], nonce, got, ad)
		if err != nil || !bytes.Equal(pt, msg) {
			t.Fatalf("n=%d: round trip failed: %v", n, err)
		}
		gpt := make([]byte, n)
		if !openGeneric(v, gpt, key, nonce, got, ad, ts) || !bytes.Equal(gpt, msg) {
			t.Fatalf("n=%d: portable Open failed", n)
		}
		if n > 0 {
			got[r.IntN(len(got))] ^= 1
			if _, err := a.Open(nil, nonce, got, ad); err == nil {
				t.Fatalf("n=%d: Open accepted a flipped bit", n)
			}
		}
	}
}

func TestZeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	forEachAEAD(t, func(t *testing.T, v *variant, a cipher.AEAD, key []byte) {
		nonce := make([]byte, a.NonceSize())
		msg := make([]byte, 4096+13)
		ad := make([]byte, 24)
		dst := make([]byte, 0, len(msg)+a.Overhead())
		ct := a.Seal(nil, nonce, msg, ad)
		if n := testing.AllocsPerRun(20, func() { a.Seal(dst, nonce, msg, ad) }); n != 0 {
			t.Errorf("Seal allocates %v times", n)
		}
		if n := testing.AllocsPerRun(20, func() { a.Open(dst, nonce, ct, ad) }); n != 0 {
			t.Errorf("Open allocates %v times", n)
		}
		b := a.(Batcher)
		const k = 5
		dsts, nonces, msgs, ads, cts := make([][]byte, k), make([][]byte, k), make([][]byte, k), make([][]byte, k), make([][]byte, k)
		for i := range k {
			dsts[i] = make([]byte, 0, len(msg)+a.Overhead())
			nonces[i], msgs[i], ads[i], cts[i] = nonce, msg, ad, ct
		}
		if n := testing.AllocsPerRun(20, func() { b.SealBatch(dsts, nonces, msgs, ads) }); n != 0 {
			t.Errorf("SealBatch allocates %v times", n)
		}
		if n := testing.AllocsPerRun(20, func() { b.OpenBatch(dsts, nonces, cts, ads) }); n != 0 {
			t.Errorf("OpenBatch allocates %v times", n)
		}
	})
}

// TestBatch checks SealBatch and OpenBatch against Seal and Open on batches
// of equal and unequal lengths, in place and not, and the failure report.
func TestBatch(t *testing.T) {
	forEachAEAD(t, func(t *testing.T, v *variant, a cipher.AEAD, key []byte) {
		checkBatch(t, a)
	})
}

// checkBatch runs batches of several shapes through a and compares them with
// Seal and Open.
func checkBatch(t *testing.T, a cipher.AEAD) {
	r := newRand(t)
	b := a.(Batcher)
	for _, shape := range []string{"equal", "mixed", "odd", "ragged", "longad"} {
		k := 1 + r.IntN(9)
		switch shape {
		case "odd":
			k = 7
		case "equal", "ragged": // two groups of four (quad kernels) and one more
			k = 9
		}
		dsts, nonces, msgs, ads := make([][]byte, k), make([][]byte, k), make([][]byte, k), make([][]byte, k)
		want := make([][]byte, k)
		for i := range k {
			n := 4096
			switch shape {
			case "mixed":
				n = r.IntN(5000)
			case "odd":
				n = []int{4096, 4096, 4096, 17, 4096, 0, 4096}[i]
			case "ragged": // pairs of different lengths, same AD length
				n = r.IntN(300)
			case "longad":
				n = 4096 - r.IntN(100)
			}
			nonces[i] = randBytes(r, a.NonceSize())
			msgs[i] = randBytes(r, n)
			ads[i] = randBytes(r, 24)
			if shape == "longad" {
				ads[i] = randBytes(r, 100)
			}
			if shape == "mixed" {
				ads[i] = ads[i][:r.IntN(24)]
			}
			want[i] = a.Seal(nil, nonces[i], msgs[i], ads[i])
			if i%2 == 0 { // in place
				dsts[i] = append(make([]byte, 0, n+a.Overhead()), msgs[i]...)
				msgs[i] = dsts[i]
			} else {
				dsts[i] = make([]byte, 0, n+a.Overhead())
			}
		}
		plain := make([][]byte, k)
		for i := range k {
			plain[i] = bytes.Clone(msgs[i])
		}
		b.SealBatch(dsts, nonces, msgs, ads)
		cts := make([][]byte, k)
		for i := range k {
			cts[i] = dsts[i][:len(want[i])]
			if !bytes.Equal(cts[i], want[i]) {
				t.Fatalf("%s: SealBatch message %d differs from Seal", shape, i)
			}
		}
		outs := make([][]byte, k)
		for i := range k {
			outs[i] = make([]byte, 0, len(plain[i]))
		}
		if bad, err := b.OpenBatch(outs, nonces, cts, ads); bad != -1 || err != nil {
			t.Fatalf("%s: OpenBatch = %d, %v", shape, bad, err)
		}
		for i := range k {
			if !bytes.Equal(outs[i][:len(plain[i])], plain[i]) {
				t.Fatalf("%s: OpenBatch message %d differs", shape, i)
			}
		}
		// Corrupt two messages: the first one is reported, both are zeroed.
		if k >= 3 {
			cts[1][0] ^= 1
			cts[k-1][len(cts[k-1])-1] ^= 1
			for i := range outs {
				outs[i] = outs[i][:len(plain[i])]
				for j := range outs[i] {
					outs[i][j] = 0xaa
				}
			}
			bad, err := b.OpenBatch(outs, nonces, cts, ads)
			if bad != 1 || !errors.Is(err, ErrOpen) {
				t.Fatalf("%s: OpenBatch with bad message 1 = %d, %v", shape, bad, err)
			}
			for _, i := range []int{1, k - 1} {
				if bytes.ContainsFunc(outs[i], func(r rune) bool { return r != 0 }) {
					t.Fatalf("%s: failed message %d not zeroed", shape, i)
				}
			}
			if !bytes.Equal(outs[0], plain[0]) {
				t.Fatalf("%s: good message 0 not opened", shape)
			}
		}
	}
}

func TestWipe(t *testing.T) {
	a, err := New256X2(bytes.Repeat([]byte{7}, 32), 16)
	if err != nil {
		t.Fatal(err)
	}
	Wipe(a)
	x := a.(*aead)
	if x.key != [32]byte{} {
		t.Fatal("key not wiped")
	}
	// A wiped AEAD is an AEAD under the zero key: it no longer matches the old key.
	nonce := make([]byte, 32)
	b, _ := New256X2(bytes.Repeat([]byte{7}, 32), 16)
	if bytes.Equal(a.Seal(nil, nonce, nil, nil), b.Seal(nil, nonce, nil, nil)) {
		t.Fatal("wiped AEAD still uses the key")
	}
}

// FuzzAsmMatchesGeneric compares the dispatched (assembly) implementation
// with the portable one on random inputs for every variant.
func FuzzAsmMatchesGeneric(f *testing.F) {
	f.Add(uint8(4), false, []byte("key material......................"), []byte("nonce"), []byte("ad"), []byte("message"), uint8(0))
	f.Add(uint8(1), true, []byte{}, []byte{}, make([]byte, 24), make([]byte, 4096), uint8(3))
	f.Fuzz(func(t *testing.T, which uint8, tag32 bool, key, nonce, ad, msg []byte, off uint8) {
		c := constructors[int(which)%len(constructors)]
		k := make([]byte, c.v.keySize())
		copy(k, key)
		n := make([]byte, c.v.keySize())
		copy(n, nonce)
		tagSize := 16
		if tag32 {
			tagSize = 32
		}
		a, err := c.new(k, tagSize)
		if err != nil {
			t.Fatal(err)
		}
		o := int(off % 16)
		m := append(make([]byte, o), msg...)[o:]
		want := make([]byte, len(msg)+tagSize)
		sealGeneric(c.v, want, k, n, m, ad, tagSize)
		got := a.Seal(make([]byte, o, o+len(want))[o:], n, m, ad)
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: Seal differs from portable", c.v.name)
		}
		pt, err := a.Open(nil, n, got, ad)
		if err != nil || !bytes.Equal(pt, msg) {
			t.Fatalf("%s: round trip failed: %v", c.v.name, err)
		}
		if len(got) > 0 {
			got[int(off)%len(got)] ^= 0x80
			if _, err := a.Open(nil, n, got, ad); err == nil {
				t.Fatalf("%s: Open accepted a flipped byte", c.v.name)
			}
		}
	})
}

// FuzzBatchMatchesSeal cuts the input into five messages (equal AD lengths,
// so the pair and quad kernels run) and compares SealBatch and OpenBatch with Seal,
// including the report of a tampered message.
func FuzzBatchMatchesSeal(f *testing.F) {
	f.Add(uint8(4), make([]byte, 5*4096), uint16(4096), uint16(4096), uint16(4096), uint16(4096), uint8(24))
	f.Add(uint8(0), make([]byte, 300), uint16(33), uint16(100), uint16(40), uint16(90), uint8(40))
	f.Fuzz(func(t *testing.T, which uint8, data []byte, n1, n2, n3, n4 uint16, adLen uint8) {
		c := constructors[int(which)%len(constructors)]
		a, err := c.new(make([]byte, c.v.keySize()), 16)
		if err != nil {
			t.Fatal(err)
		}
		// Five messages: lengths n1..n4 (as far as data lasts) and the rest.
		var msgs [][]byte
		for _, n := range []uint16{n1, n2, n3, n4} {
			n := min(int(n), len(data))
			msgs = append(msgs, data[:n])
			data = data[n:]
		}
		msgs = append(msgs, data)
		const k = 5
		dsts, nonces, ads, want := make([][]byte, k), make([][]byte, k), make([][]byte, k), make([][]byte, k)
		for i := range k {
			nonces[i] = make([]byte, a.NonceSize())
			nonces[i][0] = byte(i)
			ads[i] = bytes.Repeat([]byte{byte(i)}, int(adLen))
			want[i] = a.Seal(nil, nonces[i], msgs[i], ads[i])
			dsts[i] = make([]byte, 0, len(want[i]))
		}
		a.(Batcher).SealBatch(dsts, nonces, msgs, ads)
		cts := make([][]byte, k)
		for i := range k {
			cts[i] = dsts[i][:len(want[i])]
			if !bytes.Equal(cts[i], want[i]) {
				t.Fatalf("%s: SealBatch message %d differs from Seal", c.v.name, i)
			}
		}
		outs := make([][]byte, k)
		for i := range k {
			outs[i] = make([]byte, 0, len(msgs[i]))
		}
		if bad, err := a.(Batcher).OpenBatch(outs, nonces, cts, ads); bad != -1 || err != nil {
			t.Fatalf("%s: OpenBatch = %d, %v", c.v.name, bad, err)
		}
		for i := range k {
			if !bytes.Equal(outs[i][:len(msgs[i])], msgs[i]) {
				t.Fatalf("%s: OpenBatch message %d differs", c.v.name, i)
			}
		}
		cts[1][len(cts[1])/2] ^= 1
		if bad, err := a.(Batcher).OpenBatch(outs, nonces, cts, ads); bad != 1 || err == nil {
			t.Fatalf("%s: OpenBatch of tampered message 1 = %d, %v", c.v.name, bad, err)
		}
	})
}

// TestAliasing checks the overlap rules of Seal, Open, SealBatch and
// OpenBatch for every variant: an output over the additional data panics,
// an output next to it or over the nonce gives the same result as separate
// buffers.
func TestAliasing(t *testing.T) {
	forEachAEAD(t, func(t *testing.T, v *variant, a cipher.AEAD, key []byte) {
		checkAliasingRules(t, a)
	})
}

func checkAliasingRules(t *testing.T, a cipher.AEAD) {
	r := newRand(t)
	b := a.(Batcher)
	ts := a.Overhead()
	for _, n := range []int{0, 1, 31, 64, 100, 300} {
		nonce := randBytes(r, a.NonceSize())
		msg := randBytes(r, n)
		const adLen = 40
		ad := randBytes(r, adLen)
		ct := a.Seal(nil, nonce, msg, ad)

		// buf holds the AD at adOff; outputs start at the given offsets.
		for _, start := range []int{0, 5, adLen - 1} {
			buf := make([]byte, adLen+n+ts+64)
			copy(buf, ad)
			adIn := buf[:adLen]
			mustPanic(t, fmt.Sprintf("Seal with output at AD byte %d", start), func() {
				a.Seal(buf[start:start], nonce, msg, adIn)
			})
			mustPanic(t, fmt.Sprintf("SealBatch with output at AD byte %d", start), func() {
				b.SealBatch([][]byte{make([]byte, 0, n+ts), buf[start:start]}, [][]byte{nonce, nonce},
					[][]byte{msg, msg}, [][]byte{ad, adIn})
			})
			if n > 0 { // an empty plaintext overlaps nothing
				mustPanic(t, fmt.Sprintf("Open with output at AD byte %d", start), func() {
					a.Open(buf[start:start], nonce, ct, adIn)
				})
				mustPanic(t, fmt.Sprintf("OpenBatch with output at AD byte %d", start), func() {
					b.OpenBatch([][]byte{make([]byte, n), buf[start:start]}, [][]byte{nonce, nonce},
						[][]byte{ct, ct}, [][]byte{ad, adIn})
				})
			}
		}
		// The AD may also start where the output starts, inside the message.
		if n > 0 {
			buf := append(bytes.Clone(msg), make([]byte, ts)...)
			mustPanic(t, "in-place Seal with the AD over the message", func() {
				a.Seal(buf[:0], nonce, buf[:n], buf[:min(n, adLen)])
			})
		}

		// Output right after the AD, and output over the nonce: allowed, and
		// the same as separate buffers.
		buf := make([]byte, adLen+n+ts)
		copy(buf, ad)
		if got := a.Seal(buf[adLen:adLen], nonce, msg, buf[:adLen]); !bytes.Equal(got, ct) {
			t.Fatalf("n=%d: Seal with output after the AD differs", n)
		}
		if got, err := a.Open(buf[adLen:adLen], nonce, ct, buf[:adLen]); err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("n=%d: Open with output after the AD: %v", n, err)
		}
		if n+ts >= a.NonceSize() {
			over := make([]byte, n+ts)
			copy(over, nonce)
			if got := a.Seal(over[:0], over[:a.NonceSize()], msg, ad); !bytes.Equal(got, ct) {
				t.Fatalf("n=%d: Seal with output over the nonce differs", n)
			}
			if n >= a.NonceSize() {
				out := make([]byte, n)
				copy(out, nonce)
				if got, err := a.Open(out[:0], out[:a.NonceSize()], ct, ad); err != nil || !bytes.Equal(got, msg) {
					t.Fatalf("n=%d: Open with output over the nonce: %v", n, err)
				}
			}
		}
	}
}

// TestImplementation checks Accelerated and Implementation against the path
// each variant takes, and that other AEADs are not claimed.
func TestImplementation(t *testing.T) {
	for _, c := range constructors {
		a, err := c.new(make([]byte, c.v.keySize()), 16)
		if err != nil {
			t.Fatal(err)
		}
		impl := Implementation(a)
		if Accelerated(a) != hasAsm(c.v) || (impl == portableName) == hasAsm(c.v) || impl == "" {
			t.Errorf("%s: Accelerated %v, Implementation %q, assembly %v", c.v.name, Accelerated(a), impl, hasAsm(c.v))
		}
		t.Logf("%s: %s", c.v.name, impl)
	}
	if Implementation(nil) != "" || Accelerated(nil) {
		t.Error("a nil AEAD has an implementation")
	}
}
