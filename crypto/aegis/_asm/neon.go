package main

import (
	"fmt"
	"strings"
)

// This file emits aegis_arm64.s: the kernels for ARMv8 CPUs with the
// cryptography extension. The AEGIS round AESRound(x, k) is
// MixColumns(ShiftRows(SubBytes(x))) ^ k; ARM's AESE adds its key before
// SubBytes, so a round is AESE with a zero key, AESMC, and EOR with k (AESE
// and AESMC on the same register fuse on most cores). The kernels hold one
// lane (16 bytes per state vector) and have the same arguments and memory
// layout as the amd64 X kernels, so the Go side runs the X2 and X4 variants
// as lane groups, as it does on amd64 CPUs without VAES.
//
// Registers: V0-V7 state, V8 and V9 message, V10 and V11 keystream, V12-V15
// temporaries, V16-V23 round outputs, V24-V27 init messages, V28 lane
// context, V31 zero. R0 state, R1 constants or destination, R2 source, R3
// count, R5 stride, R6 half the stride, R9 and R10 addresses.

type neonEmitter struct {
	out, stubs strings.Builder
}

func (e *neonEmitter) emit(format string, args ...any) {
	fmt.Fprintf(&e.out, "\t"+format+"\n", args...)
}

func (e *neonEmitter) label(l string) { fmt.Fprintf(&e.out, "%s:\n", l) }

func (e *neonEmitter) header(name string, frame int, sig string) {
	fmt.Fprintf(&e.out, "\n// %s\nTEXT ·%s(SB), NOSPLIT, $0-%d\n", sig, name, frame)
	e.stubs.WriteString("\n//go:noescape\n" + sig + "\n")
}

func v(i int) string { return fmt.Sprintf("V%d.B16", i) }

// regList is a register list of consecutive registers from..to-1.
func regList(from, to int) string {
	var r []string
	for i := from; i < to; i++ {
		r = append(r, v(i))
	}
	return "[" + strings.Join(r, ", ") + "]"
}

// ld loads 16 bytes at off(base) into register r.
func (e *neonEmitter) ld(r int, base string, off int) {
	if off == 0 {
		e.emit("VLD1 (%s), [%s]", base, v(r))
		return
	}
	e.emit("ADD $%d, %s, R9", off, base)
	e.emit("VLD1 (R9), [%s]", v(r))
}

func (e *neonEmitter) st(r int, base string, off int) {
	if off == 0 {
		e.emit("VST1 [%s], (%s)", v(r), base)
		return
	}
	e.emit("ADD $%d, %s, R9", off, base)
	e.emit("VST1 [%s], (R9)", v(r))
}

// loadState and storeState move the n state vectors (16 bytes each) between
// memory at base and V0..Vn-1, four at a time.
func (e *neonEmitter) loadState(n int, base string) {
	e.emit("VLD1 (%s), %s", base, regList(0, 4))
	e.emit("ADD $64, %s, R9", base)
	e.emit("VLD1 (R9), %s", regList(4, n))
}

func (e *neonEmitter) storeState(n int, base string) {
	e.emit("VST1 %s, (%s)", regList(0, 4), base)
	e.emit("ADD $64, %s, R9", base)
	e.emit("VST1 %s, (R9)", regList(4, n))
}

// update is the state update with the message in m0 (and m1 for the 128
// family): every round reads the old state, so the round outputs go to
// V16.. first and are XORed into the state afterwards.
func (e *neonEmitter) update(f family, m0, m1 int) {
	n := f.n
	for i := range n {
		src := (i + n - 1) % n
		e.emit("VMOV %s, %s", v(src), v(16+i))
		e.emit("AESE %s, %s", v(31), v(16+i))
		e.emit("AESMC %s, %s", v(16+i), v(16+i))
	}
	for i := range n {
		e.emit("VEOR %s, %s, %s", v(16+i), v(i), v(i))
	}
	e.emit("VEOR %s, V0.B16, V0.B16", v(m0))
	if !f.wide {
		e.emit("VEOR %s, V4.B16, V4.B16", v(m1))
	}
}

// keystream computes z0 into V10 (and z1 into V11).
func (e *neonEmitter) keystream(f family) {
	if f.wide { // z = S1 ^ S4 ^ S5 ^ (S2 & S3)
		e.emit("VAND V3.B16, V2.B16, V10.B16")
		e.emit("VEOR V4.B16, V1.B16, V12.B16")
		e.emit("VEOR V5.B16, V10.B16, V10.B16")
		e.emit("VEOR V12.B16, V10.B16, V10.B16")
		return
	}
	// z0 = S1 ^ S6 ^ (S2 & S3), z1 = S2 ^ S5 ^ (S6 & S7)
	e.emit("VAND V3.B16, V2.B16, V10.B16")
	e.emit("VEOR V6.B16, V1.B16, V12.B16")
	e.emit("VEOR V12.B16, V10.B16, V10.B16")
	e.emit("VAND V7.B16, V6.B16, V11.B16")
	e.emit("VEOR V5.B16, V2.B16, V13.B16")
	e.emit("VEOR V13.B16, V11.B16, V11.B16")
}

