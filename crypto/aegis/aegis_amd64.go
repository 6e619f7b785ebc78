//go:build amd64 && !purego

package aegis

import (
	"crypto/subtle"
	"encoding/binary"

	"golang.org/x/sys/cpu"
)

// Feature flags, set once at start-up. The X kernels use the VEX forms of
// AES-NI (AES + AVX); the Y kernels need VAES on 256-bit registers (AVX2 +
// VAES); the Z kernels need AVX-512F and VAES. With AVX-512VL, the X and Y
// kernels use three-input logic (VPTERNLOGQ) for the keystream, which
// shortens the decryption chain.
var (
	useAESNI   = cpu.X86.HasAES && cpu.X86.HasAVX
	useVAES    = useAESNI && cpu.X86.HasAVX2 && cpuidECX7()&(1<<9) != 0
	useVAES512 = useVAES && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VAES
	useTern    = useAESNI && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL
)

// kernel names an assembly kernel set: family (128, 256) and register width
// (X: one lane, Y: two lanes, Z: four lanes).
type kernel uint8

const (
	kNone kernel = iota
	k128X
	k128Y
	k128Z
	k256X
	k256Y
	k256Z
	// Three-input-logic flavors of the X and Y kernels; they only have
	// their own enc and dec.
	k128XT
	k128YT
	k256XT
	k256YT
)

// plain maps a three-input-logic kernel to the kernel it shares init,
// absorb, decLast and final with.
func (k kernel) plain() kernel {
	switch k {
	case k128XT:
		return k128X
	case k128YT:
		return k128Y
	case k256XT:
		return k256X
	case k256YT:
		return k256Y
	}
	return k
}

// width is the number of bytes of one state vector in the kernel's registers.
func (k kernel) width() int {
	switch k.plain() {
	case k128X, k256X:
		return 16
	case k128Y, k256Y:
		return 32
	}
	return 64
}

// features are the CPU features a key may use: all of the CPU's unless a
// test restricted them.
type features struct {
	aesni, vaes, vaes512, tern bool
}

// kernelFor picks the widest kernel the CPU supports that is no wider than
// the variant. A narrower kernel runs the variant's lanes in groups: the
// lanes of AEGIS-128X/256X never interact before the tag, so AEGIS-256X2
// without VAES is two AES-NI passes over interleaved data, and its tag the
// XOR of the passes' tags.
func kernelFor(v *variant, f features) (k kernel, groups int) {
	switch {
	case v.lanes >= 4 && f.vaes512:
		k = k128Z
	case v.lanes >= 2 && f.vaes:
		k = k128Y
	case f.aesni:
		k = k128X
	default:
		return kNone, 0
	}
	if v.wide {
		k += k256X - k128X
	}
	if f.tern {
		switch k {
		case k128X:
			k = k128XT
		case k128Y:
			k = k128YT
		case k256X:
			k = k256XT
		case k256Y:
			k = k256YT
		}
	}
	return k, v.lanes * 16 / k.width()
}

var cpuFeatures = features{useAESNI, useVAES, useVAES512, useTern}

// hasAsm reports whether the variant runs on an assembly path.
func hasAsm(v *variant) bool {
	k, _ := kernelFor(v, cpuFeatures)
	return k != kNone
}

// asmKey is the per-key data of the kernels: seven 64-byte vectors, each the
// 16-byte value repeated for four lanes, at the offsets of _asm/gen.go:
// k0 (the key, or its first half), k1 (second half), k0^C0, k1^C1 (for the
// 128 family key^C0, key^C1), C0, C1, and the lane contexts. A lane group
// starting at lane l reads the vectors from byte 16*l on.
type asmKey struct {
	k      kernel
	groups int
	f      features
	c      [7 * 64]byte
}

var (
	c0Bytes = [16]byte{0x00, 0x01, 0x01, 0x02, 0x03, 0x05, 0x08, 0x0d, 0x15, 0x22, 0x37, 0x59, 0x90, 0xe9, 0x79, 0x62}
	c1Bytes = [16]byte{0xdb, 0x3d, 0x18, 0x55, 0x6d, 0xc2, 0x2f, 0xf1, 0x20, 0x11, 0x31, 0x42, 0x73, 0xb5, 0x28, 0xdd}
)

