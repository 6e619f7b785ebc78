// Command gen writes the assembly kernels of package aegis and their Go
// side: aegis_amd64.s and aegis_arm64.s, and in aegis_stubs_amd64.go and
// aegis_stubs_arm64.go the declarations and the dispatch that calls them.
// This file emits the amd64 kernels, neon.go the arm64 ones.
//
// Regenerate from crypto/aegis with go generate, or:
//
//	go run ./_asm
//
// (-o dir writes the files elsewhere; a test checks they are up to date).
//
// The kernels are emitted from one description per AEGIS family (the
// 128-bit-key family with an eight-vector state and the 256-bit-key family
// with a six-vector state) at three register widths: X (16 bytes, one lane,
// AES-NI in its VEX form; the S kernels are the same in the legacy SSE
// encoding, for CPUs with AES-NI but without AVX), Y (32 bytes, two lanes, VAES) and Z (64 bytes, four
// lanes, VAES with AVX-512). The XT and YT kernels are enc and dec on X and Y
// registers with AVX-512VL three-input logic (VPTERNLOGQ), which shortens the
// decryption chain; the Z kernels always use it.
//
// The pair kernels run two independent messages side by side, message A in
// the low half of each register and message B in the high half: "YP" kernels
// hold two AEGIS-128L or AEGIS-256 states in Y registers, the "ZP" kernels two
// AEGIS-128X2 or AEGIS-256X2 states in Z registers. The state update is
// lane-wise, so one VAESENC advances both messages, which hides the AESENC
// latency that bounds a single message. The "ZQ" kernels run two AEGIS-256X2
// pairs at once, in Z0-Z15 and Z16-Z31, for CPUs that start two 512-bit
// AESENC per cycle.
//
// Every kernel works on a state in memory (state vector i at i*width bytes)
// so that the Go side keeps all length and buffer checks; see aegis_amd64.go
// for the choice of kernels and aegis_asm.go for the Go side and the layout
// of the constants.
package main

import (
	"flag"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"strings"
)

type width struct {
	reg   string // register prefix: X, Y, Z
	name  string // kernel suffix: X, XT, Y, YT, Z
	bytes int
	mov   string // load/store
	xor   string
	and   string
	bcast string // 16-byte memory -> all lanes
	// tern: AVX-512 (VL for X and Y registers) three-input logic is
	// available; VPTERNLOGQ immediates: 0x96 is A^B^C, 0x78 is A^(B&C), A
	// being the destination (the last operand in Go's order).
	tern bool
	// base is added to every register number: the quad kernels run their
	// second pair in registers 16..31.
	base int
	// remap, if set, maps register roles to register numbers (the dual
	// kernels share the sixteen registers between two states).
	remap map[int]int
}

// upper returns the same width on registers 16..31 (EVEX only).
func (w width) upper() width {
	w.base = 16
	return w
}

var (
	wX  = width{"X", "X", 16, "VMOVDQU", "VPXOR", "VPAND", "VMOVDQU", false, 0, nil}
	wXT = width{"X", "XT", 16, "VMOVDQU", "VPXOR", "VPAND", "VMOVDQU", true, 0, nil}
	wY  = width{"Y", "Y", 32, "VMOVDQU", "VPXOR", "VPAND", "VBROADCASTI128", false, 0, nil}
	wYT = width{"Y", "YT", 32, "VMOVDQU", "VPXOR", "VPAND", "VBROADCASTI128", true, 0, nil}
	wZ  = width{"Z", "Z", 64, "VMOVDQU64", "VPXORQ", "VPANDQ", "VBROADCASTI32X4", true, 0, nil}
	// wS is wX emitted in the legacy SSE encoding (see legacy), for CPUs with
	// AES-NI but without AVX.
	wS = width{"X", "S", 16, "VMOVDQU", "VPXOR", "VPAND", "VMOVDQU", false, 0, nil}
)

// family is the 128-bit-key family (wide=false) or the 256-bit-key family.
type family struct {
	name string // "128", "256"
	wide bool
	n    int // state vectors
}

var (
	f128 = family{"128", false, 8}
	f256 = family{"256", true, 6}
)

// Offsets of the per-key constant vectors (64 bytes each, see asmKey in aegis_asm.go).
const (
	cK0  = iota * 64 // key (128) or first key half (256), replicated
	cK1              // second key half (256)
	cKC0             // key ^ C0 (128) or k0 ^ C0 (256)
	cKC1             // key ^ C1 (128) or k1 ^ C1 (256)
	cC0
	cC1
	cCtx
)

var out strings.Builder

// sseMode makes emit translate the VEX instructions of the X kernels into
// their legacy SSE forms.
var sseMode bool

func emit(format string, args ...any) {
	ins := fmt.Sprintf(format, args...)
	if sseMode {
		for _, l := range legacy(ins) {
			fmt.Fprintf(&out, "\t%s\n", l)
		}
		return
	}
	fmt.Fprintf(&out, "\t%s\n", ins)
}

// sseScratch is free whenever a translated instruction needs it: it is rT,
// which holds nothing during a state update.
const sseScratch = "X10"

// legacy translates one instruction of an X kernel into the legacy SSE
// encoding. The VEX forms have a separate destination (VPXOR a, b, d is
// d = b ^ a); the legacy forms overwrite their second operand, so a copy is
// inserted where the destination is not b: for AESENC, whose operands do
// not commute, through a scratch register when the destination is a.
func legacy(ins string) []string {
	op, args, _ := strings.Cut(ins, " ")
	if !strings.HasPrefix(op, "V") {
		return []string{ins} // MOVQ, DECQ, JNZ, ...
	}
	ops := strings.Split(args, ", ")
	if op == "VMOVDQU" {
		return []string{"MOVOU " + args}
	}
	name, ok := map[string]string{"VPXOR": "PXOR", "VPAND": "PAND", "VAESENC": "AESENC"}[op]
	if !ok || len(ops) != 3 {
		panic("no legacy SSE form for " + ins)
	}
	a, b, d := ops[0], ops[1], ops[2]
	if strings.Contains(a+b, "(") {
		panic("legacy SSE needs aligned memory operands: " + ins)
	}
	switch {
	case d == b:
		return []string{name + " " + a + ", " + d}
	case d == a && name != "AESENC":
		return []string{name + " " + b + ", " + d}
	case d != a:
		return []string{"MOVOU " + b + ", " + d, name + " " + a + ", " + d}
	}
	if a == sseScratch || b == sseScratch {
		panic("scratch register in use: " + ins)
	}
	return []string{"MOVOU " + b + ", " + sseScratch, name + " " + a + ", " + sseScratch, "MOVOU " + sseScratch + ", " + d}
}

