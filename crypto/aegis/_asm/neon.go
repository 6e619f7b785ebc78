package main

import (
	"fmt"
	"strings"
)

// This file emits aegis_arm64.s: the kernels for ARMv8 CPUs with the
// cryptography extension. The AEGIS round AESRound(x, k) is
// MixColumns(ShiftRows(SubBytes(x))) ^ k; ARM's AESE adds its key before
// SubBytes, so a round is AESE with a zero key, AESMC, and EOR with k (AESE
// and AESMC on the same register fuse on most cores). The N kernels hold one
// lane (16 bytes per state vector), the N2 kernels two lanes in separate
// registers, so that one pass over an X2 message issues both lanes' rounds;
// AEGIS-128X4 and AEGIS-256X4 run as two lane groups of N2. The arguments
// and memory layout are those of the amd64 kernels: state vector i at
// i*16*lanes bytes, lane j of it 16*j further.
//
// Registers: state vector i of lane j in V(i*lanes+j) (V0-V15), message
// vectors V16-V19 (m0 of lane j in V16+j, m1 in V18+j), round outputs and
// keystream V20-V27, lane contexts V28-V29, a temporary V30, zero V31. R0
// state, R1 constants or destination, R2 source, R3 count, R5 stride, R6
// half the stride, R9 and R10 addresses.

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

// loadState and storeState move the n*lanes state vectors (16 bytes each)
// between memory at base and V0.., four at a time.
func (e *neonEmitter) loadState(n int, base string) { e.moveState("VLD1 (%s), %s", n, base) }

func (e *neonEmitter) storeState(n int, base string) { e.moveState("VST1 %[2]s, (%[1]s)", n, base) }

func (e *neonEmitter) moveState(format string, n int, base string) {
	for i := 0; i < n; i += 4 {
		addr := base
		if i > 0 {
			e.emit("ADD $%d, %s, R9", 16*i, base)
			addr = "R9"
		}
		e.emit(format, addr, regList(i, min(i+4, n)))
	}
}

// lanes is the number of lanes a kernel holds.
type neonKernel struct {
	f     family
	lanes int
	name  string // suffix: N, N2
}

// s is the register of state vector i, lane j.
func (k neonKernel) s(i, j int) int { return i*k.lanes + j }

// update is the state update with the message of lane j in m0[j] (and
// m1[j] for the 128 family). Every round reads the old state, so a lane's
// round outputs go to V20.. first and are XORed into its state afterwards.
func (e *neonEmitter) update(k neonKernel, m0, m1 []int) {
	n := k.f.n
	for j := range k.lanes {
		for i := range n {
			e.emit("VMOV %s, %s", v(k.s((i+n-1)%n, j)), v(20+i))
			e.emit("AESE %s, %s", v(31), v(20+i))
			e.emit("AESMC %s, %s", v(20+i), v(20+i))
		}
		for i := range n {
			e.emit("VEOR %s, %s, %s", v(20+i), v(k.s(i, j)), v(k.s(i, j)))
		}
		e.emit("VEOR %s, %s, %s", v(m0[j]), v(k.s(0, j)), v(k.s(0, j)))
		if !k.f.wide {
			e.emit("VEOR %s, %s, %s", v(m1[j]), v(k.s(4, j)), v(k.s(4, j)))
		}
	}
}

// msgRegs are the message registers of the kernel's lanes.
func (k neonKernel) msgRegs() (m0, m1 []int) {
	for j := range k.lanes {
		m0 = append(m0, 16+j)
		m1 = append(m1, 18+j)
	}
	return
}

// z0 and z1 are the keystream registers of lane j.
func (k neonKernel) z0(j int) int { return 20 + 2*j }
func (k neonKernel) z1(j int) int { return 21 + 2*j }