// testOnlyLimit, when set by a test before New*, restricts the kernels to
// what an older CPU has, so that the narrower kernels run here too.
var testOnlyLimit struct {
	set bool
	features
}

func (ak *asmKey) setup(v *variant, key []byte) {
	ak.f = cpuFeatures
	if l := testOnlyLimit; l.set {
		ak.f = features{ak.f.aesni && l.aesni, ak.f.vaes && l.vaes, ak.f.vaes512 && l.vaes512, ak.f.tern && l.tern}
	}
	ak.k, ak.groups = kernelFor(v, ak.f)
	if ak.k == kNone {
		return
	}
	k0, k1 := key[:16], key[:16]
	if v.wide {
		k1 = key[16:32]
	}
	for l := range 4 {
		for i := range 16 {
			o := 16*l + i
			ak.c[0*64+o] = k0[i]
			ak.c[1*64+o] = k1[i]
			ak.c[2*64+o] = k0[i] ^ c0Bytes[i]
			ak.c[3*64+o] = k1[i] ^ c1Bytes[i]
			ak.c[4*64+o] = c0Bytes[i]
			ak.c[5*64+o] = c1Bytes[i]
		}
		// ctx_j = Byte(j) || Byte(D-1) || zeros, repeated every D lanes.
		ak.c[6*64+16*l] = byte(l % v.lanes)
		ak.c[6*64+16*l+1] = byte(v.lanes - 1)
	}
}

func (ak *asmKey) wipe() { clear(ak.c[:]) }

// maskTable supplies decLast's mask: &maskTable[128-r] is r bytes of 0xff
// followed by zeros.
var maskTable = func() (t [256]byte) {
	for i := range 128 {
		t[i] = 0xff
	}
	return
}()

// state holds any kernel's state in memory: up to eight vectors of 64 bytes.
type state [8 * 64]byte

func kInit(k kernel, s *state, c, nonce *byte) {
	switch k.plain() {
	case k128X:
		init128X(&s[0], c, nonce)
	case k128Y:
		init128Y(&s[0], c, nonce)
	case k128Z:
		init128Z(&s[0], c, nonce)
	case k256X:
		init256X(&s[0], c, nonce)
	case k256Y:
		init256Y(&s[0], c, nonce)
	case k256Z:
		init256Z(&s[0], c, nonce)
	}
}

func kAbsorb(k kernel, s *state, src *byte, n, stride int) {
	switch k.plain() {
	case k128X:
		absorb128X(&s[0], src, n, stride)
	case k128Y:
		absorb128Y(&s[0], src, n, stride)
	case k128Z:
		absorb128Z(&s[0], src, n, stride)
	case k256X:
		absorb256X(&s[0], src, n, stride)
	case k256Y:
		absorb256Y(&s[0], src, n, stride)
	case k256Z:
		absorb256Z(&s[0], src, n, stride)
	}
}

func kEnc(k kernel, s *state, dst, src *byte, n, stride int) {
	switch k {
	case k128X:
		enc128X(&s[0], dst, src, n, stride)
	case k128Y:
		enc128Y(&s[0], dst, src, n, stride)
	case k128Z:
		enc128Z(&s[0], dst, src, n, stride)
	case k256X:
		enc256X(&s[0], dst, src, n, stride)
	case k256Y:
		enc256Y(&s[0], dst, src, n, stride)
	case k256Z:
		enc256Z(&s[0], dst, src, n, stride)
	case k128XT:
		enc128XT(&s[0], dst, src, n, stride)
	case k128YT:
		enc128YT(&s[0], dst, src, n, stride)
	case k256XT:
		enc256XT(&s[0], dst, src, n, stride)
	case k256YT:
		enc256YT(&s[0], dst, src, n, stride)
	}
}

func kDec(k kernel, s *state, dst, src *byte, n, stride int) {
	switch k {
	case k128X:
		dec128X(&s[0], dst, src, n, stride)
	case k128Y:
		dec128Y(&s[0], dst, src, n, stride)
	case k128Z:
		dec128Z(&s[0], dst, src, n, stride)
	case k256X:
		dec256X(&s[0], dst, src, n, stride)
	case k256Y:
		dec256Y(&s[0], dst, src, n, stride)
	case k256Z:
		dec256Z(&s[0], dst, src, n, stride)
	case k128XT:
		dec128XT(&s[0], dst, src, n, stride)
	case k128YT:
		dec128YT(&s[0], dst, src, n, stride)
	case k256XT:
		dec256XT(&s[0], dst, src, n, stride)
	case k256YT:
		dec256YT(&s[0], dst, src, n, stride)
	}
}

