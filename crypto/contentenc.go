package crypto

import (
	"bytes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/vaultui/vaultui/crypto/aegis"
)

// ErrAuth is wrapped by every error about a block that does not decrypt:
// a failed tag check, a block too short to hold a tag, or an all-zero nonce
// in a block that is not a hole.
var ErrAuth = errors.New("message authentication failed")

// BlockError reports the first block of a DecryptBlocks call that failed.
type BlockError struct {
	Block uint64 // absolute block number within the file
	Err   error  // wraps ErrAuth
}

func (e *BlockError) Error() string { return fmt.Sprintf("crypto: block %d: %v", e.Block, e.Err) }
func (e *BlockError) Unwrap() error { return e.Err }

// batchMax is how many blocks go into one batch call and one random read:
// 32 blocks is 128 KiB, the largest FUSE read or write.
const batchMax = 32

// adLen is the associated data length: uint64 block number and file ID.
const adLen = 8 + FileIDLen

// zeroBlock is compared against to recognise holes and all-zero nonces.
var zeroBlock [BlockSize + 32 + TagLen]byte

// ContentEnc encrypts and decrypts file content blocks with one content
// cipher and key. It is safe for concurrent use; after Wipe it must not be
// used again.
type ContentEnc struct {
	id        CipherID
	aead      cipher.AEAD
	batch     aegis.Batcher // nil unless the AEAD seals many blocks per call, interleaved
	wipeAEAD  func(cipher.AEAD)
	key       []byte // derived content key, wiped by Wipe
	nonceLen  int
	overhead  int // nonce + tag
	cipherBS  int
	paddedB64 bool
	scratch   sync.Pool // *scratch
}

// scratch holds per-call buffers so the hot path does not allocate.
type scratch struct {
	nonces []byte
	ads    [batchMax * adLen]byte
	idx    [batchMax]int
	dsts   [batchMax][]byte
	ns     [batchMax][]byte
	msgs   [batchMax][]byte
	adv    [batchMax][]byte
}

// NewContentEnc returns a ContentEnc for cipher c. The content key is derived
// from masterKey with HKDF when useHKDF is set (every vault since gocryptfs
// 1.3); without it AES-GCM uses the master key itself and AES-SIV its
// SHA-512, as old gocryptfs vaults do. The master key is not retained.
func NewContentEnc(c CipherID, masterKey []byte, useHKDF bool) (*ContentEnc, error) {
	if len(masterKey) != MasterKeyLen {
		return nil, fmt.Errorf("crypto: master key is %d bytes, want %d", len(masterKey), MasterKeyLen)
	}
	b, err := backendFor(c)
	if err != nil {
		return nil, err
	}
	key, err := b.contentKey(masterKey, useHKDF)
	if err != nil {
		return nil, err
	}
	a, err := b.newAEAD(key)
	if err != nil {
		Wipe(key)
		return nil, err
	}
	if a.NonceSize() != b.nonceLen || a.Overhead() != TagLen {
		Wipe(key)
		return nil, fmt.Errorf("crypto: %s: nonce %d / overhead %d bytes, want %d / %d",
			c, a.NonceSize(), a.Overhead(), b.nonceLen, TagLen)
	}
	e := &ContentEnc{
		id:       c,
		aead:     a,
		wipeAEAD: b.wipe,
		key:      key, // kept until Wipe: some AEADs may not copy their key
		nonceLen: b.nonceLen,
		overhead: b.nonceLen + TagLen,
		cipherBS: BlockSize + b.nonceLen + TagLen,
	}
	e.batch, _ = a.(aegis.Batcher)
	nonceBuf := batchMax * b.nonceLen
	e.scratch.New = func() any { return &scratch{nonces: make([]byte, nonceBuf)} }
	return e, nil
}

// Cipher returns the content cipher.
func (e *ContentEnc) Cipher() CipherID { return e.id }

// CipherBlockSize returns the on-disk size of a full block.
func (e *ContentEnc) CipherBlockSize() int { return e.cipherBS }

// BlockOverhead returns the per-block overhead: nonce and tag.
func (e *ContentEnc) BlockOverhead() int { return e.overhead }

// NonceSize returns the per-block nonce length.
func (e *ContentEnc) NonceSize() int { return e.nonceLen }

// SetPaddedBase64 makes EncryptSymlink use padded base64 (vaults without the
// Raw64 feature flag). Call it before sharing e between goroutines.
func (e *ContentEnc) SetPaddedBase64(padded bool) { e.paddedB64 = padded }

func checkFileID(fileID []byte) {
	if len(fileID) != 0 && len(fileID) != FileIDLen {
		panic(fmt.Sprintf("crypto: file ID is %d bytes, want 0 or %d", len(fileID), FileIDLen))
	}
}

