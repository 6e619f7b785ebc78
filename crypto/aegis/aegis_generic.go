package aegis

import (
	"encoding/binary"
	"math/bits"
)

// This file is the portable implementation: the AES round in software and the
// AEGIS state machine for any number of lanes. It is used when the CPU has no
// AES instructions, with the purego build tag, and by the tests as the
// reference the assembly is compared with.
//
// The AES round uses lookup tables (the classic T-table formulation). It is
// fast and simple but not constant time: an attacker sharing the CPU cache
// could learn key-dependent state through cache timing. It is the only path
// on architectures without assembly kernels (arm64 among them) and on amd64
// CPUs without AES-NI and AVX, not merely a fallback for rare machines.

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

// sbox and te are the AES S-box and the combined SubBytes+MixColumns tables
// (te[0][b] is the column produced by byte b in row 0, te[r] its rotation for
// row r), computed once at start-up from the field arithmetic rather than
// typed in.
var (
	sbox [256]byte
	te   [4][256]uint32
)

func init() {
	// Walk the multiplicative group with generator 3 to build log/exp tables,
	// then invert and apply the affine map.
	var exp, log [256]byte
	x := byte(1)
	for i := range 255 {
		exp[i] = x
		log[x] = byte(i)
		x ^= xtime(x) // x *= 3
	}
	for i := range 256 {
		var inv byte
		if i != 0 {
			inv = exp[(255-int(log[i]))%255]
		}
		s := inv ^ bits.RotateLeft8(inv, 1) ^ bits.RotateLeft8(inv, 2) ^
			bits.RotateLeft8(inv, 3) ^ bits.RotateLeft8(inv, 4) ^ 0x63
		sbox[i] = s
		s2 := xtime(s)
		col := uint32(s2)<<24 | uint32(s)<<16 | uint32(s)<<8 | uint32(s2^s)
		for r := range 4 {
			te[r][i] = bits.RotateLeft32(col, -8*r)
		}
	}
}

func xtime(x byte) byte {
	return x<<1 ^ (x>>7)*0x1b
}

// aesRound is one AES encryption round without the key schedule:
// MixColumns(ShiftRows(SubBytes(in))) ^ rk, the AESENC instruction.
func aesRound(in, rk block) block {
	t0, t1, t2, t3 := &te[0], &te[1], &te[2], &te[3]
	return block{
		t0[in[0]>>24] ^ t1[in[1]>>16&0xff] ^ t2[in[2]>>8&0xff] ^ t3[in[3]&0xff] ^ rk[0],
		t0[in[1]>>24] ^ t1[in[2]>>16&0xff] ^ t2[in[3]>>8&0xff] ^ t3[in[0]&0xff] ^ rk[1],
		t0[in[2]>>24] ^ t1[in[3]>>16&0xff] ^ t2[in[0]>>8&0xff] ^ t3[in[1]&0xff] ^ rk[2],
		t0[in[3]>>24] ^ t1[in[0]>>16&0xff] ^ t2[in[1]>>8&0xff] ^ t3[in[2]&0xff] ^ rk[3],
	}
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

// update is the state update function, run on each lane; m1 is ignored by the
// 256 family.
func (st *genericState) update(m0, m1 *vec) {
	if st.v.wide {
		for j := range st.v.lanes {
			update256(&st.s, j, m0[j])
		}
		return
	}
	for j := range st.v.lanes {
		update128(&st.s, j, m0[j], m1[j])
	}
}

func update256(s *[8]vec, j int, m block) {
	s0, s1, s2, s3, s4, s5 := s[0][j], s[1][j], s[2][j], s[3][j], s[4][j], s[5][j]
	s[0][j] = aesRound(s5, xor(s0, m))
	s[1][j] = aesRound(s0, s1)
	s[2][j] = aesRound(s1, s2)
	s[3][j] = aesRound(s2, s3)
	s[4][j] = aesRound(s3, s4)
	s[5][j] = aesRound(s4, s5)
}

func update128(s *[8]vec, j int, m0, m1 block) {
	s0, s1, s2, s3, s4, s5, s6, s7 := s[0][j], s[1][j], s[2][j], s[3][j], s[4][j], s[5][j], s[6][j], s[7][j]
	s[0][j] = aesRound(s7, xor(s0, m0))
	s[1][j] = aesRound(s0, s1)
	s[2][j] = aesRound(s1, s2)
	s[3][j] = aesRound(s2, s3)
	s[4][j] = aesRound(s3, xor(s4, m1))
	s[5][j] = aesRound(s4, s5)
	s[6][j] = aesRound(s5, s6)
	s[7][j] = aesRound(s6, s7)
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