func kDecLast(k kernel, s *state, buf, mask *byte, stride int) {
	switch k.plain() {
	case k128X:
		decLast128X(&s[0], buf, mask, stride)
	case k128Y:
		decLast128Y(&s[0], buf, mask, stride)
	case k128Z:
		decLast128Z(&s[0], buf, mask, stride)
	case k256X:
		decLast256X(&s[0], buf, mask, stride)
	case k256Y:
		decLast256Y(&s[0], buf, mask, stride)
	case k256Z:
		decLast256Z(&s[0], buf, mask, stride)
	}
}

func kFinal(k kernel, s *state, tag *byte, adLen, msgLen, tagSize int) {
	var u [16]byte
	binary.LittleEndian.PutUint64(u[0:], uint64(adLen)*8)
	binary.LittleEndian.PutUint64(u[8:], uint64(msgLen)*8)
	switch k.plain() {
	case k128X:
		final128X(&s[0], tag, &u, tagSize)
	case k128Y:
		final128Y(&s[0], tag, &u, tagSize)
	case k128Z:
		final128Z(&s[0], tag, &u, tagSize)
	case k256X:
		final256X(&s[0], tag, &u, tagSize)
	case k256Y:
		final256Y(&s[0], tag, &u, tagSize)
	case k256Z:
		final256Z(&s[0], tag, &u, tagSize)
	}
}

// start initializes the state of lane group g (lanes starting at byte off of
// each message vector) and absorbs the associated data.
func (a *aead) start(s *state, off int, nonce, ad []byte) {
	k, rate := a.impl.k, a.v.rate()
	kInit(k, s, &a.impl.c[off], &nonce[0])
	n := len(ad) / rate
	if n > 0 {
		kAbsorb(k, s, &ad[off], n, rate)
	}
	if r := len(ad) - n*rate; r > 0 {
		var buf [128]byte
		copy(buf[:], ad[n*rate:])
		kAbsorb(k, s, &buf[off], 1, rate)
	}
}

func (a *aead) seal(out, nonce, plaintext, ad []byte) {
	if a.impl.k == kNone {
		sealGeneric(a.v, out, a.key[:a.v.keySize()], nonce, plaintext, ad, a.tagSize)
		return
	}
	if a.impl.groups == 1 {
		var s state
		a.start(&s, 0, nonce, ad)
		a.sealRest(&s, out, plaintext, 0, len(ad))
		return
	}
	// Lane groups: each group makes one pass over the interleaved data.
	k, rate := a.impl.k, a.v.rate()
	full := len(plaintext) / rate * rate
	var last [128]byte // zero-padded last partial chunk, encrypted in place
	copy(last[:], plaintext[full:])
	var tag, t [32]byte
	for g := range a.impl.groups {
		off := g * k.width()
		var s state
		a.start(&s, off, nonce, ad)
		if full > 0 {
			kEnc(k, &s, &out[off], &plaintext[off], full/rate, rate)
		}
		if full < len(plaintext) {
			kEnc(k, &s, &last[off], &last[off], 1, rate)
		}
		kFinal(k, &s, &t[0], len(ad), len(plaintext), a.tagSize)
		subtle.XORBytes(tag[:], tag[:], t[:])
	}
	copy(out[full:], last[:len(plaintext)-full])
	copy(out[len(plaintext):], tag[:a.tagSize])
}

// sealRest encrypts plaintext[done:] (done is a multiple of the rate) with a
// single-group state and writes the tag after the ciphertext.
func (a *aead) sealRest(s *state, out, plaintext []byte, done, adLen int) {
	k, rate := a.impl.k, a.v.rate()
	n := (len(plaintext) - done) / rate
	if n > 0 {
		kEnc(k, s, &out[done], &plaintext[done], n, rate)
		done += n * rate
	}
	if r := len(plaintext) - done; r > 0 {
		var buf [128]byte
		copy(buf[:], plaintext[done:])
		kEnc(k, s, &buf[0], &buf[0], 1, rate)
		copy(out[done:], buf[:r])
	}
	kFinal(k, s, &out[len(plaintext)], adLen, len(plaintext), a.tagSize)
}