// ad writes the associated data of block n into slot i and returns it.
func (s *scratch) ad(i int, n uint64, fileID []byte) []byte {
	a := s.ads[i*adLen : i*adLen+8+len(fileID)]
	binary.BigEndian.PutUint64(a, n)
	copy(a[8:], fileID)
	return a
}

// EncryptBlocks appends to dst the ciphertext of plaintext, split into
// BlockSize blocks (the last may be short) numbered from firstBlock, each
// sealed with a fresh random nonce. fileID is the header's file ID, or nil
// for symlink targets. dst must not overlap plaintext. With room in dst it
// does not allocate.
func (e *ContentEnc) EncryptBlocks(dst, plaintext []byte, firstBlock uint64, fileID []byte) []byte {
	checkFileID(fileID)
	if len(plaintext) == 0 {
		return dst
	}
	n := (len(plaintext) + BlockSize - 1) / BlockSize
	total := len(plaintext) + n*e.overhead
	start := len(dst)
	dst = slices.Grow(dst, total)[:start+total]
	out := dst[start:]

	s := e.scratch.Get().(*scratch)
	defer e.scratch.Put(s)
	nl := e.nonceLen
	for done := 0; done < n; {
		k := min(batchMax, n-done)
		nonces := s.nonces[:k*nl]
		// One read per batch; crypto/rand.Read never returns an error.
		_, _ = rand.Read(nonces)
		for i := range k {
			b := done + i
			pt := plaintext[b*BlockSize : min((b+1)*BlockSize, len(plaintext))]
			cb := out[b*e.cipherBS : b*e.cipherBS+len(pt)+e.overhead]
			nonce := cb[:nl]
			copy(nonce, nonces[i*nl:])
			ad := s.ad(i, firstBlock+uint64(b), fileID)
			if e.batch != nil {
				s.dsts[i], s.ns[i], s.msgs[i], s.adv[i] = cb[nl:], nonce, pt, ad
			} else {
				e.aead.Seal(cb[nl:nl], nonce, pt, ad)
			}
		}
		if e.batch != nil {
			e.batch.SealBatch(s.dsts[:k], s.ns[:k], s.msgs[:k], s.adv[:k])
			clear(s.msgs[:k]) // drop references to caller memory
			clear(s.dsts[:k])
		}
		done += k
	}
	return dst
}

// IsHole reports whether cipherBlock is a hole: a full-size block of zero bytes, which
// reads as BlockSize zero bytes without a tag check (so it proves nothing about the key).
func (e *ContentEnc) IsHole(cipherBlock []byte) bool {
	return len(cipherBlock) == e.cipherBS && bytes.Equal(cipherBlock, zeroBlock[:e.cipherBS])
}

// DecryptBlocks appends to dst the plaintext of ciphertext, a run of blocks
// numbered from firstBlock (the last may be short). A full-size block of zero
// bytes is a hole and yields BlockSize zero bytes. On failure it returns a
// *BlockError for the first bad block (errors.Is(err, ErrAuth)) and dst with
// the plaintext of the good blocks before it only. dst must not overlap
// ciphertext. With room in dst it does not allocate.
func (e *ContentEnc) DecryptBlocks(dst, ciphertext []byte, firstBlock uint64, fileID []byte) ([]byte, error) {
	checkFileID(fileID)
	if len(ciphertext) == 0 {
		return dst, nil
	}
	cbs := e.cipherBS
	n := (len(ciphertext) + cbs - 1) / cbs
	lastLen := len(ciphertext) - (n-1)*cbs
	maxPlain := (n-1)*BlockSize + max(0, lastLen-e.overhead)
	start := len(dst)
	dst = slices.Grow(dst, maxPlain)[:start+maxPlain]
	out := dst[start:]

	s := e.scratch.Get().(*scratch)
	defer e.scratch.Put(s)
	nl := e.nonceLen
	bad, badErr := -1, error(nil)
	pending := 0
	flush := func() {
		if pending == 0 {
			return
		}
		i, err := e.batch.OpenBatch(s.dsts[:pending], s.ns[:pending], s.msgs[:pending], s.adv[:pending])
		if err != nil || i >= 0 {
			if i < 0 || i >= pending {
				i = 0 // defensive: an error without an index blames the whole batch
			}
			if bad < 0 || s.idx[i] < bad {
				bad, badErr = s.idx[i], ErrAuth
			}
		}
		clear(s.msgs[:pending])
		clear(s.dsts[:pending])
		pending = 0
	}
	for b := range n {
		cb := ciphertext[b*cbs : min((b+1)*cbs, len(ciphertext))]
		if len(cb) <= e.overhead {
			bad, badErr = b, fmt.Errorf("%w: %d-byte block is not longer than the %d-byte overhead", ErrAuth, len(cb), e.overhead)
			break
		}
		pt := out[b*BlockSize : b*BlockSize+len(cb)-e.overhead]
		nonce := cb[:nl]
		if bytes.Equal(nonce, zeroBlock[:nl]) {
			if e.IsHole(cb) {
				clear(pt) // a hole
				continue
			}
			bad, badErr = b, fmt.Errorf("%w: all-zero nonce", ErrAuth)
			break
		}
		ad := s.ad(pending, firstBlock+uint64(b), fileID)
		if e.batch != nil {
			s.idx[pending], s.dsts[pending], s.ns[pending], s.msgs[pending], s.adv[pending] = b, pt, nonce, cb[nl:], ad
			pending++
			if pending == batchMax {
				flush()
				if bad >= 0 {
					break
				}
			}
			continue
		}
		if _, err := e.aead.Open(pt[:0], nonce, cb[nl:], ad); err != nil {
			bad, badErr = b, ErrAuth
			break
		}
	}
	if e.batch != nil {
		flush()
	}
	if bad >= 0 {
		clear(out[bad*BlockSize:]) // no plaintext of or after the bad block
		return dst[:start+bad*BlockSize], &BlockError{Block: firstBlock + uint64(bad), Err: badErr}
	}
	return dst, nil
}

