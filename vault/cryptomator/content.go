package cryptomator

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/format"
)

// CipherCombo is a vault's "cipherCombo" claim: how names and contents are encrypted.
type CipherCombo string

const (
	// SIVGCM is what Cryptomator creates since vault format 8: AES-SIV names, AES-GCM content.
	SIVGCM CipherCombo = "SIV_GCM"
	// SIVCTRMAC is the content encryption of format 7 and earlier, kept by vaults migrated to
	// format 8: AES-CTR encrypted, HMAC-SHA256 authenticated.
	SIVCTRMAC CipherCombo = "SIV_CTRMAC"
)

// ChunkSize is the cleartext size of a full chunk, the same for both combos.
const ChunkSize = 32 * 1024

// Geometry is how a file's cleartext maps onto its ciphertext (format.Geometry, shared with
// gocryptfs vaults): a header, even for an empty file, then chunks.
type Geometry = format.Geometry

// Sizes of the two combos (Cryptomator's "Security Architecture", and cryptolib's v1 and v2
// packages, the reference implementation).
const (
	gcmNonceLen  = 12
	gcmTagLen    = 16
	gcmHeaderLen = gcmNonceLen + headerPayloadLen + gcmTagLen // 68

	ctrNonceLen  = 16
	macLen       = sha256.Size
	ctrHeaderLen = ctrNonceLen + headerPayloadLen + macLen // 88

	// headerPayloadLen: 8 reserved bytes (once the file size, now all 0xFF) and the file's
	// 32-byte content key.
	headerPayloadLen = 8 + contentKeyLen
	contentKeyLen    = 32
)

// Content seals and opens the file headers and chunks of one vault. A file's chunks are
// bound to its header (by the header nonce) and to their position (by the chunk number), but
// not to the file's name or directory: Cryptomator's format does not detect a whole file
// swapped for another of the same vault, nor a file cut off at a chunk boundary.
type Content struct {
	combo CipherCombo
	geo   Geometry
	// headerAEAD seals headers with the encryption master key (SIV_GCM); headerBlock and mac
	// are SIV_CTRMAC's AES-CTR key and HMAC-SHA256 key for headers and chunks.
	headerAEAD  cipher.AEAD
	headerBlock cipher.Block
	macKey      []byte
	// Rand supplies nonces and content keys; crypto/rand unless a test fixes it.
	Rand io.Reader
}

// ErrUnsupported is wrapped by errors about a vault that is valid but uses something this
// package does not implement (another format, cipher combo, or key location); the error names it.
var ErrUnsupported = errors.New("unsupported Cryptomator vault")

// NewContent returns the content encryption of combo under the master key k.
func NewContent(combo CipherCombo, k *Masterkey) (*Content, error) {
	c := &Content{combo: combo, Rand: rand.Reader}
	block, err := aes.NewCipher(k.enc[:])
	if err != nil {
		return nil, err
	}
	switch combo {
	case SIVGCM:
		c.geo = Geometry{HeaderLen: gcmHeaderLen, BlockSize: ChunkSize, BlockOverhead: gcmNonceLen + gcmTagLen, EmptyHasHeader: true}
		if c.headerAEAD, err = cipher.NewGCM(block); err != nil {
			return nil, err
		}
	case SIVCTRMAC:
		c.geo = Geometry{HeaderLen: ctrHeaderLen, BlockSize: ChunkSize, BlockOverhead: ctrNonceLen + macLen, EmptyHasHeader: true}
		c.headerBlock = block
		c.macKey = append([]byte(nil), k.mac[:]...)
	default:
		return nil, fmt.Errorf("%w: cipher combo %q (known: %s, %s)", ErrUnsupported, combo, SIVGCM, SIVCTRMAC)
	}
	return c, nil
}

// Combo returns the content's cipher combo.
func (c *Content) Combo() CipherCombo { return c.combo }

// Geometry returns the header length, chunk size and per-chunk overhead.
func (c *Content) Geometry() Geometry { return c.geo }