// keystream computes every lane's keystream into z0 (and z1).
func (e *neonEmitter) keystream(k neonKernel) {
	for j := range k.lanes {
		s := func(i int) string { return v(k.s(i, j)) }
		z0, z1 := v(k.z0(j)), v(k.z1(j))
		if k.f.wide { // z = S1 ^ S4 ^ S5 ^ (S2 & S3)
			e.emit("VAND %s, %s, %s", s(3), s(2), z0)
			e.emit("VEOR %s, %s, V30.B16", s(4), s(1))
			e.emit("VEOR %s, %s, %s", s(5), z0, z0)
			e.emit("VEOR V30.B16, %s, %s", z0, z0)
			continue
		}
		// z0 = S1 ^ S6 ^ (S2 & S3), z1 = S2 ^ S5 ^ (S6 & S7)
		e.emit("VAND %s, %s, %s", s(3), s(2), z0)
		e.emit("VEOR %s, %s, V30.B16", s(6), s(1))
		e.emit("VEOR V30.B16, %s, %s", z0, z0)
		e.emit("VAND %s, %s, %s", s(7), s(6), z1)
		e.emit("VEOR %s, %s, V30.B16", s(5), s(2))
		e.emit("VEOR V30.B16, %s, %s", z1, z1)
	}
}

// moveMsg loads (or stores) the chunk at base: m0 of lane j at 16*j, m1
// at half the stride (R6) plus 16*j, in the registers r0 and r1.
func (e *neonEmitter) moveMsg(k neonKernel, load bool, r0, r1 []int, base string) {
	move := func(r []int, addr string) {
		if load {
			e.emit("VLD1 (%s), %s", addr, regList(r[0], r[0]+len(r)))
		} else {
			e.emit("VST1 %s, (%s)", regList(r[0], r[0]+len(r)), addr)
		}
	}
	move(r0, base)
	if !k.f.wide {
		e.emit("ADD R6, %s, R10", base)
		move(r1, "R10")
	}
}

func (e *neonEmitter) zero() { e.emit("VEOR V31.B16, V31.B16, V31.B16") }

// lanesOf repeats register r for every lane.
func (k neonKernel) lanesOf(r int) []int {
	var rs []int
	for range k.lanes {
		rs = append(rs, r)
	}
	return rs
}

// kernels emits the kernels of k: init, absorb, enc, dec, decLast and final.
func (e *neonEmitter) kernels(k neonKernel) {
	e.initKernel(k)
	e.absorbKernel(k)
	e.cryptKernel(k, "enc")
	e.cryptKernel(k, "dec")
	e.decLastKernel(k)
	e.finalKernel(k)
}

// fn is the name of k's kernel op.
func (k neonKernel) fn(op string) string { return op + k.f.name + k.name }

// nv is the number of state registers.
func (k neonKernel) nv() int { return k.f.n * k.lanes }

// ldc loads constant vector off (a cXXX offset) of lane j into r.
func (e *neonEmitter) ldc(r int, off, j int) { e.ld(r, "R1", off+16*j) }

// initKernel emits init(s, c, nonce).
func (e *neonEmitter) initKernel(k neonKernel) {
	e.header(k.fn("init"), 24, "func "+k.fn("init")+"(s *byte, c *byte, nonce *byte)")
	e.emit("MOVD s+0(FP), R0")
	e.emit("MOVD c+8(FP), R1")
	e.emit("MOVD nonce+16(FP), R2")
	e.zero()
	for j := range k.lanes {
		e.ldc(28+j, cCtx, j)
	}
	if k.f.wide {
		e.initWide(k)
	} else {
		e.initNarrow(k)
	}
	e.emit("SUBS $1, R3, R3")
	e.emit("BNE %sloop", k.fn("init"))
	e.storeState(k.nv(), "R0")
	e.emit("RET")
}

