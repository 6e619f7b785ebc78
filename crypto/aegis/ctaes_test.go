package aegis

import (
	"math/bits"
	"testing"
)

// aesRound is one AES encryption round without the key schedule:
// MixColumns(ShiftRows(SubBytes(in))) ^ rk, the AESENC instruction.
func aesRound(in, rk block) block {
	x := [4]block{in}
	aesRound4(&x)
	return xor(x[0], rk)
}

// refSbox computes the AES S-box from its definition, slowly and obviously:
// the inverse in GF(2^8) by search, then the affine map.
func refSbox(x byte) byte {
	mul := func(a, b byte) (p byte) {
		for ; b != 0; b >>= 1 {
			if b&1 != 0 {
				p ^= a
			}
			a = a<<1 ^ (a>>7)*0x1b
		}
		return
	}
	var inv byte
	for c := 1; c < 256 && x != 0; c++ {
		if mul(x, byte(c)) == 1 {
			inv = byte(c)
		}
	}
	return inv ^ bits.RotateLeft8(inv, 1) ^ bits.RotateLeft8(inv, 2) ^
		bits.RotateLeft8(inv, 3) ^ bits.RotateLeft8(inv, 4) ^ 0x63
}

// TestSubBytesAll checks the bitsliced S-box on every byte value, in every
// position of the 64-byte batch.
func TestSubBytesAll(t *testing.T) {
	for shift := range 64 {
		var w [8]uint64
		var in [64]byte
		for k := range in {
			in[k] = byte(k*4 + shift)
			w[k/8] |= uint64(in[k]) << (8 * (k % 8))
		}
		subBytes(&w)
		for k := range in {
			got := byte(w[k/8] >> (8 * (k % 8)))
			if want := refSbox(in[k]); got != want {
				t.Fatalf("S(%#02x) at byte %d = %#02x, want %#02x", in[k], k, got, want)
			}
		}
	}
}

// TestAESRoundsBatch checks that rounds computed together, in groups of four
// and a partial group, equal rounds computed one by one.
func TestAESRoundsBatch(t *testing.T) {
	r := newRand(t)
	for _, n := range []int{1, 3, 4, 6, 8, 12, 32} {
		x := make([]block, n)
		for i := range x {
			x[i] = loadBlock(randBytes(r, 16))
		}
		want := make([]block, n)
		for i := range x {
			want[i] = aesRound(x[i], block{})
		}
		aesRounds(x)
		for i := range x {
			if x[i] != want[i] {
				t.Fatalf("n=%d: block %d differs", n, i)
			}
		}
	}
}
