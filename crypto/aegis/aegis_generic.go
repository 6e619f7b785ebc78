package aegis

import (
	"encoding/binary"
	"math/bits"
)

// This file is the portable implementation: the AES round in software and the
// AEGIS state machine for any number of lanes. It is the only path on
// architectures without assembly kernels and on CPUs without AES
// instructions, it runs with the purego build tag, and the tests compare the
// assembly with it.
//
// The AES round is constant time: no table lookups and no branches that
// depend on the key or the data, so an attacker sharing the CPU (cache
// timing, branch prediction) learns nothing from it. SubBytes is bitsliced:
// 64 bytes (four blocks) are transposed into eight 64-bit words, one per bit
// position, and the S-box is computed with AND and XOR on those words as the
// inverse in GF(2^8) (x^254) followed by the affine map. ShiftRows and
// MixColumns are shifts and XORs on the columns. One AEGIS update runs all
// its rounds (6 or 8 per lane) through SubBytes together.

// block is a 16-byte AES block as four big-endian column words.
type block [4]uint32

func loadBlock(b []byte) block {
	_ = b[15]
	return block{
		binary.BigEndian.Uint32(b[0:]), binary.BigEndian.Uint32(b[4:]),
		binary.BigEndian.Uint32(b[8:]), binary.BigEndian.Uint32(b[12:]),
	}
}

func (x block) store(b []byte) {
	_ = b[15]
	binary.BigEndian.PutUint32(b[0:], x[0])
	binary.BigEndian.PutUint32(b[4:], x[1])
	binary.BigEndian.PutUint32(b[8:], x[2])
	binary.BigEndian.PutUint32(b[12:], x[3])
}

func xor(x, y block) block { return block{x[0] ^ y[0], x[1] ^ y[1], x[2] ^ y[2], x[3] ^ y[3]} }
func and(x, y block) block { return block{x[0] & y[0], x[1] & y[1], x[2] & y[2], x[3] & y[3]} }

// aesRounds replaces each block x[i] with MixColumns(ShiftRows(SubBytes(x[i]))),
// four blocks at a time.
func aesRounds(x []block) {
	for len(x) >= 4 {
		aesRound4((*[4]block)(x))
		x = x[4:]
	}
	if len(x) > 0 {
		var t [4]block
		copy(t[:], x)
		aesRound4(&t)
		copy(x, t[:])
	}
}

// aesRound4 is aesRounds on four blocks.
func aesRound4(x *[4]block) {
	// ShiftRows first (it commutes with SubBytes): column c takes row r from
	// column c+r. Then two columns per word for the bitsliced SubBytes.
	var w [8]uint64
	for b := range x {
		c := shiftRows(x[b])
		w[2*b] = uint64(c[0])<<32 | uint64(c[1])
		w[2*b+1] = uint64(c[2])<<32 | uint64(c[3])
	}
	subBytes(&w)
	for b := range x {
		x[b] = block{
			mixColumn(uint32(w[2*b] >> 32)), mixColumn(uint32(w[2*b])),
			mixColumn(uint32(w[2*b+1] >> 32)), mixColumn(uint32(w[2*b+1])),
		}
	}
}

func shiftRows(x block) block {
	const r0, r1, r2, r3 = 0xff000000, 0x00ff0000, 0x0000ff00, 0x000000ff
	return block{
		x[0]&r0 | x[1]&r1 | x[2]&r2 | x[3]&r3,
		x[1]&r0 | x[2]&r1 | x[3]&r2 | x[0]&r3,
		x[2]&r0 | x[3]&r1 | x[0]&r2 | x[1]&r3,
		x[3]&r0 | x[0]&r1 | x[1]&r2 | x[2]&r3,
	}
}

// mixColumn multiplies a column (row 0 in the high byte) by the MixColumns
// matrix: row r becomes 2*(a_r ^ a_r+1) ^ a_r+1 ^ a_r+2 ^ a_r+3.
func mixColumn(x uint32) uint32 {
	r1 := bits.RotateLeft32(x, 8) // row r holds a_r+1
	t := x ^ r1
	t = (t&0x7f7f7f7f)<<1 ^ (t>>7&0x01010101)*0x1b // xtime on each byte
	return t ^ r1 ^ bits.RotateLeft32(x, 16) ^ bits.RotateLeft32(x, 24)
}

