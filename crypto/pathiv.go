package crypto

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
)

// Reverse mode (a read-only encrypted view of a plaintext folder, gocryptfs -reverse) has no
// place to store random IVs: every IV is derived from the entry's path in the encrypted view,
// so the same plaintext at the same path always encrypts to the same bytes. That is what makes
// a backup of the view incremental. Deterministic nonces are safe only with AES-SIV, which
// stays secure when a nonce repeats (it then only reveals that two plaintexts are equal);
// [ContentEnc.EncryptBlocksIV] refuses every other cipher.

// IVPurpose separates the IVs derived from one path.
type IVPurpose string

// The purposes gocryptfs's reverse mode derives IVs for.
const (
	PurposeDirIV     IVPurpose = "DIRIV"     // the directory's name IV (its virtual gocryptfs.diriv)
	PurposeFileID    IVPurpose = "FILEID"    // the file ID in the file's header
	PurposeSymlinkIV IVPurpose = "SYMLINKIV" // the nonce of a symlink target
	PurposeBlock0IV  IVPurpose = "BLOCK0IV"  // the nonce of block 0; block n adds n
)

// PathIV returns the 16-byte IV for purpose of the entry at cipherPath, its path in the
// encrypted view relative to the root ("" for the root, components joined by "/"): the first
// 16 bytes of SHA-256(cipherPath || 0x00 || purpose).
func PathIV(cipherPath string, purpose IVPurpose) []byte {
	h := sha256.Sum256([]byte(cipherPath + "\x00" + string(purpose)))
	return h[:DirIVLen]
}

// BlockIV returns the nonce of block n given the nonce of block 0: the low 64 bits, read as a
// big-endian integer, plus n (wrapping); the high 64 bits are kept.
func BlockIV(block0IV []byte, n uint64) []byte {
	iv := append([]byte(nil), block0IV...)
	lo := iv[len(iv)-8:]
	binary.BigEndian.PutUint64(lo, binary.BigEndian.Uint64(lo)+n)
	return iv
}

// checkDeterministic panics unless e may seal with caller-chosen nonces.
func (e *ContentEnc) checkDeterministic(nonce []byte) {
	if e.id != AESSIV {
		panic(fmt.Sprintf("crypto: %s must not be used with derived nonces (only AES-SIV stays secure when a nonce repeats)", e.id))
	}
	if len(nonce) != e.nonceLen {
		panic(fmt.Sprintf("crypto: derived nonce is %d bytes, want %d", len(nonce), e.nonceLen))
	}
}

// EncryptBlocksIV is EncryptBlocks with derived nonces: block n (counted from 0 at the start
// of the file, so firstBlock is the first block's number) is sealed with BlockIV(block0IV, n).
// The same input always gives the same output. It panics for every cipher but AES-SIV.
func (e *ContentEnc) EncryptBlocksIV(dst, plaintext []byte, firstBlock uint64, fileID, block0IV []byte) []byte {
	checkFileID(fileID)
	e.checkDeterministic(block0IV)
	var ad [adLen]byte
	for off := 0; off < len(plaintext); off += BlockSize {
		pt := plaintext[off:min(off+BlockSize, len(plaintext))]
		n := firstBlock + uint64(off/BlockSize)
		nonce := BlockIV(block0IV, n)
		binary.BigEndian.PutUint64(ad[:8], n)
		copy(ad[8:], fileID)
		dst = append(dst, nonce...)
		dst = e.aead.Seal(dst, nonce, pt, ad[:8+len(fileID)])
	}
	return dst
}

// EncryptSymlinkIV is EncryptSymlink with a derived nonce (PathIV of the link's cipher path
// with PurposeSymlinkIV). It panics for every cipher but AES-SIV.
func (e *ContentEnc) EncryptSymlinkIV(target string, iv []byte) string {
	return e.b64().EncodeToString(e.EncryptBlocksIV(nil, []byte(target), 0, nil, iv))
}