func (a *aead) open(out, nonce, ciphertext, ad []byte) bool {
	if a.impl.k == kNone {
		return openGeneric(a.v, out, a.key[:a.v.keySize()], nonce, ciphertext, ad, a.tagSize)
	}
	if a.impl.groups == 1 {
		var s state
		a.start(&s, 0, nonce, ad)
		return a.openRest(&s, out, ciphertext, 0, len(ad))
	}
	k, rate := a.impl.k, a.v.rate()
	ctLen := len(ciphertext) - a.tagSize
	full := ctLen / rate * rate
	r := ctLen - full
	var last [128]byte
	copy(last[:], ciphertext[full:ctLen])
	var tag, t [32]byte
	for g := range a.impl.groups {
		off := g * k.width()
		var s state
		a.start(&s, off, nonce, ad)
		if full > 0 {
			kDec(k, &s, &out[off], &ciphertext[off], full/rate, rate)
		}
		if r > 0 {
			kDecLast(k, &s, &last[off], &maskTable[128-r+off], rate)
		}
		kFinal(k, &s, &t[0], len(ad), ctLen, a.tagSize)
		subtle.XORBytes(tag[:], tag[:], t[:])
	}
	copy(out[full:], last[:r])
	return verifyTag(out[:ctLen], tag[:a.tagSize], ciphertext[ctLen:])
}

// openRest decrypts ciphertext[done:] into out with a single-group state,
// checks the tag and zeroes all of out on failure.
func (a *aead) openRest(s *state, out, ciphertext []byte, done, adLen int) bool {
	k, rate := a.impl.k, a.v.rate()
	ctLen := len(ciphertext) - a.tagSize
	n := (ctLen - done) / rate
	if n > 0 {
		kDec(k, s, &out[done], &ciphertext[done], n, rate)
		done += n * rate
	}
	if r := ctLen - done; r > 0 {
		var buf [128]byte
		copy(buf[:], ciphertext[done:ctLen])
		kDecLast(k, s, &buf[0], &maskTable[128-r], rate)
		copy(out[done:], buf[:r])
	}
	var want [32]byte
	kFinal(k, s, &want[0], adLen, ctLen, a.tagSize)
	return verifyTag(out[:ctLen], want[:a.tagSize], ciphertext[ctLen:])
}

// Batches run two messages at a time through the pair kernels where that
// pays: AEGIS-128L and AEGIS-256 pairs in Y registers (VAES), AEGIS-128X2
// and AEGIS-256X2 pairs in Z registers (AVX-512). One message is bound by the AESENC latency
// of its state chain; a pair issues twice the independent AESENC work per
// step. The two messages share the initialization, the associated data (which
// must have the same length) and the full chunks both have; then the state is
// split and each message finishes alone on the single-message kernel. The X4
// variants already fill the AES units with one message, so they have no pair
// kernels. AEGIS-256X2 also has a quad kernel that runs two pairs at once, for
// CPUs that start two 512-bit AES rounds per cycle.

// pairing describes the pair kernel of a variant.
type pairing struct {
	kind   kernel // the single-message kernel each half continues on
	rate   int    // bytes per message per update
	half   int    // bytes per message in one paired register
	blocks int    // state vectors
	quad   bool   // a quad kernel runs two pairs at once
}

func (a *aead) pairing() (pairing, bool) {
	switch {
	case a.v == v128L && a.impl.f.vaes && a.impl.k.plain() == k128X:
		return pairing{a.impl.k, 32, 16, 8, false}, true
	case a.v == v256 && a.impl.f.vaes && a.impl.k.plain() == k256X:
		return pairing{a.impl.k, 16, 16, 6, false}, true
	case a.v == v128X2 && a.impl.f.vaes512 && a.impl.k.plain() == k128Y:
		return pairing{a.impl.k, 64, 32, 8, false}, true
	case a.v == v256X2 && a.impl.f.vaes512 && a.impl.k.plain() == k256Y:
		return pairing{a.impl.k, 32, 32, 6, a.impl.f.tern}, true
	}
	return pairing{}, false
}