// FileHeader is an opened (or new) file header: its nonce and the ciphers of its content key.
type FileHeader struct {
	nonce []byte
	aead  cipher.AEAD  // SIV_GCM: AES-GCM under the content key
	block cipher.Block // SIV_CTRMAC: AES under the content key
}

// NewHeader makes a header with a fresh nonce and content key and returns it with its sealed
// bytes.
func (c *Content) NewHeader() (*FileHeader, []byte, error) {
	nonceLen := c.nonceLen()
	var payload [headerPayloadLen]byte
	defer crypto.Wipe(payload[:])
	binary.BigEndian.PutUint64(payload[:8], ^uint64(0))
	nonce := make([]byte, nonceLen)
	if _, err := io.ReadFull(c.Rand, nonce); err != nil {
		return nil, nil, fmt.Errorf("reading random header nonce: %w", err)
	}
	if _, err := io.ReadFull(c.Rand, payload[8:]); err != nil {
		return nil, nil, fmt.Errorf("reading random content key: %w", err)
	}
	h, err := c.fileHeader(nonce, payload[8:])
	if err != nil {
		return nil, nil, err
	}
	sealed := make([]byte, 0, c.geo.HeaderLen)
	sealed = append(sealed, nonce...)
	if c.combo == SIVGCM {
		sealed = c.headerAEAD.Seal(sealed, nonce, payload[:], nil)
	} else {
		sealed = append(sealed, payload[:]...)
		cipher.NewCTR(c.headerBlock, nonce).XORKeyStream(sealed[nonceLen:], payload[:])
		sealed = c.mac(sealed, sealed)
	}
	return h, sealed, nil
}

// OpenHeader authenticates and opens the sealed header b (at least HeaderLen bytes). A
// header that does not authenticate is an error wrapping crypto.ErrAuth.
func (c *Content) OpenHeader(b []byte) (*FileHeader, error) {
	if len(b) < c.geo.HeaderLen {
		return nil, fmt.Errorf("header is %d bytes, want %d: %w", len(b), c.geo.HeaderLen, crypto.ErrAuth)
	}
	b = b[:c.geo.HeaderLen]
	var payload []byte
	if c.combo == SIVGCM {
		nonce := b[:gcmNonceLen]
		p, err := c.headerAEAD.Open(nil, nonce, b[gcmNonceLen:], nil)
		if err != nil {
			return nil, fmt.Errorf("header does not authenticate: %w", crypto.ErrAuth)
		}
		payload = p
	} else {
		body, tag := b[:ctrNonceLen+headerPayloadLen], b[ctrNonceLen+headerPayloadLen:]
		if !hmac.Equal(c.mac(nil, body), tag) {
			return nil, fmt.Errorf("header does not authenticate: %w", crypto.ErrAuth)
		}
		payload = make([]byte, headerPayloadLen)
		cipher.NewCTR(c.headerBlock, b[:ctrNonceLen]).XORKeyStream(payload, body[ctrNonceLen:])
	}
	defer crypto.Wipe(payload)
	// The 8 reserved bytes are authenticated but not checked: format 7 and earlier kept the
	// file size there, and a migrated vault may still have it.
	return c.fileHeader(append([]byte(nil), b[:c.nonceLen()]...), payload[8:])
}

func (c *Content) nonceLen() int {
	if c.combo == SIVCTRMAC {
		return ctrNonceLen
	}
	return gcmNonceLen
}

func (c *Content) fileHeader(nonce, contentKey []byte) (*FileHeader, error) {
	block, err := aes.NewCipher(contentKey)
	if err != nil {
		return nil, err
	}
	h := &FileHeader{nonce: nonce}
	if c.combo == SIVGCM {
		if h.aead, err = cipher.NewGCM(block); err != nil {
			return nil, err
		}
	} else {
		h.block = block
	}
	return h, nil
}