// initWide emits the set-up and the loop body of the 256 family's init: the
// four updates with k0, k1, k0 ^ n0 and k1 ^ n1, run four times (R3).
func (e *neonEmitter) initWide(k neonKernel) {
	// Messages k0, k1, k0 ^ n0, k1 ^ n1 in V16-V19, the same for every
	// lane; S0 = k0 ^ n0, S1 = k1 ^ n1, S2 = C1, S3 = C0, S4 = k0 ^ C0,
	// S5 = k1 ^ C1.
	e.ldc(16, cK0, 0)
	e.ldc(17, cK1, 0)
	e.ld(18, "R2", 0)
	e.ld(19, "R2", 16)
	e.emit("VEOR V16.B16, V18.B16, V18.B16")
	e.emit("VEOR V17.B16, V19.B16, V19.B16")
	for j := range k.lanes {
		e.emit("VMOV V18.B16, %s", v(k.s(0, j)))
		e.emit("VMOV V19.B16, %s", v(k.s(1, j)))
		e.ldc(k.s(2, j), cC1, j)
		e.ldc(k.s(3, j), cC0, j)
		e.ldc(k.s(4, j), cKC0, j)
		e.ldc(k.s(5, j), cKC1, j)
	}
	e.emit("MOVD $4, R3")
	e.label(k.fn("init") + "loop")
	for _, m := range []int{16, 17, 18, 19} {
		e.xorCtx(k, 3, 5)
		e.update(k, k.lanesOf(m), nil)
	}
}

// initNarrow emits the set-up and the loop body of the 128 family's init: the
// update with the nonce and the key, run ten times (R3).
func (e *neonEmitter) initNarrow(k neonKernel) {
	// Messages: nonce (V16) and key (V18) for every lane; S0 = S4 =
	// key ^ nonce, S1 = S3 = C1, S2 = C0, S5 = S7 = key ^ C0, S6 =
	// key ^ C1.
	e.ld(16, "R2", 0)
	e.ldc(18, cK0, 0)
	e.emit("VEOR V16.B16, V18.B16, V30.B16")
	for j := range k.lanes {
		e.emit("VMOV V30.B16, %s", v(k.s(0, j)))
		e.emit("VMOV V30.B16, %s", v(k.s(4, j)))
		e.ldc(k.s(1, j), cC1, j)
		e.ldc(k.s(2, j), cC0, j)
		e.emit("VMOV %s, %s", v(k.s(1, j)), v(k.s(3, j)))
		e.ldc(k.s(5, j), cKC0, j)
		e.ldc(k.s(6, j), cKC1, j)
		e.emit("VMOV %s, %s", v(k.s(5, j)), v(k.s(7, j)))
	}
	e.emit("MOVD $10, R3")
	e.label(k.fn("init") + "loop")
	e.xorCtx(k, 3, 7)
	e.update(k, k.lanesOf(16), k.lanesOf(18))
}

// xorCtx XORs each lane's context (V28 + lane) into its state vectors a and b,
// as every init round does before its update.
func (e *neonEmitter) xorCtx(k neonKernel, a, b int) {
	for j := range k.lanes {
		e.emit("VEOR %s, %s, %s", v(28+j), v(k.s(a, j)), v(k.s(a, j)))
		e.emit("VEOR %s, %s, %s", v(28+j), v(k.s(b, j)), v(k.s(b, j)))
	}
}

// absorbKernel emits absorb(s, src, n, stride).
func (e *neonEmitter) absorbKernel(k neonKernel) {
	m0, m1 := k.msgRegs()
	e.header(k.fn("absorb"), 32, "func "+k.fn("absorb")+"(s *byte, src *byte, n int, stride int)")
	e.emit("MOVD s+0(FP), R0")
	e.emit("MOVD src+8(FP), R2")
	e.emit("MOVD n+16(FP), R3")
	e.emit("MOVD stride+24(FP), R5")
	e.emit("LSR $1, R5, R6")
	e.zero()
	e.loadState(k.nv(), "R0")
	e.emit("CBZ R3, %sdone", k.fn("absorb"))
	e.label(k.fn("absorb") + "loop")
	e.moveMsg(k, true, m0, m1, "R2")
	e.update(k, m0, m1)
	e.emit("ADD R5, R2, R2")
	e.emit("SUBS $1, R3, R3")
	e.emit("BNE %sloop", k.fn("absorb"))
	e.label(k.fn("absorb") + "done")
	e.storeState(k.nv(), "R0")
	e.emit("RET")
}