func pInit(p pairing, s *state, c *[7 * 64]byte, nonceA, nonceB *byte) {
	switch p.kind.plain() {
	case k128X:
		init128YP(&s[0], &c[0], nonceA, nonceB)
	case k256X:
		init256YP(&s[0], &c[0], nonceA, nonceB)
	case k128Y:
		init128ZP(&s[0], &c[0], nonceA, nonceB)
	case k256Y:
		init256ZP(&s[0], &c[0], nonceA, nonceB)
	}
}

func pAbsorb(p pairing, s *state, srcA, srcB *byte, n int) {
	switch p.kind.plain() {
	case k128X:
		absorb128YP(&s[0], srcA, srcB, n)
	case k256X:
		absorb256YP(&s[0], srcA, srcB, n)
	case k128Y:
		absorb128ZP(&s[0], srcA, srcB, n)
	case k256Y:
		absorb256ZP(&s[0], srcA, srcB, n)
	}
}

func pEnc(p pairing, s *state, dstA, srcA, dstB, srcB *byte, n int) {
	switch p.kind {
	case k128X:
		enc128YP(&s[0], dstA, srcA, dstB, srcB, n)
	case k256X:
		enc256YP(&s[0], dstA, srcA, dstB, srcB, n)
	case k128Y, k128YT:
		enc128ZP(&s[0], dstA, srcA, dstB, srcB, n)
	case k256Y, k256YT:
		enc256ZP(&s[0], dstA, srcA, dstB, srcB, n)
	case k128XT:
		enc128YTP(&s[0], dstA, srcA, dstB, srcB, n)
	case k256XT:
		enc256YTP(&s[0], dstA, srcA, dstB, srcB, n)
	}
}

func pDec(p pairing, s *state, dstA, srcA, dstB, srcB *byte, n int) {
	switch p.kind {
	case k128X:
		dec128YP(&s[0], dstA, srcA, dstB, srcB, n)
	case k256X:
		dec256YP(&s[0], dstA, srcA, dstB, srcB, n)
	case k128Y, k128YT:
		dec128ZP(&s[0], dstA, srcA, dstB, srcB, n)
	case k256Y, k256YT:
		dec256ZP(&s[0], dstA, srcA, dstB, srcB, n)
	case k128XT:
		dec128YTP(&s[0], dstA, srcA, dstB, srcB, n)
	case k256XT:
		dec256YTP(&s[0], dstA, srcA, dstB, srcB, n)
	}
}

// pairable reports whether two messages (plaintext lengths) can share a pair
// kernel: equal AD lengths and at least one full chunk each.
func pairable(p pairing, lenA, lenB int, adA, adB []byte) bool {
	return len(adA) == len(adB) && lenA >= p.rate && lenB >= p.rate
}

// dual reports whether AEGIS-256X2 batches run two messages at a time in the
// dual Y kernels: on CPUs with VAES but without the AVX-512 pair kernels.
func (a *aead) dual() bool {
	return a.v == v256X2 && a.impl.k == k256Y && a.impl.groups == 1
}

func (a *aead) sealBatch(dsts, nonces, msgs, ads [][]byte) {
	p, ok := a.pairing()
	if !ok && a.dual() {
		a.sealBatchDual(dsts, nonces, msgs, ads)
		return
	}
	if !ok {
		a.sealBatchLoop(dsts, nonces, msgs, ads)
		return
	}
	out := func(i int) []byte { return dsts[i][:len(msgs[i])+a.tagSize] }
	// sealTwo seals messages i and i+1 as a pair, or one by one.
	sealTwo := func(i int) {
		if !pairable(p, len(msgs[i]), len(msgs[i+1]), ads[i], ads[i+1]) {
			a.seal(out(i), nonces[i], msgs[i], ads[i])
			a.seal(out(i+1), nonces[i+1], msgs[i+1], ads[i+1])
			return
		}
		a.sealPair(p, out(i), nonces[i], msgs[i], ads[i], out(i+1), nonces[i+1], msgs[i+1], ads[i+1])
	}
	i := 0
	for ; p.quad && i+3 < len(msgs); i += 4 {
		if !pairable(p, len(msgs[i]), len(msgs[i+1]), ads[i], ads[i+1]) ||
			!pairable(p, len(msgs[i+2]), len(msgs[i+3]), ads[i+2], ads[i+3]) {
			sealTwo(i)
			sealTwo(i + 2)
			continue
		}
		a.sealQuad(p, [4][]byte{out(i), out(i + 1), out(i + 2), out(i + 3)},
			[4][]byte(nonces[i:i+4]), [4][]byte(msgs[i:i+4]), [4][]byte(ads[i:i+4]))
	}
	for ; i+1 < len(msgs); i += 2 {
		sealTwo(i)
	}
	if i < len(msgs) {
		a.seal(out(i), nonces[i], msgs[i], ads[i])
	}
}