func label(l string) { fmt.Fprintf(&out, "%s:\n", l) }

// Register names: state vectors use registers 0..n-1.
func (w width) r(i int) string {
	if w.remap != nil {
		n, ok := w.remap[i]
		if !ok {
			panic(fmt.Sprintf("register role %d has no register in this kernel", i))
		}
		return fmt.Sprintf("%s%d", w.reg, n)
	}
	return fmt.Sprintf("%s%d", w.reg, i+w.base)
}

// Registers above the state.
const (
	rM0  = 8  // message (128: first half)
	rM1  = 9  // 128: second half
	rT   = 10 // saved last state vector
	rZ0  = 11 // keystream
	rZ1  = 12
	rCtx = 13 // init only
	rA   = 14 // init only
	rB   = 15 // init only
)

// In the 256 family, registers 6 and 7 are free; the layout above keeps one
// numbering for both families.

// How the new S0 (and S4) is completed after its AESENC: see updateWith.
const (
	postEnc  = iota // S0 = X ^ S0
	postDec         // S0 = (X ^ S0) ^ W
	postDecT        // S0 = X ^ S0 ^ W in one three-input instruction
)

func (f family) update(w width) { f.updateWith(w, postEnc) }

// updateWith is the state update with the message (or, when decrypting, the
// ciphertext) in rM0 (and rM1), both clobbered. AESRound(S[last], S0 ^ M)
// equals AESENC(S[last], M) ^ S0, so the message is the round key of the round
// that reads S[last] (giving X) and the old S0 is XORed in afterwards: the
// chain from the old S0 to the new one is one XOR instead of XOR + AESENC.
// When decrypting, the plaintext is C ^ W with W the keystream in rZ0 (rZ1),
// so the new S0 is X ^ S0 ^ W; X ^ S0 comes first because W, a tree over the
// whole state, is ready last. The same holds for S4 and M1 in the 128 family.
func (f family) updateWith(w width, post int) {
	last := f.n - 1
	emit("VAESENC %s, %s, %s", w.r(rM0), w.r(last), w.r(rM0))
	if !f.wide {
		emit("VAESENC %s, %s, %s", w.r(rM1), w.r(3), w.r(rM1))
	}
	finish := func(s, x, z int) {
		switch post {
		case postEnc:
			emit("%s %s, %s, %s", w.xor, w.r(x), w.r(s), w.r(s))
		case postDec:
			emit("%s %s, %s, %s", w.xor, w.r(s), w.r(x), w.r(x))
			emit("%s %s, %s, %s", w.xor, w.r(z), w.r(x), w.r(s))
		case postDecT:
			emit("VPTERNLOGQ $0x96, %s, %s, %s", w.r(z), w.r(x), w.r(s))
		}
	}
	for i := last; i >= 1; i-- {
		if !f.wide && i == 4 {
			// S5 (done) read the old S4; now S4 = AESENC(S3, M1) ^ S4 (^ W1).
			finish(4, rM1, rZ1)
			continue
		}
		emit("VAESENC %s, %s, %s", w.r(i), w.r(i-1), w.r(i))
	}
	finish(0, rM0, rZ0)
}

// keystream computes z into rZ0 (and rZ1), as shallow trees: the keystream
// is on the state chain when decrypting.
func (f family) keystream(w width) {
	r := w.r
	switch {
	case f.wide && w.tern: // z = S1 ^ S4 ^ S5 ^ (S2 & S3)
		emit("%s %s, %s", w.mov, r(5), r(rZ0))
		emit("VPTERNLOGQ $0x78, %s, %s, %s", r(3), r(2), r(rZ0))
		emit("VPTERNLOGQ $0x96, %s, %s, %s", r(4), r(1), r(rZ0))
	case f.wide:
		emit("%s %s, %s, %s", w.and, r(3), r(2), r(rZ0))
		emit("%s %s, %s, %s", w.xor, r(4), r(1), r(rA))
		emit("%s %s, %s, %s", w.xor, r(5), r(rZ0), r(rZ0))
		emit("%s %s, %s, %s", w.xor, r(rA), r(rZ0), r(rZ0))
	case w.tern: // z0 = S1 ^ S6 ^ (S2 & S3), z1 = S2 ^ S5 ^ (S6 & S7)
		emit("%s %s, %s, %s", w.xor, r(6), r(1), r(rZ0))
		emit("VPTERNLOGQ $0x78, %s, %s, %s", r(3), r(2), r(rZ0))
		emit("%s %s, %s, %s", w.xor, r(5), r(2), r(rZ1))
		emit("VPTERNLOGQ $0x78, %s, %s, %s", r(7), r(6), r(rZ1))
	default:
		emit("%s %s, %s, %s", w.and, r(3), r(2), r(rZ0))
		emit("%s %s, %s, %s", w.xor, r(6), r(1), r(rA))
		emit("%s %s, %s, %s", w.xor, r(rA), r(rZ0), r(rZ0))
		emit("%s %s, %s, %s", w.and, r(7), r(6), r(rZ1))
		emit("%s %s, %s, %s", w.xor, r(5), r(2), r(rB))
		emit("%s %s, %s, %s", w.xor, r(rB), r(rZ1), r(rZ1))
	}
}

func (f family) loadState(w width, base string) {
	for i := range f.n {
		emit("%s %d(%s), %s", w.mov, i*w.bytes, base, w.r(i))
	}
}

func (f family) storeState(w width, base string) {
	for i := range f.n {
		emit("%s %s, %d(%s)", w.mov, w.r(i), i*w.bytes, base)
	}
}

// pair describes how message chunks are moved between memory and registers:
// single messages use plain loads and stores; the P kernels gather the low
// half from message A and the high half from message B.
type io struct {
	pair bool
	half int // bytes per message in a register: 16 (Y pairs) or 32 (Z pairs)
}

