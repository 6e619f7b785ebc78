package aegis

import (
	"crypto/cipher"
	"crypto/subtle"
	"errors"
	"strconv"
	"unsafe"
)

// Sizes of the AEGIS parameters, in bytes.
const (
	// KeySize128 is the key size of AEGIS-128L, AEGIS-128X2 and AEGIS-128X4.
	KeySize128 = 16
	// KeySize256 is the key size of AEGIS-256, AEGIS-256X2 and AEGIS-256X4.
	KeySize256 = 32
	// NonceSize128 is the nonce size of the 128-bit-key variants.
	NonceSize128 = 16
	// NonceSize256 is the nonce size of the 256-bit-key variants.
	NonceSize256 = 32
	// TagSize16 and TagSize32 are the two tag sizes the draft defines; the
	// tag size is also the AEAD's Overhead.
	TagSize16 = 16
	TagSize32 = 32
)

// maxInput is the draft's limit on plaintext and associated data: lengths are
// encoded in bits in a 64-bit word, so at most 2^61 - 1 bytes.
const maxInput = 1<<61 - 1

// ErrOpen is returned by Open and OpenBatch when a ciphertext does not
// authenticate (wrong key, nonce, associated data, or tampered bytes).
var ErrOpen = errors.New("aegis: message authentication failed")

// Batcher is implemented by every AEAD this package returns. It seals or opens
// many independent messages in one call, which lets the implementation
// interleave them to keep the AES units busy.
type Batcher interface {
	// SealBatch seals msgs[i] with nonces[i] and ads[i] into dsts[i]. Each
	// dsts[i] must have room for len(msgs[i])+Overhead bytes (its length is
	// ignored, its capacity is used); dsts[i] may start exactly at msgs[i]
	// (in-place), any other overlap with msgs[i] or any overlap with ads[i]
	// panics. The ciphertext||tag of message i
	// is written to dsts[i][:len(msgs[i])+Overhead].
	SealBatch(dsts, nonces, msgs, ads [][]byte)
	// OpenBatch opens ciphertexts[i] into dsts[i] (room for
	// len(ciphertexts[i])-Overhead bytes, same aliasing rules). It returns the
	// index of the first message that failed to authenticate (-1 if none)
	// and ErrOpen; the output of every failed message is zeroed, the others
	// are valid plaintext.
	OpenBatch(dsts, nonces, ciphertexts, ads [][]byte) (firstBad int, err error)
}

// variant describes one member of the family: a 128-bit-key cipher with an
// eight-block state and a two-block rate (AEGIS-128L and its X variants), or
// a 256-bit-key cipher with a six-block state and a one-block rate (AEGIS-256
// and its X variants), each run as lanes parallel instances.
type variant struct {
	name  string
	wide  bool // 256-bit key family
	lanes int  // D: 1, 2 or 4
}

var (
	v128L  = &variant{"AEGIS-128L", false, 1}
	v128X2 = &variant{"AEGIS-128X2", false, 2}
	v128X4 = &variant{"AEGIS-128X4", false, 4}
	v256   = &variant{"AEGIS-256", true, 1}
	v256X2 = &variant{"AEGIS-256X2", true, 2}
	v256X4 = &variant{"AEGIS-256X4", true, 4}
)

func (v *variant) keySize() int {
	if v.wide {
		return KeySize256
	}
	return KeySize128
}

// rate is the number of message bytes absorbed per state update.
func (v *variant) rate() int {
	if v.wide {
		return 16 * v.lanes
	}
	return 32 * v.lanes
}

// stateBlocks is the number of 16*lanes-byte vectors in the state.
func (v *variant) stateBlocks() int {
	if v.wide {
		return 6
	}
	return 8
}

// aead is the cipher.AEAD (and Batcher) returned by the constructors.
type aead struct {
	v       *variant
	key     [32]byte
	tagSize int
	// impl holds the per-key data of the assembly path (replicated key
	// vectors); it is unused by the portable path.
	impl asmKey
}

// New128L returns AEGIS-128L with a 16-byte key and nonce and a tagSize-byte
// tag (16 or 32).
func New128L(key []byte, tagSize int) (cipher.AEAD, error) { return newAEAD(v128L, key, tagSize) }

// New128X2 returns AEGIS-128X2 (two AEGIS-128L lanes) with a 16-byte key and
// nonce and a tagSize-byte tag (16 or 32).
func New128X2(key []byte, tagSize int) (cipher.AEAD, error) { return newAEAD(v128X2, key, tagSize) }

// New128X4 returns AEGIS-128X4 (four AEGIS-128L lanes) with a 16-byte key and
// nonce and a tagSize-byte tag (16 or 32).
func New128X4(key []byte, tagSize int) (cipher.AEAD, error) { return newAEAD(v128X4, key, tagSize) }