// gf is 64 elements of GF(2^8) bitsliced: bit k of gf[j] is bit j of element k.
type gf [8]uint64

// subBytes applies the AES S-box to each of the 64 bytes of w.
func subBytes(w *[8]uint64) {
	// Transpose: afterwards w[j] holds bit j of every byte.
	transposeBits(w)
	transposeBytes(w)
	x := gf(*w)
	// x^254 is the inverse (0 for 0): x^2, x^3, x^12, x^15, x^240, x^252,
	// x^254, the powers of two as linear maps.
	var x2, x3, x12, y gf
	gfSquare(&x2, &x)
	gfMul(&x3, &x2, &x)
	gfPow4(&x12, &x3)
	gfMul(&y, &x12, &x3)
	gfPow16(&x, &y)
	gfMul(&y, &x, &x12)
	gfMul(&y, &y, &x2)
	// Affine map: bit i ^= bits i+4, i+5, i+6, i+7 (mod 8), then ^ 0x63.
	for i := range 8 {
		w[i] = y[i] ^ y[(i+4)%8] ^ y[(i+5)%8] ^ y[(i+6)%8] ^ y[(i+7)%8]
	}
	w[0], w[1], w[5], w[6] = ^w[0], ^w[1], ^w[5], ^w[6]
	// Back: the inverse of the transposition, the steps in reverse order.
	transposeBytes(w)
	transposeBits(w)
}

// transposeBits transposes each word's 8x8 bit matrix (bit c of byte r
// becomes bit r of byte c).
func transposeBits(w *[8]uint64) {
	for i, x := range w {
		t := (x ^ x>>7) & 0x00aa00aa00aa00aa
		x ^= t ^ t<<7
		t = (x ^ x>>14) & 0x0000cccc0000cccc
		x ^= t ^ t<<14
		t = (x ^ x>>28) & 0x00000000f0f0f0f0
		w[i] = x ^ t ^ t<<28
	}
}

// transposeBytes transposes the 8x8 byte matrix of the eight words (byte k of
// word i becomes byte i of word k), swapping ever larger blocks.
func transposeBytes(w *[8]uint64) {
	for i := 0; i < 8; i += 2 {
		t := (w[i]>>8 ^ w[i+1]) & 0x00ff00ff00ff00ff
		w[i+1] ^= t
		w[i] ^= t << 8
	}
	for _, i := range [4]int{0, 1, 4, 5} {
		t := (w[i]>>16 ^ w[i+2]) & 0x0000ffff0000ffff
		w[i+2] ^= t
		w[i] ^= t << 16
	}
	for i := range 4 {
		t := (w[i]>>32 ^ w[i+4]) & 0x00000000ffffffff
		w[i+4] ^= t
		w[i] ^= t << 32
	}
}

// gfSquare sets r = a^2 (r must not be a): squaring is linear in GF(2^8),
// so each output bit is an XOR of input bits.
func gfSquare(r, a *gf) {
	r[0] = a[0] ^ a[4] ^ a[6]
	r[1] = a[4] ^ a[6] ^ a[7]
	r[2] = a[1] ^ a[5]
	r[3] = a[4] ^ a[5] ^ a[6] ^ a[7]
	r[4] = a[2] ^ a[4] ^ a[7]
	r[5] = a[5] ^ a[6]
	r[6] = a[3] ^ a[5]
	r[7] = a[6] ^ a[7]
}

// gfPow4 sets r = a^4 (two squarings as one linear map; r must not be a).
func gfPow4(r, a *gf) {
	r[0] = a[0] ^ a[2] ^ a[3] ^ a[5] ^ a[6] ^ a[7]
	r[1] = a[2] ^ a[3] ^ a[4] ^ a[5] ^ a[6]
	r[2] = a[4] ^ a[5] ^ a[7]
	r[3] = a[2] ^ a[3] ^ a[4]
	r[4] = a[1] ^ a[2] ^ a[4] ^ a[5] ^ a[6]
	r[5] = a[3] ^ a[6]
	r[6] = a[4] ^ a[7]
	r[7] = a[3] ^ a[5] ^ a[6] ^ a[7]
}