// cryptKernel emits op(s, dst, src, n, stride), op being enc or dec.
func (e *neonEmitter) cryptKernel(k neonKernel, op string) {
	m0, m1 := k.msgRegs()
	e.header(k.fn(op), 40, "func "+k.fn(op)+"(s *byte, dst, src *byte, n int, stride int)")
	e.emit("MOVD s+0(FP), R0")
	e.emit("MOVD dst+8(FP), R1")
	e.emit("MOVD src+16(FP), R2")
	e.emit("MOVD n+24(FP), R3")
	e.emit("MOVD stride+32(FP), R5")
	e.emit("LSR $1, R5, R6")
	e.zero()
	e.loadState(k.nv(), "R0")
	e.emit("CBZ R3, %sdone", k.fn(op))
	e.label(k.fn(op) + "loop")
	e.keystream(k)
	e.moveMsg(k, true, m0, m1, "R2")
	// The keystream registers take the output: for enc the ciphertext
	// (the state absorbs the message), for dec the plaintext, which
	// also goes to the message registers for the update.
	var out0, out1 []int
	for j := range k.lanes {
		e.emit("VEOR %s, %s, %s", v(m0[j]), v(k.z0(j)), v(k.z0(j)))
		out0 = append(out0, k.z0(j))
		if !k.f.wide {
			e.emit("VEOR %s, %s, %s", v(m1[j]), v(k.z1(j)), v(k.z1(j)))
			out1 = append(out1, k.z1(j))
		}
		if op == "dec" {
			e.emit("VMOV %s, %s", v(k.z0(j)), v(m0[j]))
			if !k.f.wide {
				e.emit("VMOV %s, %s", v(k.z1(j)), v(m1[j]))
			}
		}
	}
	e.storeOut(k, out0, out1, "R1")
	e.update(k, m0, m1)
	e.emit("ADD R5, R1, R1")
	e.emit("ADD R5, R2, R2")
	e.emit("SUBS $1, R3, R3")
	e.emit("BNE %sloop", k.fn(op))
	e.label(k.fn(op) + "done")
	e.storeState(k.nv(), "R0")
	e.emit("RET")
}

// decLastKernel emits decLast(s, buf, mask, stride): it decrypts the
// zero-padded last chunk in buf in place; the plaintext is ANDed with the mask
// (0xff for message bytes, 0 for padding) before it is stored and absorbed.
func (e *neonEmitter) decLastKernel(k neonKernel) {
	m0, m1 := k.msgRegs()
	e.header(k.fn("decLast"), 32, "func "+k.fn("decLast")+"(s *byte, buf *byte, mask *byte, stride int)")
	e.emit("MOVD s+0(FP), R0")
	e.emit("MOVD buf+8(FP), R2")
	e.emit("MOVD mask+16(FP), R1")
	e.emit("MOVD stride+24(FP), R5")
	e.emit("LSR $1, R5, R6")
	e.zero()
	e.loadState(k.nv(), "R0")
	e.keystream(k)
	e.moveMsg(k, true, m0, m1, "R2")
	for j := range k.lanes {
		e.emit("VEOR %s, %s, %s", v(k.z0(j)), v(m0[j]), v(m0[j]))
		if !k.f.wide {
			e.emit("VEOR %s, %s, %s", v(k.z1(j)), v(m1[j]), v(m1[j]))
		}
	}
	// The masks go to V24.. (keystream no longer needed).
	var mk0, mk1 []int
	for j := range k.lanes {
		mk0 = append(mk0, 24+j)
		mk1 = append(mk1, 26+j)
	}
	e.moveMsg(k, true, mk0, mk1, "R1")
	for j := range k.lanes {
		e.emit("VAND %s, %s, %s", v(mk0[j]), v(m0[j]), v(m0[j]))
		if !k.f.wide {
			e.emit("VAND %s, %s, %s", v(mk1[j]), v(m1[j]), v(m1[j]))
		}
	}
	e.moveMsg(k, false, m0, m1, "R2")
	e.update(k, m0, m1)
	e.storeState(k.nv(), "R0")
	e.emit("RET")
}