// mac appends HMAC-SHA256 under the MAC master key of the concatenated parts to dst
// (SIV_CTRMAC only).
func (c *Content) mac(dst []byte, parts ...[]byte) []byte {
	m := hmac.New(sha256.New, c.macKey)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(dst)
}

// chunkNumber is the chunk number as it enters a chunk's authentication: 64 bits, big-endian.
// SIV_GCM's associated data is the chunk number, then the header nonce (cryptolib's order;
// some secondary descriptions swap them). SIV_CTRMAC's MAC covers the header nonce, the chunk
// number, then the chunk's nonce and ciphertext.
func chunkNumber(n uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], n)
	return b[:]
}

// SealChunk appends chunk n of the file with header h, holding plaintext (at most ChunkSize
// bytes), to dst.
func (c *Content) SealChunk(dst, plaintext []byte, n uint64, h *FileHeader) ([]byte, error) {
	if len(plaintext) > ChunkSize {
		return nil, fmt.Errorf("chunk of %d bytes, at most %d", len(plaintext), ChunkSize)
	}
	start := len(dst)
	nonce := make([]byte, c.nonceLen())
	if _, err := io.ReadFull(c.Rand, nonce); err != nil {
		return nil, fmt.Errorf("reading random chunk nonce: %w", err)
	}
	dst = append(dst, nonce...)
	if c.combo == SIVGCM {
		ad := append(chunkNumber(n), h.nonce...)
		return h.aead.Seal(dst, nonce, plaintext, ad), nil
	}
	dst = append(dst, plaintext...)
	cipher.NewCTR(h.block, nonce).XORKeyStream(dst[start+ctrNonceLen:], plaintext)
	return c.mac(dst, h.nonce, chunkNumber(n), dst[start:]), nil
}

// OpenChunk authenticates chunk n of the file with header h and appends its plaintext to dst.
// A chunk that does not authenticate is a *crypto.BlockError wrapping crypto.ErrAuth, and
// nothing of it is appended.
func (c *Content) OpenChunk(dst, chunk []byte, n uint64, h *FileHeader) ([]byte, error) {
	if len(chunk) <= c.geo.BlockOverhead || len(chunk) > c.geo.BlockSize+c.geo.BlockOverhead {
		return dst, &crypto.BlockError{Block: n, Err: fmt.Errorf("chunk of %d bytes: %w", len(chunk), crypto.ErrAuth)}
	}
	if c.combo == SIVGCM {
		ad := append(chunkNumber(n), h.nonce...)
		out, err := h.aead.Open(dst, chunk[:gcmNonceLen], chunk[gcmNonceLen:], ad)
		if err != nil {
			return dst, &crypto.BlockError{Block: n, Err: crypto.ErrAuth}
		}
		return out, nil
	}
	body, tag := chunk[:len(chunk)-macLen], chunk[len(chunk)-macLen:]
	if !hmac.Equal(c.mac(nil, h.nonce, chunkNumber(n), body), tag) {
		return dst, &crypto.BlockError{Block: n, Err: crypto.ErrAuth}
	}
	start := len(dst)
	dst = append(dst, body[ctrNonceLen:]...)
	cipher.NewCTR(h.block, body[:ctrNonceLen]).XORKeyStream(dst[start:], body[ctrNonceLen:])
	return dst, nil
}