// New256 returns AEGIS-256 with a 32-byte key and nonce and a tagSize-byte
// tag (16 or 32).
func New256(key []byte, tagSize int) (cipher.AEAD, error) { return newAEAD(v256, key, tagSize) }

// New256X2 returns AEGIS-256X2 (two AEGIS-256 lanes) with a 32-byte key and
// nonce and a tagSize-byte tag (16 or 32). It is vaultui's content cipher.
func New256X2(key []byte, tagSize int) (cipher.AEAD, error) { return newAEAD(v256X2, key, tagSize) }

// New256X4 returns AEGIS-256X4 (four AEGIS-256 lanes) with a 32-byte key and
// nonce and a tagSize-byte tag (16 or 32).
func New256X4(key []byte, tagSize int) (cipher.AEAD, error) { return newAEAD(v256X4, key, tagSize) }

func newAEAD(v *variant, key []byte, tagSize int) (cipher.AEAD, error) {
	if len(key) != v.keySize() {
		return nil, errors.New("aegis: " + v.name + " needs a " + strconv.Itoa(v.keySize()) +
			"-byte key, got " + strconv.Itoa(len(key)))
	}
	if tagSize != TagSize16 && tagSize != TagSize32 {
		return nil, errors.New("aegis: tag size must be 16 or 32, got " + strconv.Itoa(tagSize))
	}
	a := &aead{v: v, tagSize: tagSize}
	copy(a.key[:], key)
	a.impl.setup(v, a.key[:v.keySize()])
	return a, nil
}

// Wipe overwrites the key material held by an AEAD returned from this
// package with zeros; the AEAD must not be used afterwards. It is best effort:
// Go may have copied the key elsewhere (the caller's slice, stack frames, moved
// heap objects), and those copies are out of reach. AEADs from other packages
// are ignored.
func Wipe(a cipher.AEAD) {
	if x, ok := a.(*aead); ok {
		clear(x.key[:])
		x.impl.wipe()
	}
}

// portableName is what Implementation reports for the portable code.
const portableName = "portable, constant time"

// Implementation describes the code that runs a, an AEAD from this package,
// on this machine: the AES instructions its kernels use ("VAES-512",
// "VAES-256", "AES-NI (AVX)", "AES-NI (SSE)", "ARMv8 AES"), with how many
// passes the lanes take where the registers are narrower than the variant
// and what its batches run on where that differs, or "portable, constant
// time". It returns "" for AEADs from other packages.
func Implementation(a cipher.AEAD) string {
	x, ok := a.(*aead)
	if !ok {
		return ""
	}
	return x.implementation()
}

// Accelerated reports whether a, an AEAD from this package, runs on AES
// instructions rather than the portable code, which is constant time but
// several hundred times slower.
func Accelerated(a cipher.AEAD) bool {
	x, ok := a.(*aead)
	return ok && hasAsm(x.v)
}

func (a *aead) NonceSize() int { return a.v.keySize() }
func (a *aead) Overhead() int  { return a.tagSize }

func (a *aead) Seal(dst, nonce, plaintext, additionalData []byte) []byte {
	a.checkSeal(nonce, plaintext, additionalData)
	ret, out := sliceForAppend(dst, len(plaintext)+a.tagSize)
	if inexactOverlap(out, plaintext) || anyOverlap(out, additionalData) {
		aliasingPanic(out, plaintext)
	}
	a.seal(out, nonce, plaintext, additionalData)
	return ret
}

func (a *aead) checkSeal(nonce, plaintext, additionalData []byte) {
	if len(nonce) != a.NonceSize() {
		panic("aegis: incorrect nonce length given to " + a.v.name)
	}
	if uint64(len(plaintext)) > maxInput || uint64(len(additionalData)) > maxInput {
		panic("aegis: message too large for " + a.v.name)
	}
}

func (a *aead) Open(dst, nonce, ciphertext, additionalData []byte) ([]byte, error) {
	if len(nonce) != a.NonceSize() {
		panic("aegis: incorrect nonce length given to " + a.v.name)
	}
	if len(ciphertext) < a.tagSize || uint64(len(ciphertext)) > maxInput+uint64(a.tagSize) ||
		uint64(len(additionalData)) > maxInput {
		return nil, ErrOpen
	}
	ret, out := sliceForAppend(dst, len(ciphertext)-a.tagSize)
	if inexactOverlap(out, ciphertext) || anyOverlap(out, additionalData) {
		aliasingPanic(out, ciphertext)
	}
	if !a.open(out, nonce, ciphertext, additionalData) {
		return nil, ErrOpen
	}
	return ret, nil
}

// verifyTag compares the computed tag with the received one in constant time
// and, on mismatch, zeroes the plaintext already written so that no
// unauthenticated data is released.
func verifyTag(out, want, got []byte) bool {
	if subtle.ConstantTimeCompare(want, got) != 1 {
		clear(out)
		return false
	}
	return true
}