// DecryptBlocksZeroing is DecryptBlocks for reading what a damaged file still holds
// (recovery): each block that fails authentication yields zeros of its plaintext length, never
// its unauthenticated decryption, and is handed to bad (one call per block, in order); the
// blocks after it are decrypted as usual. The result always has the length of the whole run.
func (e *ContentEnc) DecryptBlocksZeroing(dst, ciphertext []byte, firstBlock uint64, fileID []byte, bad func(*BlockError)) []byte {
	cbs := e.cipherBS
	for len(ciphertext) > 0 {
		out, err := e.DecryptBlocks(dst, ciphertext, firstBlock, fileID)
		var be *BlockError
		if !errors.As(err, &be) {
			return out // nil: every block opened (DecryptBlocks reports nothing else)
		}
		bad(be)
		// out ends before the bad block, which starts at its index times cbs.
		i := int(be.Block - firstBlock)
		blk := ciphertext[i*cbs : min((i+1)*cbs, len(ciphertext))]
		dst = append(out, make([]byte, max(0, len(blk)-e.overhead))...)
		ciphertext = ciphertext[min((i+1)*cbs, len(ciphertext)):]
		firstBlock = be.Block + 1
	}
	return dst
}

// b64 returns the symlink target encoding.
func (e *ContentEnc) b64() *base64.Encoding {
	if e.paddedB64 {
		return base64.URLEncoding
	}
	return base64.RawURLEncoding
}

// EncryptSymlink encrypts a symlink target like content block 0 without a
// file ID and returns it base64url-encoded (unpadded unless
// SetPaddedBase64).
func (e *ContentEnc) EncryptSymlink(target string) string {
	return e.b64().EncodeToString(e.EncryptBlocks(nil, []byte(target), 0, nil))
}

// SymlinkTargetLen returns the length of the plaintext target behind an encrypted symlink
// target of cipherLen bytes, without reading it: reading a symlink updates its access time,
// which a stat must not do. ok is false for padded base64, whose length alone does not tell.
func (e *ContentEnc) SymlinkTargetLen(cipherLen int) (n int, ok bool) {
	if e.paddedB64 {
		return 0, false
	}
	n = base64.RawURLEncoding.DecodedLen(cipherLen) - e.overhead
	return n, n >= 0
}

// ErrBadSymlink is wrapped by DecryptSymlink for a target that is not valid
// base64 or longer than one block.
var ErrBadSymlink = errors.New("bad encrypted symlink target")

// DecryptSymlink reverses EncryptSymlink. It accepts padded and unpadded
// base64url.
func (e *ContentEnc) DecryptSymlink(c string) (string, error) {
	enc := base64.RawURLEncoding.Strict()
	if strings.HasSuffix(c, "=") {
		enc = base64.URLEncoding.Strict()
	}
	bin, err := DecodeBase64(enc, c)
	if err != nil {
		return "", fmt.Errorf("crypto: %w: %v", ErrBadSymlink, err)
	}
	if len(bin) > e.cipherBS {
		return "", fmt.Errorf("crypto: %w: %d bytes is longer than one block", ErrBadSymlink, len(bin))
	}
	pt, err := e.DecryptBlocks(nil, bin, 0, nil)
	if err != nil {
		return "", fmt.Errorf("crypto: symlink target: %w", err)
	}
	return string(pt), nil
}

// Wipe clears the content key (best effort: see the package Wipe) and makes
// e unusable.
func (e *ContentEnc) Wipe() {
	if e.wipeAEAD != nil && e.aead != nil {
		e.wipeAEAD(e.aead)
	}
	Wipe(e.key)
	e.aead, e.batch = nil, nil
}