// finalKernel emits final(s, tag, u, tagSize): the tag of every lane, XORed
// together.
func (e *neonEmitter) finalKernel(k neonKernel) {
	m0, _ := k.msgRegs()
	e.header(k.fn("final"), 32, "func "+k.fn("final")+"(s *byte, tag *byte, u *[16]byte, tagSize int)")
	e.emit("MOVD s+0(FP), R0")
	e.emit("MOVD tag+8(FP), R1")
	e.emit("MOVD u+16(FP), R2")
	e.emit("MOVD tagSize+24(FP), R4")
	e.zero()
	e.loadState(k.nv(), "R0")
	e.emit("VLD1 (R2), [V30.B16]")
	src := 2
	if k.f.wide {
		src = 3
	}
	for j := range k.lanes {
		e.emit("VEOR %s, V30.B16, %s", v(k.s(src, j)), v(m0[j]))
	}
	e.emit("MOVD $7, R3")
	e.label(k.fn("final") + "loop")
	e.update(k, m0, m0)
	e.emit("SUBS $1, R3, R3")
	e.emit("BNE %sloop", k.fn("final"))
	// xorRange sets dst to the XOR of state vectors from..to-1 of all lanes.
	xorRange := func(dst, from, to int) {
		e.emit("VMOV %s, %s", v(k.s(from, 0)), v(dst))
		for i := from; i < to; i++ {
			for j := range k.lanes {
				if i == from && j == 0 {
					continue
				}
				e.emit("VEOR %s, %s, %s", v(k.s(i, j)), v(dst), v(dst))
			}
		}
	}
	e.emit("CMP $16, R4")
	e.emit("BNE %stag32", k.fn("final"))
	if k.f.wide {
		xorRange(20, 0, 6)
	} else {
		xorRange(20, 0, 7)
	}
	e.emit("VST1 [V20.B16], (R1)")
	e.emit("RET")
	e.label(k.fn("final") + "tag32")
	xorRange(20, 0, k.f.n/2)
	xorRange(21, k.f.n/2, k.f.n)
	e.emit("VST1 [V20.B16, V21.B16], (R1)")
	e.emit("RET")
}

// storeOut stores the output registers: consecutive registers per vector
// (out0 of every lane, then out1) are not consecutive across z0/z1, so each
// lane's vector is stored on its own.
func (e *neonEmitter) storeOut(k neonKernel, out0, out1 []int, base string) {
	for j, r := range out0 {
		e.st(r, base, 16*j)
	}
	if !k.f.wide {
		e.emit("ADD R6, %s, R10", base)
		for j, r := range out1 {
			e.st(r, "R10", 16*j)
		}
	}
}

// neonKernels lists the arm64 kernels: one and two lanes per family.
var neonKernels = []neonKernel{{f128, 1, "N"}, {f128, 2, "N2"}, {f256, 1, "N"}, {f256, 2, "N2"}}

// neonKernelSets lists the arm64 kernels for the dispatch.
func neonKernelSets() []kernelSet {
	var ks []kernelSet
	for _, k := range neonKernels {
		ks = append(ks, kernelSet{fam: k.f, w: width{name: k.name, bytes: 16 * k.lanes}, enc: "encNEON",
			impl: "ARMv8 AES", plain: k.name})
	}
	return ks
}

// neon returns the arm64 assembly and its Go declarations and dispatch.
func neon() (asm, goDecls string) {
	var e neonEmitter
	e.out.WriteString(generatedBy + armBuildTag + "\n\n#include \"textflag.h\"\n")
	for _, k := range neonKernels {
		e.kernels(k)
	}
	return e.out.String(), e.stubs.String() + "\n" + dispatch(neonKernelSets())
}