// quadStart initializes the two pair states of a quad and absorbs the AD.
func (a *aead) quadStart(p pairing, s1, s2 *state, nonces, ads [4][]byte) {
	init256ZQ(&s1[0], &s2[0], &a.impl.c[0], &nonces[0][0], &nonces[1][0], &nonces[2][0], &nonces[3][0])
	a.pairAD(p, s1, ads[0], ads[1])
	a.pairAD(p, s2, ads[2], ads[3])
}

// uniform reports whether four messages (plaintext lengths) can finish in
// the quad kernel: same AD length, same message length, whole chunks only.
func uniform(p pairing, lens [4]int, ads [4][]byte) bool {
	for i := 1; i < 4; i++ {
		if lens[i] != lens[0] || len(ads[i]) != len(ads[0]) {
			return false
		}
	}
	return lens[0]%p.rate == 0
}

// sealQuad seals four messages as two pairs in the quad kernel. Blocks of a
// file write (same length, same AD length) finish in the quad kernel too;
// others split into single states after their common full chunks.
func (a *aead) sealQuad(p pairing, outs, nonces, msgs, ads [4][]byte) {
	var s1, s2, sA, sB state
	a.quadStart(p, &s1, &s2, nonces, ads)
	lens := [4]int{len(msgs[0]), len(msgs[1]), len(msgs[2]), len(msgs[3])}
	n := min(lens[0], lens[1], lens[2], lens[3]) / p.rate
	enc256ZQ(&s1[0], &s2[0], &outs[0][0], &msgs[0][0], &outs[1][0], &msgs[1][0],
		&outs[2][0], &msgs[2][0], &outs[3][0], &msgs[3][0], n)
	if uniform(p, lens, ads) {
		var tags [4][32]byte
		quadFinal(&s1, &s2, &tags, len(ads[0]), lens[0], a.tagSize)
		for i := range outs {
			copy(outs[i][lens[i]:], tags[i][:a.tagSize])
		}
		return
	}
	split(p, &s1, &sA, &sB)
	a.sealRest(&sA, outs[0], msgs[0], n*p.rate, len(ads[0]))
	a.sealRest(&sB, outs[1], msgs[1], n*p.rate, len(ads[1]))
	split(p, &s2, &sA, &sB)
	a.sealRest(&sA, outs[2], msgs[2], n*p.rate, len(ads[2]))
	a.sealRest(&sB, outs[3], msgs[3], n*p.rate, len(ads[3]))
}

func quadFinal(s1, s2 *state, tags *[4][32]byte, adLen, msgLen, tagSize int) {
	var u [16]byte
	binary.LittleEndian.PutUint64(u[0:], uint64(adLen)*8)
	binary.LittleEndian.PutUint64(u[8:], uint64(msgLen)*8)
	final256ZQ(&s1[0], &s2[0], &tags[0][0], &u, tagSize)
}

// pairStart initializes the paired state and absorbs both messages' AD.
func (a *aead) pairStart(p pairing, s *state, nonceA, nonceB, adA, adB []byte) {
	pInit(p, s, &a.impl.c, &nonceA[0], &nonceB[0])
	a.pairAD(p, s, adA, adB)
}

// pairAD absorbs the AD of both messages of a pair (equal lengths).
func (a *aead) pairAD(p pairing, s *state, adA, adB []byte) {
	n := len(adA) / p.rate
	if n > 0 {
		pAbsorb(p, s, &adA[0], &adB[0], n)
	}
	if r := len(adA) - n*p.rate; r > 0 {
		var bufA, bufB [64]byte
		copy(bufA[:], adA[n*p.rate:])
		copy(bufB[:], adB[n*p.rate:])
		pAbsorb(p, s, &bufA[0], &bufB[0], 1)
	}
}