// gfPow16 sets r = a^16 (four squarings as one linear map; r must not be a).
func gfPow16(r, a *gf) {
	r[0] = a[0] ^ a[4] ^ a[5] ^ a[6]
	r[1] = a[1]
	r[2] = a[1] ^ a[2] ^ a[4] ^ a[6] ^ a[7]
	r[3] = a[1] ^ a[3] ^ a[4] ^ a[6] ^ a[7]
	r[4] = a[1] ^ a[5] ^ a[6]
	r[5] = a[2] ^ a[3] ^ a[7]
	r[6] = a[1] ^ a[2] ^ a[3] ^ a[4] ^ a[7]
	r[7] = a[2] ^ a[3] ^ a[5]
}

// gfMul sets r = a*b modulo the AES polynomial x^8 + x^4 + x^3 + x + 1: the
// schoolbook product's bits p8..p14 fold back onto p0..p7 as
// x^8 = x^4 + x^3 + x + 1 dictates. r may be a or b.
func gfMul(r, a, b *gf) {
	a0, a1, a2, a3, a4, a5, a6, a7 := a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]
	b0, b1, b2, b3, b4, b5, b6, b7 := b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]
	p0 := a0 & b0
	p1 := a0&b1 ^ a1&b0
	p2 := a0&b2 ^ a1&b1 ^ a2&b0
	p3 := a0&b3 ^ a1&b2 ^ a2&b1 ^ a3&b0
	p4 := a0&b4 ^ a1&b3 ^ a2&b2 ^ a3&b1 ^ a4&b0
	p5 := a0&b5 ^ a1&b4 ^ a2&b3 ^ a3&b2 ^ a4&b1 ^ a5&b0
	p6 := a0&b6 ^ a1&b5 ^ a2&b4 ^ a3&b3 ^ a4&b2 ^ a5&b1 ^ a6&b0
	p7 := a0&b7 ^ a1&b6 ^ a2&b5 ^ a3&b4 ^ a4&b3 ^ a5&b2 ^ a6&b1 ^ a7&b0
	p8 := a1&b7 ^ a2&b6 ^ a3&b5 ^ a4&b4 ^ a5&b3 ^ a6&b2 ^ a7&b1
	p9 := a2&b7 ^ a3&b6 ^ a4&b5 ^ a5&b4 ^ a6&b3 ^ a7&b2
	p10 := a3&b7 ^ a4&b6 ^ a5&b5 ^ a6&b4 ^ a7&b3
	p11 := a4&b7 ^ a5&b6 ^ a6&b5 ^ a7&b4
	p12 := a5&b7 ^ a6&b6 ^ a7&b5
	p13 := a6&b7 ^ a7&b6
	p14 := a7 & b7
	r[0] = p0 ^ p8 ^ p12 ^ p13
	r[1] = p1 ^ p8 ^ p9 ^ p12 ^ p14
	r[2] = p2 ^ p9 ^ p10 ^ p13
	r[3] = p3 ^ p8 ^ p10 ^ p11 ^ p12 ^ p13 ^ p14
	r[4] = p4 ^ p8 ^ p9 ^ p11 ^ p14
	r[5] = p5 ^ p9 ^ p10 ^ p12
	r[6] = p6 ^ p10 ^ p11 ^ p13
	r[7] = p7 ^ p11 ^ p12 ^ p14
}

// The draft's constants: C0 is the Fibonacci sequence modulo 256, C1 follows it.
var (
	c0 = block{0x00010102, 0x0305080d, 0x15223759, 0x90e97962}
	c1 = block{0xdb3d1855, 0x6dc22ff1, 0x20113142, 0x73b528dd}
)

const maxLanes = 4

// vec is one state element: one block per lane.
type vec [maxLanes]block

// genericState is the AEGIS state of any variant: s[i][j] is block i of lane j
// (V[i,j] in the draft).
type genericState struct {
	v *variant
	s [8]vec
}

// update is the state update function on every lane; m1 is ignored by the
// 256 family. Each new block is AESRound(old previous block, old block), with
// the message XORed into the round key of blocks 0 (and 4); all the rounds go
// through the AES code at once.
func (st *genericState) update(m0, m1 *vec) {
	v, s := st.v, &st.s
	n := v.stateBlocks()
	var x [8 * maxLanes]block
	c := 0
	for j := range v.lanes {
		for i := range n {
			x[c] = s[(i+n-1)%n][j]
			c++
		}
	}
	aesRounds(x[:c])
	c = 0
	for j := range v.lanes {
		for i := range n {
			rk := s[i][j]
			switch {
			case i == 0:
				rk = xor(rk, m0[j])
			case i == 4 && !v.wide:
				rk = xor(rk, m1[j])
			}
			s[i][j] = xor(x[c], rk)
			c++
		}
	}
}