// halfOps returns the instructions that load or store the high half of a
// paired register and the register names of its low half.
func (p io) halfOps(w width) (insert, extract, low string) {
	if p.half == 16 {
		return "VINSERTI128", "VEXTRACTI128", "X"
	}
	return "VINSERTI64X4", "VEXTRACTI64X4", "Y"
}

// single is the address of message vector k of a single-message chunk:
// vector 0 at the pointer, vector 1 (128 family) at the pointer plus R10, half
// the stride. With a stride wider than the register, a kernel processes a
// group of lanes of a wider variant (see aegis_asm.go).
func single(k int, base string) string {
	if k == 0 {
		return "(" + base + ")"
	}
	return "(" + base + ")(R10*1)"
}

// load reads message vector k of the chunk (offset k*half) into register r.
func (p io) load(w width, k int, r int, srcA, srcB string) {
	if !p.pair {
		emit("%s %s, %s", w.mov, single(k, srcA), w.r(r))
		return
	}
	ins, _, low := p.halfOps(w)
	emit("%s %d(%s), %s%d", lowMov(w), k*p.half, srcA, low, r+w.base)
	emit("%s $1, %d(%s), %s, %s", ins, k*p.half, srcB, w.r(r), w.r(r))
}

func (p io) store(w width, k int, r int, dstA, dstB string) {
	if !p.pair {
		emit("%s %s, %s", w.mov, w.r(r), single(k, dstA))
		return
	}
	_, ext, low := p.halfOps(w)
	emit("%s %s%d, %d(%s)", lowMov(w), low, r+w.base, k*p.half, dstA)
	emit("%s $1, %s, %d(%s)", ext, w.r(r), k*p.half, dstB)
}

// lowMov moves the low half of a paired register: registers 16..31 need the
// EVEX encoding.
func lowMov(w width) string {
	if w.base >= 16 {
		return "VMOVDQU64"
	}
	return "VMOVDQU"
}

func (f family) vectors() int {
	if f.wide {
		return 1
	}
	return 2
}

var stubs strings.Builder

func header(name string, frame int, args string) {
	fmt.Fprintf(&out, "\n// %s\nTEXT ·%s(SB), NOSPLIT, $0-%d\n", args, name, frame)
	if name != "cpuidECX7" {
		stubs.WriteString("\n//go:noescape\n")
	}
	stubs.WriteString(args + "\n")
}

func ret(w width) {
	if w.reg != "X" {
		emit("VZEROUPPER")
	}
	emit("RET")
}

// kernel emits absorb, enc, dec and decLast for one family and width. The
// X and Y three-input-logic widths only differ in enc and dec, so they get
// only those; init, absorb, decLast and final come from the plain width.
func (f family) kernels(w width, suffix string, p io) {
	encDecOnly := w.tern && w.reg != "Z"

	if !encDecOnly {
		f.absorbKernel(w, suffix, p)
	}
	f.encDecKernels(w, suffix, p)
	if p.pair || encDecOnly {
		return
	}
	f.decLastKernel(w, suffix)
}

// absorbKernel emits absorb(s, srcA[, srcB], n[, stride]).
func (f family) absorbKernel(w width, suffix string, p io) {
	chunk := f.vectors() * p.half // pairs: bytes of each message per update
	name := func(op string) string { return op + f.name + suffix }
	nv := f.vectors()
	if p.pair {
		header(name("absorb"), 32, "func absorb"+f.name+suffix+"(s *byte, srcA, srcB *byte, n int)")
		emit("MOVQ s+0(FP), AX")
		emit("MOVQ srcA+8(FP), SI")
		emit("MOVQ srcB+16(FP), R8")
		emit("MOVQ n+24(FP), CX")
	} else {
		header(name("absorb"), 32, "func absorb"+f.name+suffix+"(s *byte, src *byte, n int, stride int)")
		emit("MOVQ s+0(FP), AX")
		emit("MOVQ src+8(FP), SI")
		emit("MOVQ n+16(FP), CX")
		emit("MOVQ stride+24(FP), R11")
		emit("MOVQ R11, R10")
		emit("SHRQ $1, R10")
	}
	f.loadState(w, "AX")
	emit("TESTQ CX, CX")
	emit("JZ absorbdone%s%s", f.name, suffix)
	label("absorbloop" + f.name + suffix)
	for k := range nv {
		p.load(w, k, rM0+k, "SI", "R8")
	}
	f.update(w)
	if p.pair {
		emit("ADDQ $%d, SI", chunk)
		emit("ADDQ $%d, R8", chunk)
	} else {
		emit("ADDQ R11, SI")
	}
	emit("DECQ CX")
	emit("JNZ absorbloop%s%s", f.name, suffix)
	label("absorbdone" + f.name + suffix)
	f.storeState(w, "AX")
	ret(w)

}

// encDecKernels emits enc and dec(s, dstA, srcA[, dstB, srcB], n[, stride]).
func (f family) encDecKernels(w width, suffix string, p io) {
	chunk := f.vectors() * p.half
	name := func(op string) string { return op + f.name + suffix }
	for _, op := range []string{"enc", "dec"} {
		lbl := op + f.name + suffix
		if p.pair {
			header(name(op), 48, "func "+op+f.name+suffix+"(s *byte, dstA, srcA, dstB, srcB *byte, n int)")
			emit("MOVQ s+0(FP), AX")
			emit("MOVQ dstA+8(FP), DI")
			emit("MOVQ srcA+16(FP), SI")
			emit("MOVQ dstB+24(FP), R9")
			emit("MOVQ srcB+32(FP), R8")
			emit("MOVQ n+40(FP), CX")
		} else {
			header(name(op), 40, "func "+op+f.name+suffix+"(s *byte, dst, src *byte, n int, stride int)")
			emit("MOVQ s+0(FP), AX")
			emit("MOVQ dst+8(FP), DI")
			emit("MOVQ src+16(FP), SI")
			emit("MOVQ n+24(FP), CX")
			emit("MOVQ stride+32(FP), R11")
			emit("MOVQ R11, R10")
			emit("SHRQ $1, R10")
		}
		f.loadState(w, "AX")
		emit("TESTQ CX, CX")
		emit("JZ %sdone", lbl)
		label(lbl + "loop")
		f.step(op, w, p, ptrs{"SI", "R8", "DI", "R9"})
		if p.pair {
			emit("ADDQ $%d, SI", chunk)
			emit("ADDQ $%d, DI", chunk)
			emit("ADDQ $%d, R8", chunk)
			emit("ADDQ $%d, R9", chunk)
		} else {
			emit("ADDQ R11, SI")
			emit("ADDQ R11, DI")
		}
		emit("DECQ CX")
		emit("JNZ %sloop", lbl)
		label(lbl + "done")
		f.storeState(w, "AX")
		ret(w)
	}
}