// loadMsg loads the chunk at R2 into V8 (and V9 at R2 plus half the stride).
func (e *neonEmitter) loadMsg(f family, base string) {
	e.emit("VLD1 (%s), [V8.B16]", base)
	if !f.wide {
		e.emit("ADD R6, %s, R10", base)
		e.emit("VLD1 (R10), [V9.B16]")
	}
}

func (e *neonEmitter) storeMsg(f family, r0, r1 int, base string) {
	e.emit("VST1 [%s], (%s)", v(r0), base)
	if !f.wide {
		e.emit("ADD R6, %s, R10", base)
		e.emit("VST1 [%s], (R10)", v(r1))
	}
}

func (e *neonEmitter) zero() { e.emit("VEOR V31.B16, V31.B16, V31.B16") }

func (e *neonEmitter) kernels(f family) {
	name := func(op string) string { return op + f.name + "N" }

	// init(s, c, nonce)
	e.header(name("init"), 24, "func "+name("init")+"(s *byte, c *byte, nonce *byte)")
	e.emit("MOVD s+0(FP), R0")
	e.emit("MOVD c+8(FP), R1")
	e.emit("MOVD nonce+16(FP), R2")
	e.zero()
	e.ld(28, "R1", cCtx)
	if f.wide {
		// Messages k0, k1, k0 ^ n0, k1 ^ n1 in V24-V27.
		e.ld(24, "R1", cK0)
		e.ld(25, "R1", cK1)
		e.ld(26, "R2", 0)
		e.ld(27, "R2", 16)
		e.emit("VEOR V24.B16, V26.B16, V26.B16")
		e.emit("VEOR V25.B16, V27.B16, V27.B16")
		e.emit("VMOV V26.B16, V0.B16")
		e.emit("VMOV V27.B16, V1.B16")
		e.ld(2, "R1", cC1)
		e.ld(3, "R1", cC0)
		e.ld(4, "R1", cKC0)
		e.ld(5, "R1", cKC1)
		e.emit("MOVD $4, R3")
		e.label(name("init") + "loop")
		for _, m := range []int{24, 25, 26, 27} {
			e.emit("VEOR V28.B16, V3.B16, V3.B16")
			e.emit("VEOR V28.B16, V5.B16, V5.B16")
			e.update(f, m, 0)
		}
	} else {
		// Messages: nonce (V24) and key (V25).
		e.ld(24, "R2", 0)
		e.ld(25, "R1", cK0)
		e.emit("VEOR V24.B16, V25.B16, V0.B16")
		e.ld(1, "R1", cC1)
		e.ld(2, "R1", cC0)
		e.emit("VMOV V1.B16, V3.B16")
		e.emit("VMOV V0.B16, V4.B16")
		e.ld(5, "R1", cKC0)
		e.ld(6, "R1", cKC1)
		e.emit("VMOV V5.B16, V7.B16")
		e.emit("MOVD $10, R3")
		e.label(name("init") + "loop")
		e.emit("VEOR V28.B16, V3.B16, V3.B16")
		e.emit("VEOR V28.B16, V7.B16, V7.B16")
		e.update(f, 24, 25)
	}
	e.emit("SUBS $1, R3, R3")
	e.emit("BNE %sloop", name("init"))
	e.storeState(f.n, "R0")
	e.emit("RET")

	// absorb(s, src, n, stride)
	e.header(name("absorb"), 32, "func "+name("absorb")+"(s *byte, src *byte, n int, stride int)")
	e.emit("MOVD s+0(FP), R0")
	e.emit("MOVD src+8(FP), R2")
	e.emit("MOVD n+16(FP), R3")
	e.emit("MOVD stride+24(FP), R5")
	e.emit("LSR $1, R5, R6")
	e.zero()
	e.loadState(f.n, "R0")
	e.emit("CBZ R3, %sdone", name("absorb"))
	e.label(name("absorb") + "loop")
	e.loadMsg(f, "R2")
	e.update(f, 8, 9)
	e.emit("ADD R5, R2, R2")
	e.emit("SUBS $1, R3, R3")
	e.emit("BNE %sloop", name("absorb"))
	e.label(name("absorb") + "done")
	e.storeState(f.n, "R0")
	e.emit("RET")

	// enc and dec(s, dst, src, n, stride)
	for _, op := range []string{"enc", "dec"} {
		e.header(name(op), 40, "func "+name(op)+"(s *byte, dst, src *byte, n int, stride int)")
		e.emit("MOVD s+0(FP), R0")
		e.emit("MOVD dst+8(FP), R1")
		e.emit("MOVD src+16(FP), R2")
		e.emit("MOVD n+24(FP), R3")
		e.emit("MOVD stride+32(FP), R5")
		e.emit("LSR $1, R5, R6")
		e.zero()
		e.loadState(f.n, "R0")
		e.emit("CBZ R3, %sdone", name(op))
		e.label(name(op) + "loop")
		e.keystream(f)
		e.loadMsg(f, "R2")
		if op == "enc" {
			// Ciphertext = message ^ z; the state absorbs the message.
			e.emit("VEOR V8.B16, V10.B16, V12.B16")
			if !f.wide {
				e.emit("VEOR V9.B16, V11.B16, V13.B16")
			}
		} else {
			// Plaintext = ciphertext ^ z, kept in V8 (V9) for the update.
			e.emit("VEOR V8.B16, V10.B16, V8.B16")
			if !f.wide {
				e.emit("VEOR V9.B16, V11.B16, V9.B16")
			}
		}
		if op == "enc" {
			e.storeMsg(f, 12, 13, "R1")
		} else {
			e.storeMsg(f, 8, 9, "R1")
		}
		e.update(f, 8, 9)
		e.emit("ADD R5, R1, R1")
		e.emit("ADD R5, R2, R2")
		e.emit("SUBS $1, R3, R3")
		e.emit("BNE %sloop", name(op))
		e.label(name(op) + "done")
		e.storeState(f.n, "R0")
		e.emit("RET")
	}

	// decLast(s, buf, mask, stride): decrypts the zero-padded last chunk in
	// buf in place; the plaintext is ANDed with the mask (0xff for message
	// bytes, 0 for padding) before it is stored and absorbed.
	e.header(name("decLast"), 32, "func "+name("decLast")+"(s *byte, buf *byte, mask *byte, stride int)")
	e.emit("MOVD s+0(FP), R0")
	e.emit("MOVD buf+8(FP), R2")
	e.emit("MOVD mask+16(FP), R1")
	e.emit("MOVD stride+24(FP), R5")
	e.emit("LSR $1, R5, R6")
	e.zero()
	e.loadState(f.n, "R0")
	e.keystream(f)
	e.loadMsg(f, "R2")
	e.emit("VEOR V8.B16, V10.B16, V8.B16")
	e.emit("VLD1 (R1), [V12.B16]")
	e.emit("VAND V12.B16, V8.B16, V8.B16")
	if !f.wide {
		e.emit("VEOR V9.B16, V11.B16, V9.B16")
		e.emit("ADD R6, R1, R10")
		e.emit("VLD1 (R10), [V13.B16]")
		e.emit("VAND V13.B16, V9.B16, V9.B16")
	}
	e.storeMsg(f, 8, 9, "R2")
	e.update(f, 8, 9)
	e.storeState(f.n, "R0")
	e.emit("RET")

	// final(s, tag, u, tagSize)
	e.header(name("final"), 32, "func "+name("final")+"(s *byte, tag *byte, u *[16]byte, tagSize int)")
	e.emit("MOVD s+0(FP), R0")
	e.emit("MOVD tag+8(FP), R1")
	e.emit("MOVD u+16(FP), R2")
	e.emit("MOVD tagSize+24(FP), R4")
	e.zero()
	e.loadState(f.n, "R0")
	e.emit("VLD1 (R2), [V24.B16]")
	src := 2
	if f.wide {
		src = 3
	}
	e.emit("VEOR %s, V24.B16, V24.B16", v(src))
	e.emit("MOVD $7, R3")
	e.label(name("final") + "loop")
	e.update(f, 24, 24)
	e.emit("SUBS $1, R3, R3")
	e.emit("BNE %sloop", name("final"))
	xorRange := func(dst, from, to int) {
		e.emit("VMOV %s, %s", v(from), v(dst))
		for i := from + 1; i < to; i++ {
			e.emit("VEOR %s, %s, %s", v(i), v(dst), v(dst))
		}
	}
	e.emit("CMP $16, R4")
	e.emit("BNE %stag32", name("final"))
	if f.wide {
		xorRange(10, 0, 6)
	} else {
		xorRange(10, 0, 7)
	}
	e.emit("VST1 [V10.B16], (R1)")
	e.emit("RET")
	e.label(name("final") + "tag32")
	xorRange(10, 0, f.n/2)
	xorRange(11, f.n/2, f.n)
	e.emit("VST1 [V10.B16, V11.B16], (R1)")
	e.emit("RET")
}

// neonKernelSets lists the arm64 kernels for the dispatch.
func neonKernelSets() []kernelSet {
	var ks []kernelSet
	for _, f := range []family{f128, f256} {
		ks = append(ks, kernelSet{fam: f, w: width{name: "N", bytes: 16}, enc: "encNEON",
			impl: "ARMv8 AES", plain: "N"})
	}
	return ks
}

// neon returns the arm64 assembly and its Go declarations and dispatch.
func neon() (asm, goDecls string) {
	var e neonEmitter
	e.out.WriteString(generatedBy + armBuildTag + "\n\n#include \"textflag.h\"\n")
	for _, f := range []family{f128, f256} {
		e.kernels(f)
	}
	return e.out.String(), e.stubs.String() + "\n" + dispatch(neonKernelSets())
}