// SealBatch implements Batcher.
func (a *aead) SealBatch(dsts, nonces, msgs, ads [][]byte) {
	n := len(msgs)
	if len(dsts) != n || len(nonces) != n || len(ads) != n {
		panic("aegis: SealBatch slices have different lengths")
	}
	for i := range n {
		a.checkSeal(nonces[i], msgs[i], ads[i])
		if cap(dsts[i]) < len(msgs[i])+a.tagSize {
			panic("aegis: SealBatch destination too small")
		}
		if out := dsts[i][:len(msgs[i])+a.tagSize]; inexactOverlap(out, msgs[i]) || anyOverlap(out, ads[i]) {
			aliasingPanic(out, msgs[i])
		}
	}
	a.sealBatch(dsts, nonces, msgs, ads)
}

// OpenBatch implements Batcher.
func (a *aead) OpenBatch(dsts, nonces, ciphertexts, ads [][]byte) (int, error) {
	n := len(ciphertexts)
	if len(dsts) != n || len(nonces) != n || len(ads) != n {
		panic("aegis: OpenBatch slices have different lengths")
	}
	for i := range n {
		if len(nonces[i]) != a.NonceSize() {
			panic("aegis: incorrect nonce length given to " + a.v.name)
		}
		if len(ciphertexts[i]) < a.tagSize {
			continue // fails in openBatch
		}
		if cap(dsts[i]) < len(ciphertexts[i])-a.tagSize {
			panic("aegis: OpenBatch destination too small")
		}
		if out := dsts[i][:len(ciphertexts[i])-a.tagSize]; inexactOverlap(out, ciphertexts[i]) || anyOverlap(out, ads[i]) {
			aliasingPanic(out, ciphertexts[i])
		}
	}
	return a.openBatch(dsts, nonces, ciphertexts, ads)
}

// sealBatchLoop and openBatchLoop are the one-message-at-a-time batch paths.
func (a *aead) sealBatchLoop(dsts, nonces, msgs, ads [][]byte) {
	for i := range msgs {
		a.seal(dsts[i][:len(msgs[i])+a.tagSize], nonces[i], msgs[i], ads[i])
	}
}

func (a *aead) openBatchLoop(dsts, nonces, cts, ads [][]byte) (int, error) {
	bad := -1
	for i := range cts {
		if !a.openOne(dsts[i], nonces[i], cts[i], ads[i]) && bad < 0 {
			bad = i
		}
	}
	if bad >= 0 {
		return bad, ErrOpen
	}
	return -1, nil
}

// openOne opens one batch message; it tolerates a too-short ciphertext.
func (a *aead) openOne(dst, nonce, ct, ad []byte) bool {
	if len(ct) < a.tagSize || uint64(len(ad)) > maxInput {
		return false
	}
	return a.open(dst[:len(ct)-a.tagSize], nonce, ct, ad)
}

// sliceForAppend takes a slice and a requested number of bytes. It returns a
// slice with the contents of the given slice followed by that many bytes and a
// second slice that aliases into it and contains only the extra bytes.
func sliceForAppend(in []byte, n int) (head, tail []byte) {
	if total := len(in) + n; cap(in) >= total {
		head = in[:total]
	} else {
		head = make([]byte, total)
		copy(head, in)
	}
	tail = head[len(in):]
	return
}

// The aliasing rule of Seal, Open and the batches: the output must be either
// exactly in place over the input or disjoint from it, and disjoint from the
// additional data: the AD is read while the output is written (in lane
// groups, after part of it is written), so an output over the AD would change
// the message it authenticates. Each call checks it inline (a function would
// cost a call per message) and fails through aliasingPanic.

// aliasingPanic reports a broken aliasing rule, out of line so that the
// callers' checks stay small.
func aliasingPanic(out, in []byte) {
	if inexactOverlap(out, in) {
		panic("aegis: invalid buffer overlap")
	}
	panic("aegis: output overlaps the additional data")
}

// anyOverlap reports whether x and y share memory at any (not necessarily
// corresponding) index.
func anyOverlap(x, y []byte) bool {
	if len(x) == 0 || len(y) == 0 {
		return false
	}
	xp, yp := uintptr(unsafe.Pointer(unsafe.SliceData(x))), uintptr(unsafe.Pointer(unsafe.SliceData(y)))
	return xp < yp+uintptr(len(y)) && yp < xp+uintptr(len(x))
}

// inexactOverlap reports whether x and y share memory at any non-corresponding
// index: exact in-place operation is allowed, any other overlap is not.
func inexactOverlap(x, y []byte) bool {
	return len(x) > 0 && len(y) > 0 && unsafe.SliceData(x) != unsafe.SliceData(y) && anyOverlap(x, y)
}