// ptrs names the registers pointing at the current chunk: sources and
// destinations of message A (and B, for pairs).
type ptrs struct{ srcA, srcB, dstA, dstB string }

// step encrypts or decrypts one chunk and updates the state.
func (f family) step(op string, w width, p io, q ptrs) {
	nv := f.vectors()
	if op == "enc" {
		f.keystream(w)
	}
	for k := range nv {
		p.load(w, k, rM0+k, q.srcA, q.srcB)
	}
	if op == "dec" {
		f.decStep(w, p, q)
		return
	}
	for k := range nv {
		emit("%s %s, %s, %s", w.xor, w.r(rM0+k), w.r(rZ0+k), w.r(rZ0+k))
		p.store(w, k, rZ0+k, q.dstA, q.dstB)
	}
	f.update(w)
}

// quadKernels emits enc and dec for two pair states at once (four messages):
// the first pair in registers 0..15, the second in 16..31. Where the AES
// units can start two 512-bit rounds per cycle, one pair leaves them half
// idle waiting for its AESENC chain; two independent pairs fill them.
func (f family) quadKernels(w width, suffix string, p io) {
	chunk := f.vectors() * p.half
	w2 := w.upper()
	q1 := ptrs{"SI", "R8", "DI", "R9"}
	q2 := ptrs{"R10", "R11", "R12", "R13"}
	for _, op := range []string{"enc", "dec"} {
		name := op + f.name + suffix
		header(name, 88, "func "+name+"(s1, s2 *byte, dstA, srcA, dstB, srcB, dstC, srcC, dstD, srcD *byte, n int)")
		emit("MOVQ s1+0(FP), AX")
		emit("MOVQ s2+8(FP), BX")
		for i, r := range []string{"DI", "SI", "R9", "R8", "R12", "R10", "R13", "R11"} {
			emit("MOVQ %s+%d(FP), %s", []string{"dstA", "srcA", "dstB", "srcB", "dstC", "srcC", "dstD", "srcD"}[i], 16+8*i, r)
		}
		emit("MOVQ n+80(FP), CX")
		f.loadState(w, "AX")
		f.loadState(w2, "BX")
		emit("TESTQ CX, CX")
		emit("JZ %sdone", name)
		label(name + "loop")
		f.step(op, w, p, q1)
		f.step(op, w2, p, q2)
		for _, r := range []string{"SI", "R8", "DI", "R9", "R10", "R11", "R12", "R13"} {
			emit("ADDQ $%d, %s", chunk, r)
		}
		emit("DECQ CX")
		emit("JNZ %sloop", name)
		label(name + "done")
		f.storeState(w, "AX")
		f.storeState(w2, "BX")
		ret(w)
	}
}

// dualKernels256 emits enc256YD and dec256YD: two single AEGIS-256X2
// states (message A in registers 0-5, message B in 6-11, sharing four
// temporaries) for CPUs with VAES but without AVX-512, where Z registers and
// registers 16-31 are missing. Each message's chain leaves the AES units idle
// half of the time; the other message's rounds fill them.
func dualKernels256() {
	f, w := f256, wY
	w1, w2 := w, w
	w1.remap = map[int]int{rM0: 12, rT: 13, rZ0: 14, rA: 15}
	w2.remap = map[int]int{rM0: 12, rT: 13, rZ0: 14, rA: 15}
	for i := range f.n {
		w1.remap[i], w2.remap[i] = i, 6+i
	}
	for _, op := range []string{"enc", "dec"} {
		name := op + "256YD"
		header(name, 56, "func "+name+"(s1, s2 *byte, dstA, srcA, dstB, srcB *byte, n int)")
		emit("MOVQ s1+0(FP), AX")
		emit("MOVQ s2+8(FP), BX")
		emit("MOVQ dstA+16(FP), DI")
		emit("MOVQ srcA+24(FP), SI")
		emit("MOVQ dstB+32(FP), R9")
		emit("MOVQ srcB+40(FP), R8")
		emit("MOVQ n+48(FP), CX")
		f.loadState(w1, "AX")
		f.loadState(w2, "BX")
		emit("TESTQ CX, CX")
		emit("JZ %sdone", name)
		label(name + "loop")
		f.step(op, w1, io{}, ptrs{srcA: "SI", dstA: "DI"})
		f.step(op, w2, io{}, ptrs{srcA: "R8", dstA: "R9"})
		for _, r := range []string{"SI", "DI", "R8", "R9"} {
			emit("ADDQ $%d, %s", w.bytes, r)
		}
		emit("DECQ CX")
		emit("JNZ %sloop", name)
		label(name + "done")
		f.storeState(w1, "AX")
		f.storeState(w2, "BX")
		ret(w)
	}
}

