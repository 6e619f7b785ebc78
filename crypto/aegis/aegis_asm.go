//go:build (amd64 || arm64) && gc && !purego

package aegis

import (
	"crypto/subtle"
	"encoding/binary"
)

// This file drives the assembly kernels of any architecture: it keeps all
// length and buffer checks in Go and calls the generated dispatch (kInit,
// kEnc, ...) once per call, never per block. Which kernel a key uses is
// decided by kernelFor in the architecture's file.

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

// kernelSpec describes a generated kernel set (see kernelSpecs in the
// generated file).
type kernelSpec struct {
	wide  bool     // 256-bit-key family
	width int      // bytes of one state vector in the kernel's registers
	enc   encoding // instruction encoding
	impl  string   // what Implementation reports
	// pairWidth is the register width of the kernels that run two messages
	// of this kernel side by side (0: none); quad and dual report the
	// AEGIS-256X2 batch kernels with two pairs, or two messages in separate
	// registers of this width.
	pairWidth  int
	pairImpl   string // what Implementation reports for the pair kernels
	quad, dual bool
}

func (k kernel) width() int { return kernelSpecs[k].width }

// findKernel returns the kernel of the given family, register width and
// encoding, or kNone.
func findKernel(wide bool, width int, enc encoding) kernel {
	for k, s := range kernelSpecs {
		if k != int(kNone) && s.wide == wide && s.width == width && s.enc == enc {
			return kernel(k)
		}
	}
	return kNone
}

func (ak *asmKey) setup(v *variant, key []byte) {
	ak.f = cpuFeatures
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

// hasAsm reports whether the variant runs on an assembly path.
func hasAsm(v *variant) bool {
	k, _ := kernelFor(v, cpuFeatures)
	return k != kNone
}

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

// lengths is the finalization block: LE64(adLen*8) || LE64(msgLen*8).
func lengths(adLen, msgLen int) (u [16]byte) {
	binary.LittleEndian.PutUint64(u[0:], uint64(adLen)*8)
	binary.LittleEndian.PutUint64(u[8:], uint64(msgLen)*8)
	return
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
	a.sealGroups(out, nonce, plaintext, ad)
}

// sealGroups is seal for a kernel narrower than the variant, out of line so
// that its states do not enlarge seal's stack frame.
func (a *aead) sealGroups(out, nonce, plaintext, ad []byte) {
	// Lane groups: each group makes one pass over the interleaved data. All
	// groups read the nonce and absorb the AD before the first output byte is
	// written, so no pass reads what an earlier one wrote.
	k, rate := a.impl.k, a.v.rate()
	full := len(plaintext) / rate * rate
	var last [128]byte // zero-padded last partial chunk, encrypted in place
	copy(last[:], plaintext[full:])
	var ss [4]state
	for g := range a.impl.groups {
		a.start(&ss[g], g*k.width(), nonce, ad)
	}
	var tag, t [32]byte
	for g := range a.impl.groups {
		off, s := g*k.width(), &ss[g]
		if full > 0 {
			kEnc(k, s, &out[off], &plaintext[off], full/rate, rate)
		}
		if full < len(plaintext) {
			kEnc(k, s, &last[off], &last[off], 1, rate)
		}
		u := lengths(len(ad), len(plaintext))
		kFinal(k, s, &t[0], &u, a.tagSize)
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
	u := lengths(adLen, len(plaintext))
	kFinal(k, s, &out[len(plaintext)], &u, a.tagSize)
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
	return a.openGroups(out, nonce, ciphertext, ad)
}

// openGroups is open for a kernel narrower than the variant (see sealGroups).
func (a *aead) openGroups(out, nonce, ciphertext, ad []byte) bool {
	k, rate := a.impl.k, a.v.rate()
	ctLen := len(ciphertext) - a.tagSize
	full := ctLen / rate * rate
	r := ctLen - full
	var last [128]byte
	copy(last[:], ciphertext[full:ctLen])
	var ss [4]state // as in seal: every group starts before any output
	for g := range a.impl.groups {
		a.start(&ss[g], g*k.width(), nonce, ad)
	}
	var tag, t [32]byte
	for g := range a.impl.groups {
		off, s := g*k.width(), &ss[g]
		if full > 0 {
			kDec(k, s, &out[off], &ciphertext[off], full/rate, rate)
		}
		if r > 0 {
			kDecLast(k, s, &last[off], &maskTable[128-r+off], rate)
		}
		u := lengths(len(ad), ctLen)
		kFinal(k, s, &t[0], &u, a.tagSize)
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
	u := lengths(adLen, ctLen)
	kFinal(k, s, &want[0], &u, a.tagSize)
	return verifyTag(out[:ctLen], want[:a.tagSize], ciphertext[ctLen:])
}
