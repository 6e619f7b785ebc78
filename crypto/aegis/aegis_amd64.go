//go:build amd64 && gc && !purego

package aegis

import (
	"strconv"

	"golang.org/x/sys/cpu"
)

// Feature flags, set once at start-up. The S kernels use AES-NI in its
// legacy SSE encoding, for CPUs without AVX. The X kernels use the VEX forms of
// AES-NI (AES + AVX); the Y kernels need VAES on 256-bit registers (AVX2 +
// VAES); the Z kernels need AVX-512F and VAES. With AVX-512VL, the X and Y
// kernels use three-input logic (VPTERNLOGQ) for the keystream, which
// shortens the decryption chain. The tests narrow these with GODEBUG
// (cpu.avx2=off, ...), which x/sys/cpu applies before they are read.
var (
	useAESSSE  = cpu.X86.HasAES // the legacy-encoded S kernels
	useAESNI   = cpu.X86.HasAES && cpu.X86.HasAVX
	useVAES    = useAESNI && cpu.X86.HasAVX2 && cpuidECX7()&(1<<9) != 0
	useVAES512 = useVAES && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VAES
	useTern    = useAESNI && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL
)

// encoding is the instruction encoding of a kernel set.
type encoding uint8

const (
	encVEX  encoding = iota // AVX (VEX) forms of AES-NI and VAES
	encTern                 // as encVEX, with AVX-512VL three-input logic
	encEVEX                 // AVX-512 (Z registers, always three-input logic)
	encSSE                  // legacy SSE forms of AES-NI, without AVX
)

// features are the CPU features a key may use.
type features struct {
	aes, aesni, vaes, vaes512, tern bool
}

var cpuFeatures = features{useAESSSE, useAESNI, useVAES, useVAES512, useTern}

// kernelFor picks the widest kernel the CPU supports that is no wider than
// the variant. A narrower kernel runs the variant's lanes in groups: the
// lanes of AEGIS-128X/256X never interact before the tag, so AEGIS-256X2
// without VAES is two AES-NI passes over interleaved data, and its tag the
// XOR of the passes' tags.
func kernelFor(v *variant, f features) (k kernel, groups int) {
	var width int
	switch {
	case v.lanes >= 4 && f.vaes512:
		width = 64
	case v.lanes >= 2 && f.vaes:
		width = 32
	case f.aesni:
		width = 16
	case f.aes:
		return findKernel(v.wide, 16, encSSE), v.lanes
	default:
		return kNone, 0
	}
	enc := encVEX
	switch {
	case width == 64:
		enc = encEVEX
	case f.tern:
		enc = encTern
	}
	k = findKernel(v.wide, width, enc)
	return k, v.lanes * 16 / width
}

func (a *aead) implementation() string {
	k := a.impl.k
	if k == kNone {
		return portableName
	}
	s := kernelSpecs[k].impl
	if g := a.impl.groups; g > 1 {
		s += ", " + strconv.Itoa(g) + " passes"
	}
	if _, ok := a.pairing(); ok {
		s += "; batches " + kernelSpecs[k].pairImpl
	}
	return s
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

// pairing returns the pair kernels of a whole-variant kernel (one lane
// group) whose pair register width the CPU has.
func (a *aead) pairing() (pairing, bool) {
	k, f := a.impl.k, a.impl.f
	spec := kernelSpecs[k]
	if k == kNone || a.impl.groups != 1 || spec.pairWidth == 0 ||
		(spec.pairWidth == 32 && !f.vaes) || (spec.pairWidth == 64 && !f.vaes512) {
		return pairing{}, false
	}
	return pairing{k, a.v.rate(), spec.width, a.v.stateBlocks(), spec.quad && f.tern}, true
}

// pairable reports whether two messages (plaintext lengths) can share a pair
// kernel: equal AD lengths and at least one full chunk each.
func pairable(p pairing, lenA, lenB int, adA, adB []byte) bool {
	return len(adA) == len(adB) && lenA >= p.rate && lenB >= p.rate
}

// dual reports whether AEGIS-256X2 batches run two messages at a time in the
// dual Y kernels: on CPUs with VAES but without the AVX-512 pair kernels.
func (a *aead) dual() bool {
	return kernelSpecs[a.impl.k].dual && a.impl.groups == 1
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
	qInit(p.kind, s1, s2, &a.impl.c[0], &nonces[0][0], &nonces[1][0], &nonces[2][0], &nonces[3][0])
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
	qEnc(p.kind, &s1, &s2, &outs[0][0], &msgs[0][0], &outs[1][0], &msgs[1][0],
		&outs[2][0], &msgs[2][0], &outs[3][0], &msgs[3][0], n)
	if uniform(p, lens, ads) {
		var tags [4][32]byte
		u := lengths(len(ads[0]), lens[0])
		qFinal(p.kind, &s1, &s2, &tags[0][0], &u, a.tagSize)
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

// pairStart initializes the paired state and absorbs both messages' AD.
func (a *aead) pairStart(p pairing, s *state, nonceA, nonceB, adA, adB []byte) {
	pInit(p.kind, s, &a.impl.c[0], &nonceA[0], &nonceB[0])
	a.pairAD(p, s, adA, adB)
}

// pairAD absorbs the AD of both messages of a pair (equal lengths).
func (a *aead) pairAD(p pairing, s *state, adA, adB []byte) {
	n := len(adA) / p.rate
	if n > 0 {
		pAbsorb(p.kind, s, &adA[0], &adB[0], n)
	}
	if r := len(adA) - n*p.rate; r > 0 {
		var bufA, bufB [64]byte
		copy(bufA[:], adA[n*p.rate:])
		copy(bufB[:], adB[n*p.rate:])
		pAbsorb(p.kind, s, &bufA[0], &bufB[0], 1)
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
	pEnc(p.kind, &s, &outA[0], &mA[0], &outB[0], &mB[0], n)
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
	qDec(p.kind, &s1, &s2, &outs[0][0], &cts[0][0], &outs[1][0], &cts[1][0],
		&outs[2][0], &cts[2][0], &outs[3][0], &cts[3][0], n)
	if uniform(p, lens, ads) {
		var tags [4][32]byte
		u := lengths(len(ads[0]), lens[0])
		qFinal(p.kind, &s1, &s2, &tags[0][0], &u, a.tagSize)
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
	pDec(p.kind, &s, &outA[0], &cA[0], &outB[0], &cB[0], n)
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
			dEnc(a.impl.k, &sA, &sB, &outA[0], &msgs[i][0], &outB[0], &msgs[i+1][0], n)
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
		dDec(a.impl.k, &sA, &sB, &outA[0], &cts[i][0], &outB[0], &cts[i+1][0], n)
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