// quadInit256 emits init256ZQ: the initialization of two AEGIS-256X2 pair
// states (four nonces) with the two pairs' updates interleaved.
func quadInit256() {
	f, name := f256, "init256ZQ"
	header(name, 56, "func "+name+"(s1, s2 *byte, c *byte, nonceA, nonceB, nonceC, nonceD *byte)")
	emit("MOVQ s1+0(FP), AX")
	emit("MOVQ s2+8(FP), DX")
	emit("MOVQ c+16(FP), BX")
	emit("MOVQ nonceA+24(FP), SI")
	emit("MOVQ nonceB+32(FP), R8")
	emit("MOVQ nonceC+40(FP), R10")
	emit("MOVQ nonceD+48(FP), R11")
	sets := []struct {
		w          width
		nA, nB, st string
	}{{wZ, "SI", "R8", "AX"}, {wZ.upper(), "R10", "R11", "DX"}}
	for _, set := range sets {
		w := set.w
		// bcast: this pair's nonce part at off, message A's in the low half.
		bcast := func(off, r int) {
			emit("VBROADCASTI32X4 %d(%s), Y%d", off, set.nA, r+w.base)
			emit("VBROADCASTI32X4 %d(%s), Y%d", off, set.nB, rT+w.base)
			emit("VINSERTI64X4 $1, Y%d, %s, %s", rT+w.base, w.r(r), w.r(r))
		}
		emit("%s %d(BX), %s", w.mov, cCtx, w.r(rCtx))
		bcast(0, rA)
		bcast(16, rB)
		emit("%s %d(BX), %s", w.mov, cK0, w.r(6))
		emit("%s %d(BX), %s", w.mov, cK1, w.r(7))
		emit("%s %s, %s, %s", w.xor, w.r(6), w.r(rA), w.r(rA))
		emit("%s %s, %s, %s", w.xor, w.r(7), w.r(rB), w.r(rB))
		emit("%s %s, %s", w.mov, w.r(rA), w.r(0))
		emit("%s %s, %s", w.mov, w.r(rB), w.r(1))
		emit("%s %d(BX), %s", w.mov, cC1, w.r(2))
		emit("%s %d(BX), %s", w.mov, cC0, w.r(3))
		emit("%s %d(BX), %s", w.mov, cKC0, w.r(4))
		emit("%s %d(BX), %s", w.mov, cKC1, w.r(5))
	}
	emit("MOVQ $4, CX")
	label(name + "loop")
	for _, m := range []int{6, 7, rA, rB} {
		for _, set := range sets {
			w := set.w
			emit("%s %s, %s, %s", w.xor, w.r(rCtx), w.r(3), w.r(3))
			emit("%s %s, %s, %s", w.xor, w.r(rCtx), w.r(5), w.r(5))
			emit("%s %s, %s", w.mov, w.r(m), w.r(rM0))
			f.update(w)
		}
	}
	emit("DECQ CX")
	emit("JNZ %sloop", name)
	for _, set := range sets {
		f.storeState(set.w, set.st)
	}
	ret(wZ)
}

// quadFinal256 emits final256ZQ: the finalization of two AEGIS-256X2 pair
// states whose four messages have the same lengths (one length block u), and
// the four tags, at tags + 32*i for message i.
func quadFinal256() {
	f, name := f256, "final256ZQ"
	header(name, 40, "func "+name+"(s1, s2 *byte, tags *byte, u *[16]byte, tagSize int)")
	emit("MOVQ s1+0(FP), AX")
	emit("MOVQ s2+8(FP), BX")
	emit("MOVQ tags+16(FP), DI")
	emit("MOVQ u+24(FP), SI")
	emit("MOVQ tagSize+32(FP), DX")
	sets := []width{wZ, wZ.upper()}
	f.loadState(sets[0], "AX")
	f.loadState(sets[1], "BX")
	emit("VBROADCASTI32X4 (SI), Z%d", rA)
	emit("VMOVDQU64 Z%d, Z%d", rA, rA+16)
	for _, w := range sets {
		emit("VPXORQ %s, %s, %s", w.r(3), w.r(rA), w.r(rA))
	}
	emit("MOVQ $7, CX")
	label(name + "loop")
	for _, w := range sets {
		emit("VMOVDQU64 %s, %s", w.r(rA), w.r(rM0))
		f.update(w)
	}
	emit("DECQ CX")
	emit("JNZ %sloop", name)
	// foldStore folds Z register r into the tags of its two messages:
	// lanes 0-1 are the pair's first message, lanes 2-3 its second.
	foldStore := func(r, off int) {
		emit("VEXTRACTI64X4 $1, Z%d, Y13", r)
		emit("VEXTRACTI128 $1, Y%d, X10", r)
		emit("VPXOR X10, X%d, X%d", r, r)
		emit("VMOVDQU X%d, %d(DI)", r, off)
		emit("VEXTRACTI128 $1, Y13, X10")
		emit("VPXOR X10, X13, X13")
		emit("VMOVDQU X13, %d(DI)", off+32)
	}
	// xor3 sets Z register dst to the XOR of the set's state vectors a, b, c.
	xor3 := func(w width, dst, a, b, c int) {
		emit("VMOVDQU64 %s, %s", w.r(a), w.r(dst))
		emit("VPTERNLOGQ $0x96, %s, %s, %s", w.r(c), w.r(b), w.r(dst))
	}
	emit("CMPQ DX, $16")
	emit("JNE %stag32", name)
	for _, w := range sets {
		xor3(w, rZ0, 0, 1, 2)
		emit("VPTERNLOGQ $0x96, %s, %s, %s", w.r(4), w.r(3), w.r(rZ0))
		emit("VPXORQ %s, %s, %s", w.r(5), w.r(rZ0), w.r(rZ0))
	}
	foldStore(rZ0, 0)
	emit("VMOVDQU64 Z%d, Z%d", rZ0+16, rZ0)
	foldStore(rZ0, 64)
	ret(wZ)
	label(name + "tag32")
	for _, w := range sets {
		xor3(w, rZ0, 0, 1, 2)
		xor3(w, rZ1, 3, 4, 5)
	}
	foldStore(rZ0, 0)
	foldStore(rZ1, 16)
	emit("VMOVDQU64 Z%d, Z%d", rZ0+16, rZ0)
	emit("VMOVDQU64 Z%d, Z%d", rZ1+16, rZ1)
	foldStore(rZ0, 64)
	foldStore(rZ1, 80)
	ret(wZ)
}

// decLastKernel emits decLast(s, buf, mask, stride).
func (f family) decLastKernel(w width, suffix string) {
	name := func(op string) string { return op + f.name + suffix }
	nv := f.vectors()
	// decLast(s, buf, mask): decrypts the zero-padded last chunk in buf in
	// place; the plaintext is ANDed with mask (0xff for message bytes, 0 for
	// padding) before it is stored and absorbed, as the draft's DecPartial.
	header(name("decLast"), 32, "func decLast"+f.name+suffix+"(s *byte, buf *byte, mask *byte, stride int)")
	emit("MOVQ s+0(FP), AX")
	emit("MOVQ buf+8(FP), SI")
	emit("MOVQ mask+16(FP), DX")
	emit("MOVQ stride+24(FP), R10")
	emit("SHRQ $1, R10")
	f.loadState(w, "AX")
	f.keystream(w)
	for k := range nv {
		emit("%s %s, %s", w.mov, single(k, "SI"), w.r(rM0+k))
		emit("%s %s, %s, %s", w.xor, w.r(rZ0+k), w.r(rM0+k), w.r(rM0+k))
		emit("%s %s, %s", w.mov, single(k, "DX"), w.r(rZ0+k))
		emit("%s %s, %s, %s", w.and, w.r(rZ0+k), w.r(rM0+k), w.r(rM0+k))
		emit("%s %s, %s", w.mov, w.r(rM0+k), single(k, "SI"))
	}
	f.update(w)
	f.storeState(w, "AX")
	ret(w)
}

