//go:build arm64 && gc && !purego

package aegis

import "golang.org/x/sys/cpu"

// encoding is the instruction encoding of a kernel set: on arm64 only the
// ARMv8 cryptography extension's AESE and AESMC on NEON registers.
type encoding uint8

const encNEON encoding = 0

// features are the CPU features a key may use. GODEBUG=cpu.aes=off, which
// x/sys/cpu applies, turns the kernels off (the tests use it).
type features struct {
	aes bool
}

var cpuFeatures = features{cpu.ARM64.HasAES}

// kernelFor picks the NEON kernel of the variant's family: one lane for
// AEGIS-128L and AEGIS-256, two lanes for the X variants; the X4 variants
// run as two lane groups over interleaved data.
func kernelFor(v *variant, f features) (k kernel, groups int) {
	if !f.aes {
		return kNone, 0
	}
	width := 16 * min(v.lanes, 2)
	return findKernel(v.wide, width, encNEON), v.lanes * 16 / width
}

func (a *aead) implementation() string {
	if a.impl.k == kNone {
		return portableName
	}
	s := kernelSpecs[a.impl.k].impl
	if g := a.impl.groups; g > 1 {
		s += ", " + string(rune('0'+g)) + " passes"
	}
	return s
}

func (a *aead) sealBatch(dsts, nonces, msgs, ads [][]byte) { a.sealBatchLoop(dsts, nonces, msgs, ads) }

func (a *aead) openBatch(dsts, nonces, cts, ads [][]byte) (int, error) {
	return a.openBatchLoop(dsts, nonces, cts, ads)
}