// laneContext is ctx_j = Byte(j) || Byte(D-1) || zeros, which makes the lanes'
// states differ; it is zero for the one-lane variants.
func laneContext(j, lanes int) block {
	return block{uint32(j)<<24 | uint32(lanes-1)<<16}
}

func repeat(b block) vec { return vec{b, b, b, b} }

func (st *genericState) init(key, nonce []byte) {
	v := st.v
	s := &st.s
	var ctx vec
	for j := range v.lanes {
		ctx[j] = laneContext(j, v.lanes)
	}
	if v.wide {
		k0, k1 := loadBlock(key[:16]), loadBlock(key[16:32])
		n0, n1 := loadBlock(nonce[:16]), loadBlock(nonce[16:32])
		for j := range v.lanes {
			s[0][j] = xor(k0, n0)
			s[1][j] = xor(k1, n1)
			s[2][j] = c1
			s[3][j] = c0
			s[4][j] = xor(k0, c0)
			s[5][j] = xor(k1, c1)
		}
		msgs := [4]vec{repeat(k0), repeat(k1), repeat(xor(k0, n0)), repeat(xor(k1, n1))}
		for range 4 {
			for i := range msgs {
				for j := range v.lanes {
					s[3][j] = xor(s[3][j], ctx[j])
					s[5][j] = xor(s[5][j], ctx[j])
				}
				st.update(&msgs[i], nil)
			}
		}
		return
	}
	k, n := loadBlock(key[:16]), loadBlock(nonce[:16])
	for j := range v.lanes {
		s[0][j] = xor(k, n)
		s[1][j] = c1
		s[2][j] = c0
		s[3][j] = c1
		s[4][j] = xor(k, n)
		s[5][j] = xor(k, c0)
		s[6][j] = xor(k, c1)
		s[7][j] = xor(k, c0)
	}
	nv, kv := repeat(n), repeat(k)
	for range 10 {
		for j := range v.lanes {
			s[3][j] = xor(s[3][j], ctx[j])
			s[7][j] = xor(s[7][j], ctx[j])
		}
		st.update(&nv, &kv)
	}
}

// loadRate splits one rate-sized chunk into the update's message vectors: the
// first 16*lanes bytes are m0 (lane j takes bytes 16j..16j+15), the next
// 16*lanes bytes are m1 (128 family only).
func (st *genericState) loadRate(chunk []byte) (m0, m1 vec) {
	d := st.v.lanes
	for j := range d {
		m0[j] = loadBlock(chunk[16*j:])
		if !st.v.wide {
			m1[j] = loadBlock(chunk[16*(d+j):])
		}
	}
	return
}

func (st *genericState) storeRate(chunk []byte, m0, m1 *vec) {
	d := st.v.lanes
	for j := range d {
		m0[j].store(chunk[16*j:])
		if !st.v.wide {
			m1[j].store(chunk[16*(d+j):])
		}
	}
}

// keystream returns the vectors XORed into the message blocks.
func (st *genericState) keystream() (z0, z1 vec) {
	s := &st.s
	for j := range st.v.lanes {
		if st.v.wide {
			z0[j] = xor(xor(s[1][j], s[4][j]), xor(s[5][j], and(s[2][j], s[3][j])))
			continue
		}
		z0[j] = xor(xor(s[6][j], s[1][j]), and(s[2][j], s[3][j]))
		z1[j] = xor(xor(s[2][j], s[5][j]), and(s[6][j], s[7][j]))
	}
	return
}

func (st *genericState) absorb(chunk []byte) {
	m0, m1 := st.loadRate(chunk)
	st.update(&m0, &m1)
}

// enc encrypts one full chunk; dst and src may be the same.
func (st *genericState) enc(dst, src []byte) {
	z0, z1 := st.keystream()
	m0, m1 := st.loadRate(src)
	c0, c1 := m0, m1
	for j := range st.v.lanes {
		c0[j] = xor(c0[j], z0[j])
		c1[j] = xor(c1[j], z1[j])
	}
	st.storeRate(dst, &c0, &c1)
	st.update(&m0, &m1)
}