// split copies the paired state into two single-message states.
func split(p pairing, s, sA, sB *state) {
	h := p.half
	for i := range p.blocks {
		copy(sA[h*i:h*(i+1)], s[2*h*i:2*h*i+h])
		copy(sB[h*i:h*(i+1)], s[2*h*i+h:2*h*(i+1)])
	}
}

func (a *aead) sealPair(p pairing, outA, nonceA, mA, adA, outB, nonceB, mB, adB []byte) {
	var s, sA, sB state
	a.pairStart(p, &s, nonceA, nonceB, adA, adB)
	n := min(len(mA), len(mB)) / p.rate
	pEnc(p, &s, &outA[0], &mA[0], &outB[0], &mB[0], n)
	split(p, &s, &sA, &sB)
	a.sealRest(&sA, outA, mA, n*p.rate, len(adA))
	a.sealRest(&sB, outB, mB, n*p.rate, len(adB))
}

func (a *aead) openBatch(dsts, nonces, cts, ads [][]byte) (int, error) {
	p, ok := a.pairing()
	if !ok && a.dual() {
		return a.openBatchDual(dsts, nonces, cts, ads)
	}
	if !ok {
		return a.openBatchLoop(dsts, nonces, cts, ads)
	}
	bad := -1
	fail := func(i int, ok bool) {
		if !ok && bad < 0 {
			bad = i
		}
	}
	ptLen := func(i int) int { return len(cts[i]) - a.tagSize }
	out := func(i int) []byte { return dsts[i][:ptLen(i)] }
	// openTwo opens messages i and i+1 as a pair, or one by one.
	openTwo := func(i int) {
		if !pairable(p, ptLen(i), ptLen(i+1), ads[i], ads[i+1]) { // also catches too-short ciphertexts
			fail(i, a.openOne(dsts[i], nonces[i], cts[i], ads[i]))
			fail(i+1, a.openOne(dsts[i+1], nonces[i+1], cts[i+1], ads[i+1]))
			return
		}
		okA, okB := a.openPair(p, out(i), nonces[i], cts[i], ads[i], out(i+1), nonces[i+1], cts[i+1], ads[i+1])
		fail(i, okA)
		fail(i+1, okB)
	}
	i := 0
	for ; p.quad && i+3 < len(cts); i += 4 {
		if !pairable(p, ptLen(i), ptLen(i+1), ads[i], ads[i+1]) ||
			!pairable(p, ptLen(i+2), ptLen(i+3), ads[i+2], ads[i+3]) {
			openTwo(i)
			openTwo(i + 2)
			continue
		}
		oks := a.openQuad(p, [4][]byte{out(i), out(i + 1), out(i + 2), out(i + 3)},
			[4][]byte(nonces[i:i+4]), [4][]byte(cts[i:i+4]), [4][]byte(ads[i:i+4]))
		for j, ok := range oks {
			fail(i+j, ok)
		}
	}
	for ; i+1 < len(cts); i += 2 {
		openTwo(i)
	}
	if i < len(cts) {
		fail(i, a.openOne(dsts[i], nonces[i], cts[i], ads[i]))
	}
	if bad >= 0 {
		return bad, ErrOpen
	}
	return -1, nil
}

// openQuad opens four messages as two pairs in the quad kernel, like sealQuad.
func (a *aead) openQuad(p pairing, outs, nonces, cts, ads [4][]byte) (oks [4]bool) {
	var s1, s2, sA, sB state
	a.quadStart(p, &s1, &s2, nonces, ads)
	lens := [4]int{len(outs[0]), len(outs[1]), len(outs[2]), len(outs[3])}
	n := min(lens[0], lens[1], lens[2], lens[3]) / p.rate
	dec256ZQ(&s1[0], &s2[0], &outs[0][0], &cts[0][0], &outs[1][0], &cts[1][0],
		&outs[2][0], &cts[2][0], &outs[3][0], &cts[3][0], n)
	if uniform(p, lens, ads) {
		var tags [4][32]byte
		quadFinal(&s1, &s2, &tags, len(ads[0]), lens[0], a.tagSize)
		for i := range outs {
			oks[i] = verifyTag(outs[i], tags[i][:a.tagSize], cts[i][lens[i]:])
		}
		return
	}
	split(p, &s1, &sA, &sB)
	oks[0] = a.openRest(&sA, outs[0], cts[0], n*p.rate, len(ads[0]))
	oks[1] = a.openRest(&sB, outs[1], cts[1], n*p.rate, len(ads[1]))
	split(p, &s2, &sA, &sB)
	oks[2] = a.openRest(&sA, outs[2], cts[2], n*p.rate, len(ads[2]))
	oks[3] = a.openRest(&sB, outs[3], cts[3], n*p.rate, len(ads[3]))
	return
}