// SealChunks appends the sealed chunks of plaintext (each ChunkSize bytes but perhaps the
// last), numbered from first, to dst.
func (c *Content) SealChunks(dst, plaintext []byte, first uint64, h *FileHeader) ([]byte, error) {
	for i, n := 0, first; i < len(plaintext); i, n = i+ChunkSize, n+1 {
		var err error
		if dst, err = c.SealChunk(dst, plaintext[i:min(i+ChunkSize, len(plaintext))], n, h); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// OpenChunks appends the plaintext of the sealed chunks numbered from first to dst. It stops
// at the first chunk that does not authenticate (a *crypto.BlockError), with the chunks before
// it appended and nothing of it.
func (c *Content) OpenChunks(dst, sealed []byte, first uint64, h *FileHeader) ([]byte, error) {
	return c.openChunks(dst, sealed, first, h, nil)
}

// OpenChunksZeroing is OpenChunks with zeros of its cleartext length for each chunk that does
// not authenticate (recovery, and fsck reading on), each passed to bad; never its
// unauthenticated decryption.
func (c *Content) OpenChunksZeroing(dst, sealed []byte, first uint64, h *FileHeader, bad func(*crypto.BlockError)) []byte {
	dst, _ = c.openChunks(dst, sealed, first, h, bad)
	return dst
}

func (c *Content) openChunks(dst, sealed []byte, first uint64, h *FileHeader, bad func(*crypto.BlockError)) ([]byte, error) {
	cbs := c.geo.CipherBlockSize()
	for i, n := 0, first; i < len(sealed); i, n = i+cbs, n+1 {
		chunk := sealed[i:min(i+cbs, len(sealed))]
		out, err := c.OpenChunk(dst, chunk, n, h)
		if err != nil {
			if bad == nil {
				return dst, err
			}
			bad(err.(*crypto.BlockError))
			out = append(dst, make([]byte, max(len(chunk)-c.geo.BlockOverhead, 0))...)
		}
		dst = out
	}
	return dst, nil
}

// Encrypt writes the ciphertext of everything read from r to w: a new header, then its
// chunks. It returns the cleartext bytes read.
func (c *Content) Encrypt(w io.Writer, r io.Reader) (int64, error) {
	h, hb, err := c.NewHeader()
	if err != nil {
		return 0, err
	}
	if _, err := w.Write(hb); err != nil {
		return 0, err
	}
	return chunkwise(w, r, make([]byte, ChunkSize), make([]byte, 0, ChunkSize+c.geo.BlockOverhead),
		func(dst, src []byte, n uint64) ([]byte, error) { return c.SealChunk(dst, src, n, h) })
}

// Decrypt writes the cleartext of the ciphertext read from r to w, chunk by chunk: a chunk
// reaches w only once it authenticated. An empty input is an empty file. It returns the
// cleartext bytes written; an error about the content wraps crypto.ErrAuth (a
// *crypto.BlockError names the chunk).
func (c *Content) Decrypt(w io.Writer, r io.Reader) (int64, error) {
	hb := make([]byte, c.geo.HeaderLen)
	m, err := io.ReadFull(r, hb)
	switch {
	case err == io.EOF:
		return 0, nil
	case err == io.ErrUnexpectedEOF:
		return 0, fmt.Errorf("header cut off at %d of %d bytes: %w", m, c.geo.HeaderLen, crypto.ErrAuth)
	case err != nil:
		return 0, err
	}
	h, err := c.OpenHeader(hb)
	if err != nil {
		return 0, err
	}
	return chunkwise(w, r, make([]byte, c.geo.BlockSize+c.geo.BlockOverhead), make([]byte, 0, c.geo.BlockSize),
		func(dst, src []byte, n uint64) ([]byte, error) { return c.OpenChunk(dst, src, n, h) })
}

// chunkwise writes to w what crypt makes of each chunk read from r into buf (numbered from
// 0), through out, until r ends. It returns the cleartext bytes: of each chunk, the shorter
// of what was read and what was written.
func chunkwise(w io.Writer, r io.Reader, buf, out []byte, crypt func(dst, src []byte, n uint64) ([]byte, error)) (int64, error) {
	var total int64
	for n := uint64(0); ; n++ {
		m, rerr := io.ReadFull(r, buf)
		if m > 0 {
			var err error
			if out, err = crypt(out[:0], buf[:m], n); err != nil {
				return total, err
			}
			if _, err := w.Write(out); err != nil {
				return total, err
			}
			total += int64(min(m, len(out)))
		}
		switch rerr {
		case nil:
		case io.EOF, io.ErrUnexpectedEOF:
			return total, nil
		default:
			return total, rerr
		}
	}
}