// decStep decrypts the chunk loaded in rM0 (rM1) and updates the state: the
// plaintext C ^ z goes out through rT (rCtx), and the state takes C as the
// round key and the keystream afterwards (see updateWith).
func (f family) decStep(w width, p io, q ptrs) {
	f.keystream(w)
	plain := []int{rT, rCtx}
	for k := range f.vectors() {
		emit("%s %s, %s, %s", w.xor, w.r(rZ0+k), w.r(rM0+k), w.r(plain[k]))
		p.store(w, k, plain[k], q.dstA, q.dstB)
	}
	if w.tern {
		f.updateWith(w, postDecT)
	} else {
		f.updateWith(w, postDec)
	}
}

// initKernel emits init(s, c, nonce[, nonceB]): builds the initial state from
// the per-key constants and the nonce and runs the initialization rounds.
func (f family) initKernel(w width, suffix string, p io) {
	name := "init" + f.name + suffix
	if p.pair {
		header(name, 32, "func "+name+"(s *byte, c *byte, nonceA, nonceB *byte)")
	} else {
		header(name, 24, "func "+name+"(s *byte, c *byte, nonce *byte)")
	}
	emit("MOVQ s+0(FP), AX")
	emit("MOVQ c+8(FP), BX")
	if p.pair {
		emit("MOVQ nonceA+16(FP), SI")
		emit("MOVQ nonceB+24(FP), R8")
	} else {
		emit("MOVQ nonce+16(FP), SI")
	}
	// bcast loads the 16-byte nonce part at off into register r (for pairs:
	// A's into the low half, B's into the high half).
	bcast := func(off, r int) {
		if !p.pair {
			emit("%s %d(SI), %s", w.bcast, off, w.r(r))
			return
		}
		if p.half == 16 {
			emit("VMOVDQU %d(SI), X%d", off, r)
			emit("VINSERTI128 $1, %d(R8), Y%d, Y%d", off, r, r)
			return
		}
		emit("VBROADCASTI128 %d(SI), Y%d", off, r)
		emit("VBROADCASTI128 %d(R8), Y%d", off, rT)
		emit("VINSERTI64X4 $1, Y%d, Z%d, Z%d", rT, r, r)
	}
	emit("%s %d(BX), %s", w.mov, cCtx, w.r(rCtx))
	if !f.wide {
		// A = nonce, B = key; S0 = S4 = key ^ nonce, S1 = S3 = C1, S2 = C0,
		// S5 = S7 = key ^ C0, S6 = key ^ C1.
		bcast(0, rA)
		emit("%s %d(BX), %s", w.mov, cK0, w.r(rB))
		emit("%s %s, %s, %s", w.xor, w.r(rA), w.r(rB), w.r(0))
		emit("%s %d(BX), %s", w.mov, cC1, w.r(1))
		emit("%s %d(BX), %s", w.mov, cC0, w.r(2))
		emit("%s %d(BX), %s", w.mov, cC1, w.r(3))
		emit("%s %s, %s", w.mov, w.r(0), w.r(4))
		emit("%s %d(BX), %s", w.mov, cKC0, w.r(5))
		emit("%s %d(BX), %s", w.mov, cKC1, w.r(6))
		emit("%s %d(BX), %s", w.mov, cKC0, w.r(7))
		emit("MOVQ $10, CX")
		label(name + "loop")
		emit("%s %s, %s, %s", w.xor, w.r(rCtx), w.r(3), w.r(3))
		emit("%s %s, %s, %s", w.xor, w.r(rCtx), w.r(7), w.r(7))
		emit("%s %s, %s", w.mov, w.r(rA), w.r(rM0))
		emit("%s %s, %s", w.mov, w.r(rB), w.r(rM1))
		f.update(w)
		emit("DECQ CX")
		emit("JNZ %sloop", name)
	} else {
		// Messages: k0, k1, k0 ^ n0, k1 ^ n1 (kept in 6, 7, A, B).
		bcast(0, rA)
		bcast(16, rB)
		emit("%s %d(BX), %s", w.mov, cK0, w.r(6))
		emit("%s %d(BX), %s", w.mov, cK1, w.r(7))
		emit("%s %s, %s, %s", w.xor, w.r(6), w.r(rA), w.r(rA))
		emit("%s %s, %s, %s", w.xor, w.r(7), w.r(rB), w.r(rB))
		emit("%s %s, %s", w.mov, w.r(rA), w.r(0))
		emit("%s %s, %s", w.mov, w.r(rB), w.r(1))
		emit("%s %d(BX), %s", w.mov, cC1, w.r(2))
		emit("%s %d(BX), %s", w.mov, cC0, w.r(3))
		emit("%s %d(BX), %s", w.mov, cKC0, w.r(4))
		emit("%s %d(BX), %s", w.mov, cKC1, w.r(5))
		emit("MOVQ $4, CX")
		label(name + "loop")
		for _, m := range []int{6, 7, rA, rB} {
			emit("%s %s, %s, %s", w.xor, w.r(rCtx), w.r(3), w.r(3))
			emit("%s %s, %s, %s", w.xor, w.r(rCtx), w.r(5), w.r(5))
			emit("%s %s, %s", w.mov, w.r(m), w.r(rM0))
			f.update(w)
		}
		emit("DECQ CX")
		emit("JNZ %sloop", name)
	}
	f.storeState(w, "AX")
	ret(w)
}