func (a *aead) openPair(p pairing, outA, nonceA, cA, adA, outB, nonceB, cB, adB []byte) (okA, okB bool) {
	var s, sA, sB state
	a.pairStart(p, &s, nonceA, nonceB, adA, adB)
	n := min(len(outA), len(outB)) / p.rate
	pDec(p, &s, &outA[0], &cA[0], &outB[0], &cB[0], n)
	split(p, &s, &sA, &sB)
	okA = a.openRest(&sA, outA, cA, n*p.rate, len(adA))
	okB = a.openRest(&sB, outB, cB, n*p.rate, len(adB))
	return
}

// sealBatchDual seals messages two at a time with the dual kernels: each
// message keeps its own state (no shared layout, so AD lengths may differ);
// the kernels only interleave the full chunks both messages have.
func (a *aead) sealBatchDual(dsts, nonces, msgs, ads [][]byte) {
	rate := a.v.rate()
	i := 0
	for ; i+1 < len(msgs); i += 2 {
		outA, outB := dsts[i][:len(msgs[i])+a.tagSize], dsts[i+1][:len(msgs[i+1])+a.tagSize]
		var sA, sB state
		a.start(&sA, 0, nonces[i], ads[i])
		a.start(&sB, 0, nonces[i+1], ads[i+1])
		n := min(len(msgs[i]), len(msgs[i+1])) / rate
		if n > 0 {
			enc256YD(&sA[0], &sB[0], &outA[0], &msgs[i][0], &outB[0], &msgs[i+1][0], n)
		}
		a.sealRest(&sA, outA, msgs[i], n*rate, len(ads[i]))
		a.sealRest(&sB, outB, msgs[i+1], n*rate, len(ads[i+1]))
	}
	if i < len(msgs) {
		a.seal(dsts[i][:len(msgs[i])+a.tagSize], nonces[i], msgs[i], ads[i])
	}
}

// openBatchDual is sealBatchDual for OpenBatch.
func (a *aead) openBatchDual(dsts, nonces, cts, ads [][]byte) (int, error) {
	rate := a.v.rate()
	bad := -1
	fail := func(i int, ok bool) {
		if !ok && bad < 0 {
			bad = i
		}
	}
	i := 0
	for ; i+1 < len(cts); i += 2 {
		lenA, lenB := len(cts[i])-a.tagSize, len(cts[i+1])-a.tagSize
		if lenA < rate || lenB < rate { // also catches too-short ciphertexts
			fail(i, a.openOne(dsts[i], nonces[i], cts[i], ads[i]))
			fail(i+1, a.openOne(dsts[i+1], nonces[i+1], cts[i+1], ads[i+1]))
			continue
		}
		outA, outB := dsts[i][:lenA], dsts[i+1][:lenB]
		var sA, sB state
		a.start(&sA, 0, nonces[i], ads[i])
		a.start(&sB, 0, nonces[i+1], ads[i+1])
		n := min(lenA, lenB) / rate
		dec256YD(&sA[0], &sB[0], &outA[0], &cts[i][0], &outB[0], &cts[i+1][0], n)
		fail(i, a.openRest(&sA, outA, cts[i], n*rate, len(ads[i])))
		fail(i+1, a.openRest(&sB, outB, cts[i+1], n*rate, len(ads[i+1])))
	}
	if i < len(cts) {
		fail(i, a.openOne(dsts[i], nonces[i], cts[i], ads[i]))
	}
	if bad >= 0 {
		return bad, ErrOpen
	}
	return -1, nil
}