// dec decrypts one chunk of rate bytes; for the last, partial chunk src is
// zero padded and only the first n bytes are message: the state absorbs the
// plaintext zero padded, so the keystream past n must be cleared first.
func (st *genericState) dec(dst, src []byte, n int) {
	z0, z1 := st.keystream()
	m0, m1 := st.loadRate(src)
	for j := range st.v.lanes {
		m0[j] = xor(m0[j], z0[j])
		m1[j] = xor(m1[j], z1[j])
	}
	var buf [128]byte
	st.storeRate(buf[:], &m0, &m1)
	clear(buf[n:])
	copy(dst, buf[:n])
	st.absorb(buf[:])
}

// lengthBlock is LE64(adLen*8) || LE64(msgLen*8) as a block.
func lengthBlock(adLen, msgLen int) block {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[0:], uint64(adLen)*8)
	binary.LittleEndian.PutUint64(b[8:], uint64(msgLen)*8)
	return loadBlock(b[:])
}

func (st *genericState) finalize(tag []byte, adLen, msgLen int) {
	v := st.v
	s := &st.s
	u := lengthBlock(adLen, msgLen)
	var t vec
	for j := range v.lanes {
		if v.wide {
			t[j] = xor(s[3][j], u)
		} else {
			t[j] = xor(s[2][j], u)
		}
	}
	for range 7 {
		st.update(&t, &t)
	}
	var t0, t1 block
	n := v.stateBlocks()
	for j := range v.lanes {
		if len(tag) == TagSize16 {
			for i := range n - 1 + btoi(v.wide) {
				t0 = xor(t0, s[i][j])
			}
			continue
		}
		for i := range n / 2 {
			t0 = xor(t0, s[i][j])
			t1 = xor(t1, s[n/2+i][j])
		}
	}
	t0.store(tag)
	if len(tag) == TagSize32 {
		t1.store(tag[16:])
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sealGeneric writes the ciphertext and tag of plaintext into out
// (len(plaintext)+tagSize bytes; out may start exactly at plaintext).
func sealGeneric(v *variant, out, key, nonce, plaintext, ad []byte, tagSize int) {
	st := genericState{v: v}
	st.init(key, nonce)
	rate := v.rate()
	st.absorbAD(ad)
	n := len(plaintext) - len(plaintext)%rate
	for i := 0; i < n; i += rate {
		st.enc(out[i:i+rate], plaintext[i:i+rate])
	}
	if r := len(plaintext) - n; r > 0 {
		var buf [128]byte
		copy(buf[:], plaintext[n:])
		st.enc(buf[:rate], buf[:rate])
		copy(out[n:], buf[:r])
	}
	st.finalize(out[len(plaintext):len(plaintext)+tagSize], len(ad), len(plaintext))
}

func (st *genericState) absorbAD(ad []byte) {
	rate := st.v.rate()
	for len(ad) >= rate {
		st.absorb(ad[:rate])
		ad = ad[rate:]
	}
	if len(ad) > 0 {
		var buf [128]byte
		copy(buf[:], ad)
		st.absorb(buf[:rate])
	}
}

// openGeneric decrypts ciphertext||tag into out and reports whether the tag
// is valid; on failure out is zeroed.
func openGeneric(v *variant, out, key, nonce, ciphertext, ad []byte, tagSize int) bool {
	st := genericState{v: v}
	st.init(key, nonce)
	rate := v.rate()
	st.absorbAD(ad)
	ct, tag := ciphertext[:len(ciphertext)-tagSize], ciphertext[len(ciphertext)-tagSize:]
	n := len(ct) - len(ct)%rate
	for i := 0; i < n; i += rate {
		st.dec(out[i:i+rate], ct[i:i+rate], rate)
	}
	if r := len(ct) - n; r > 0 {
		var buf [128]byte
		copy(buf[:], ct[n:])
		st.dec(out[n:], buf[:rate], r)
	}
	var want [32]byte
	st.finalize(want[:tagSize], len(ad), len(ct))
	return verifyTag(out[:len(ct)], want[:tagSize], tag)
}