// finalKernel emits final(s, tag, u, tagSize): absorbs the length block seven
// times and writes the tag, folding the lanes.
func (f family) finalKernel(w width) {
	name := "final" + f.name + w.name
	header(name, 32, "func "+name+"(s *byte, tag *byte, u *[16]byte, tagSize int)")
	emit("MOVQ s+0(FP), AX")
	emit("MOVQ tag+8(FP), DI")
	emit("MOVQ u+16(FP), SI")
	emit("MOVQ tagSize+24(FP), DX")
	f.loadState(w, "AX")
	emit("%s (SI), %s", w.bcast, w.r(rA))
	src := 2
	if f.wide {
		src = 3
	}
	emit("%s %s, %s, %s", w.xor, w.r(src), w.r(rA), w.r(rA))
	emit("MOVQ $7, CX")
	label(name + "loop")
	emit("%s %s, %s", w.mov, w.r(rA), w.r(rM0))
	if !f.wide {
		emit("%s %s, %s", w.mov, w.r(rA), w.r(rM1))
	}
	f.update(w)
	emit("DECQ CX")
	emit("JNZ %sloop", name)
	fold := func(r int) {
		// Fold the lanes of register r into its low 16 bytes.
		if w.reg == "Z" {
			emit("VEXTRACTI64X4 $1, Z%d, Y%d", r, rT)
			emit("VPXOR Y%d, Y%d, Y%d", rT, r, r)
		}
		if w.reg != "X" {
			emit("VEXTRACTI128 $1, Y%d, X%d", r, rT)
			emit("VPXOR X%d, X%d, X%d", rT, r, r)
		}
	}
	xorRange := func(dst, from, to int) {
		emit("%s %s, %s", w.mov, w.r(from), w.r(dst))
		for i := from + 1; i < to; i++ {
			emit("%s %s, %s, %s", w.xor, w.r(i), w.r(dst), w.r(dst))
		}
	}
	emit("CMPQ DX, $16")
	emit("JNE %stag32", name)
	if f.wide {
		xorRange(rZ0, 0, 6)
	} else {
		xorRange(rZ0, 0, 7)
	}
	fold(rZ0)
	emit("VMOVDQU X%d, (DI)", rZ0)
	ret(w)
	label(name + "tag32")
	xorRange(rZ0, 0, f.n/2)
	xorRange(rZ1, f.n/2, f.n)
	fold(rZ0)
	fold(rZ1)
	emit("VMOVDQU X%d, (DI)", rZ0)
	emit("VMOVDQU X%d, 16(DI)", rZ1)
	ret(w)
}

// kernelSet is one entry of the generated dispatch: a family at one register
// width and encoding, and the assembly functions that implement it.
type kernelSet struct {
	fam   family
	w     width
	enc   string // Go name of the encoding constant
	impl  string // what Implementation reports
	plain string // suffix of the kernels init, absorb, decLast and final come from
	// Batch kernels: pair (two messages of this kernel in registers twice as
	// wide; pairWidth is the register width they need), quad (two pairs) and
	// dual (two messages in separate registers of this width).
	pair, pairEnc string // suffixes of the pair init/absorb and enc/dec kernels
	pairWidth     int
	pairImpl      string // what Implementation reports for batches
	quad, dual    bool
}

func (k kernelSet) constName() string { return "k" + k.fam.name + k.w.name }

// kernelSets lists the kernels main emits, in the order of the kernel enum.
func kernelSets() []kernelSet {
	var ks []kernelSet
	for _, f := range []family{f128, f256} {
		for _, w := range []width{wX, wXT, wY, wYT, wZ} {
			k := kernelSet{fam: f, w: w, enc: "encVEX", plain: w.name}
			switch {
			case w.reg == "Z":
				k.enc, k.impl = "encEVEX", "VAES-512"
			case w.tern:
				k.enc = "encTern"
			}
			switch w.reg {
			case "X":
				k.impl, k.plain = "AES-NI (AVX)", "X"
				k.pair, k.pairEnc, k.pairWidth, k.pairImpl = "YP", "YP", 32, "VAES-256"
				if w.tern {
					k.pairEnc = "YTP"
				}
			case "Y":
				k.impl, k.plain = "VAES-256", "Y"
				k.pair, k.pairEnc, k.pairWidth, k.pairImpl = "ZP", "ZP", 64, "VAES-512"
				k.quad = f.wide
				k.dual = f.wide && !w.tern
			}
			ks = append(ks, k)
		}
		ks = append(ks, kernelSet{fam: f, w: wS, enc: "encSSE", impl: "AES-NI (SSE)", plain: "S"})
	}
	return ks
}

// dispatch writes the Go side of the kernels: the kernel enum, a table of
// what each kernel is, and one switch per operation that calls the kernel's
// assembly function. The Go code consults it once per call, never per block.
func dispatch(ks []kernelSet) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("// kernel names an assembly kernel set: a family at one register width and")
	p("// instruction encoding.")
	p("type kernel uint8\n")
	p("const (")
	p("\tkNone kernel = iota")
	for _, k := range ks {
		p("\t%s", k.constName())
	}
	p(")\n")
	p("// kernelSpecs describes every kernel, indexed by kernel.")
	p("var kernelSpecs = [...]kernelSpec{")
	for _, k := range ks {
		p("\t%s: {wide: %v, width: %d, enc: %s, impl: %q, pairWidth: %d, pairImpl: %q, quad: %v, dual: %v},",
			k.constName(), k.fam.wide, k.w.bytes, k.enc, k.impl, k.pairWidth, k.pairImpl, k.quad, k.dual)
	}
	p("}\n")
	// op writes one dispatch function: fn(k, args) calls name+suffix(args)
	// for every kernel whose suffix (picked by sfx) exists.
	op := func(sig, call string, sfx func(k kernelSet) string) {
		byFunc := map[string][]string{}
		var order []string
		for _, k := range ks {
			s := sfx(k)
			if s == "" {
				continue
			}
			fn := fmt.Sprintf(call, k.fam.name+s)
			if _, ok := byFunc[fn]; !ok {
				order = append(order, fn)
			}
			byFunc[fn] = append(byFunc[fn], k.constName())
		}
		if len(order) == 0 {
			return // no kernel of this architecture has the operation
		}
		p("func %s {", sig)
		p("\tswitch k {")
		for _, fn := range order {
			p("\tcase %s:", strings.Join(byFunc[fn], ", "))
			p("\t\t%s", fn)
		}
		p("\t}")
		p("}\n")
	}
	plain := func(k kernelSet) string { return k.plain }
	own := func(k kernelSet) string { return k.w.name }
	op("kInit(k kernel, s *state, c, nonce *byte)", "init%s(&s[0], c, nonce)", plain)
	op("kAbsorb(k kernel, s *state, src *byte, n, stride int)", "absorb%s(&s[0], src, n, stride)", plain)
	op("kEnc(k kernel, s *state, dst, src *byte, n, stride int)", "enc%s(&s[0], dst, src, n, stride)", own)
	op("kDec(k kernel, s *state, dst, src *byte, n, stride int)", "dec%s(&s[0], dst, src, n, stride)", own)
	op("kDecLast(k kernel, s *state, buf, mask *byte, stride int)", "decLast%s(&s[0], buf, mask, stride)", plain)
	op("kFinal(k kernel, s *state, tag *byte, u *[16]byte, tagSize int)", "final%s(&s[0], tag, u, tagSize)", plain)
	pair := func(k kernelSet) string { return k.pair }
	pairEnc := func(k kernelSet) string { return k.pairEnc }
	op("pInit(k kernel, s *state, c, nonceA, nonceB *byte)", "init%s(&s[0], c, nonceA, nonceB)", pair)
	op("pAbsorb(k kernel, s *state, srcA, srcB *byte, n int)", "absorb%s(&s[0], srcA, srcB, n)", pair)
	op("pEnc(k kernel, s *state, dstA, srcA, dstB, srcB *byte, n int)", "enc%s(&s[0], dstA, srcA, dstB, srcB, n)", pairEnc)
	op("pDec(k kernel, s *state, dstA, srcA, dstB, srcB *byte, n int)", "dec%s(&s[0], dstA, srcA, dstB, srcB, n)", pairEnc)
	quad := func(k kernelSet) string {
		if k.quad {
			return "ZQ"
		}
		return ""
	}
	op("qInit(k kernel, s1, s2 *state, c, nonceA, nonceB, nonceC, nonceD *byte)",
		"init%s(&s1[0], &s2[0], c, nonceA, nonceB, nonceC, nonceD)", quad)
	for _, o := range []string{"Enc", "Dec"} {
		op("q"+o+"(k kernel, s1, s2 *state, dstA, srcA, dstB, srcB, dstC, srcC, dstD, srcD *byte, n int)",
			strings.ToLower(o)+"%s(&s1[0], &s2[0], dstA, srcA, dstB, srcB, dstC, srcC, dstD, srcD, n)", quad)
	}
	op("qFinal(k kernel, s1, s2 *state, tags *byte, u *[16]byte, tagSize int)", "final%s(&s1[0], &s2[0], tags, u, tagSize)", quad)
	dual := func(k kernelSet) string {
		if k.dual {
			return "YD"
		}
		return ""
	}
	for _, o := range []string{"Enc", "Dec"} {
		op("d"+o+"(k kernel, sA, sB *state, dstA, srcA, dstB, srcB *byte, n int)",
			strings.ToLower(o)+"%s(&sA[0], &sB[0], dstA, srcA, dstB, srcB, n)", dual)
	}
	return b.String()
}

// The generated files' first line and build constraints: the kernels are Go
// assembler (gc toolchain) code, and purego asks for the portable code.
const (
	generatedBy = "// Code generated by go run ./_asm. DO NOT EDIT.\n\n"
	buildTag    = "//go:build amd64 && gc && !purego"
	armBuildTag = "//go:build arm64 && gc && !purego"
)

func main() {
	dir := flag.String("o", ".", "output `directory`")
	flag.Parse()
	out.WriteString(generatedBy + buildTag + "\n\n#include \"textflag.h\"\n")
	for _, f := range []family{f128, f256} {
		for _, w := range []width{wX, wXT, wY, wYT, wZ} {
			if w.tern && w.reg != "Z" {
				f.kernels(w, w.name, io{})
				continue
			}
			f.initKernel(w, w.name, io{})
			f.kernels(w, w.name, io{})
			f.finalKernel(w)
		}
	}
	// The X kernels again in the legacy SSE encoding.
	sseMode = true
	for _, f := range []family{f128, f256} {
		f.initKernel(wS, wS.name, io{})
		f.kernels(wS, wS.name, io{})
		f.finalKernel(wS)
	}
	sseMode = false
	// Pairs: two AEGIS-128L or AEGIS-256 messages in Y registers, two
	// AEGIS-128X2 or AEGIS-256X2 messages in Z registers.
	for _, f := range []family{f128, f256} {
		f.initKernel(wY, "YP", io{pair: true, half: 16})
		f.kernels(wY, "YP", io{pair: true, half: 16})
		f.kernels(wYT, "YTP", io{pair: true, half: 16})
	}
	for _, f := range []family{f128, f256} {
		f.initKernel(wZ, "ZP", io{pair: true, half: 32})
		f.kernels(wZ, "ZP", io{pair: true, half: 32})
	}
	// Duals: two AEGIS-256X2 messages in Y registers without AVX-512.
	dualKernels256()
	// Quads: two AEGIS-256X2 pairs.
	quadInit256()
	f256.quadKernels(wZ, "ZQ", io{pair: true, half: 32})
	quadFinal256()
	// x/sys/cpu reports VAES only together with AVX-512; the Y kernels need
	// the VAES bit on AVX2-only CPUs too, so read it directly.
	header("cpuidECX7", 4, "func cpuidECX7() uint32")
	emit("MOVL $7, AX")
	emit("XORL CX, CX")
	emit("CPUID")
	emit("MOVL CX, ret+0(FP)")
	emit("RET")
	armAsm, armGo := neon()
	files := map[string]string{
		"aegis_amd64.s":        out.String(),
		"aegis_stubs_amd64.go": goSource(buildTag, stubs.String()+"\n"+dispatch(kernelSets())),
		"aegis_arm64.s":        armAsm,
		"aegis_stubs_arm64.go": goSource(armBuildTag, armGo),
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(*dir, name), []byte(text), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

// goSource returns a generated Go file of package aegis, gofmt'ed.
func goSource(tag, body string) string {
	src, err := format.Source([]byte(generatedBy + tag + "\n\npackage aegis\n" + body))
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen: formatting the Go declarations:", err)
		os.Exit(1)
	}
	return string(src)
}
