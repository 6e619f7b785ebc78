package crypto

import (
	"context"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/bits"
	"runtime/debug"

	"golang.org/x/crypto/scrypt"
)

// Key sizes and scrypt limits of the gocryptfs format.
const (
	// MasterKeyLen is the length of a vault's master key.
	MasterKeyLen = 32
	// ScryptSaltLen is the salt length of new vaults.
	ScryptSaltLen = 32
	// DefaultScryptLogN is the scrypt cost of new vaults (N = 2^16).
	DefaultScryptLogN = 16
	// MinScryptLogN and MaxScryptLogN bound the scrypt cost: gocryptfs -init accepts
	// -scryptn 10 to 28 and nothing else ever writes a config. Below 2^10 a password is too
	// cheap to guess. At 2^28 scrypt needs 128*N*R bytes = 32 GiB x R, so 256 GiB with
	// gocryptfs's R=8: legal, but more than most machines have, which is why DeriveKey also
	// checks the memory available (see CheckScryptMemory).
	MinScryptLogN = 10
	MaxScryptLogN = 28
	// ScryptR and ScryptP are the only values gocryptfs writes ("always 8", "always 1").
	// Other values only come from a hand-edited or hostile config: a larger R multiplies
	// the memory, a larger P the time (P=128 turns seconds into minutes or hours).
	ScryptR = 8
	ScryptP = 1
	// minScryptKeyLen and maxScryptKeyLen bound the output length (gocryptfs writes 32).
	minScryptKeyLen = 32
	maxScryptKeyLen = 1024
)

// HKDF info strings of the gocryptfs format.
const (
	InfoGCMContent     = "AES-GCM file content encryption"
	InfoXChaChaContent = "XChaCha20-Poly1305 file content encryption"
	InfoSIVContent     = "AES-SIV file content encryption"
	// InfoAEGISContent is the GCM string: gocryptfs's AEGIS branch reuses it.
	InfoAEGISContent = InfoGCMContent
	InfoEMENames     = "EME filename encryption"
)

// ErrWeakKDF is wrapped by ScryptKDF.Validate for parameters outside what
// gocryptfs creates (logN 10..28, R=8, P=1, salt and key of at least 32 bytes).
var ErrWeakKDF = errors.New("scrypt parameters out of range")

// ScryptKDF holds the scrypt parameters stored in gocryptfs.conf as
// "ScryptObject". Its JSON form matches gocryptfs exactly.
type ScryptKDF struct {
	Salt   []byte
	N      int
	R      int
	P      int
	KeyLen int
}

// NewScryptKDF returns parameters with a fresh random salt and N = 2^logN.
// logN 0 means DefaultScryptLogN.
func NewScryptKDF(logN int) (ScryptKDF, error) {
	if logN == 0 {
		logN = DefaultScryptLogN
	}
	if logN < MinScryptLogN || logN > MaxScryptLogN {
		return ScryptKDF{}, fmt.Errorf("%w: logN %d is outside %d..%d", ErrWeakKDF, logN, MinScryptLogN, MaxScryptLogN)
	}
	s := ScryptKDF{Salt: make([]byte, ScryptSaltLen), N: 1 << logN, R: ScryptR, P: ScryptP, KeyLen: minScryptKeyLen}
	if _, err := rand.Read(s.Salt); err != nil {
		return ScryptKDF{}, fmt.Errorf("crypto: reading random salt: %w", err)
	}
	return s, nil
}

// LogN returns log2(N), or -1 when N is not a power of two.
func (s ScryptKDF) LogN() int {
	if s.N <= 0 || s.N&(s.N-1) != 0 {
		return -1
	}
	return bits.TrailingZeros(uint(s.N))
}

// Validate checks the parameters against what gocryptfs creates: N a power
// of two from 2^10 to 2^28, R = 8, P = 1, a salt of at least 32 bytes and
// KeyLen from 32 to 1024. The error names the parameter, its value and the
// limit. Parameters that pass may still cost more than the caller allows
// (CheckScryptCost) or need more memory than the machine has (CheckScryptMemory): DeriveKey
// checks both before it runs scrypt.
func (s ScryptKDF) Validate() error { return s.ValidateMinSalt(ScryptSaltLen) }

// ValidateMinSalt is Validate for a format whose salts may be shorter than gocryptfs's 32
// bytes, down to minSaltLen (DeriveKeyMinSalt): a reader checks the parameters with it before
// anything else of the file is used.
func (s ScryptKDF) ValidateMinSalt(minSaltLen int) error {
	logN := s.LogN()
	switch {
	case s.N < 1<<MinScryptLogN:
		return fmt.Errorf("%w: N=%d is below the minimum 2^%d", ErrWeakKDF, s.N, MinScryptLogN)
	case logN < 0:
		return fmt.Errorf("%w: N=%d is not a power of two", ErrWeakKDF, s.N)
	case logN > MaxScryptLogN:
		return fmt.Errorf("%w: N=2^%d is above the maximum 2^%d", ErrWeakKDF, logN, MaxScryptLogN)
	case s.R != ScryptR:
		return fmt.Errorf("%w: R=%d, but gocryptfs only uses R=%d", ErrWeakKDF, s.R, ScryptR)
	case s.P != ScryptP:
		return fmt.Errorf("%w: P=%d, but gocryptfs only uses P=%d", ErrWeakKDF, s.P, ScryptP)
	case len(s.Salt) < minSaltLen:
		return fmt.Errorf("%w: salt is %d bytes, the minimum is %d", ErrWeakKDF, len(s.Salt), minSaltLen)
	case s.KeyLen < minScryptKeyLen:
		return fmt.Errorf("%w: KeyLen=%d is below the minimum %d", ErrWeakKDF, s.KeyLen, minScryptKeyLen)
	case s.KeyLen > maxScryptKeyLen:
		return fmt.Errorf("%w: KeyLen=%d is above the maximum %d", ErrWeakKDF, s.KeyLen, maxScryptKeyLen)
	}
	return nil
}

// MemoryNeed returns the bytes scrypt allocates for these parameters:
// 128*N*R for its table V plus 128*R*(P+2) for its buffers.
func (s ScryptKDF) MemoryNeed() uint64 {
	return 128*uint64(s.N)*uint64(s.R) + 128*uint64(s.R)*uint64(s.P+2)
}

// inProcessCost is the largest cost (Cost) derived in this process: gocryptfs's default
// 2^16 (64 MiB, a tenth of a second or so). A costlier derivation runs in a helper process
// (deriveInHelper), the only way to stop scrypt before its end and give its memory back at
// once: x/crypto's scrypt.Key cannot be interrupted.
const inProcessCost = 64 << 20

// DeriveKey runs scrypt on password and returns the key-encryption key. It
// refuses, before scrypt allocates anything, parameters that Validate
// rejects (ErrWeakKDF), a cost above the bound ctx carries (ErrKDFCostly, see WithCostBound
// and CheckScryptCost; without one, DefaultCostBound) and one that needs more memory than is
// available (ErrKDFMemory): Go cannot recover from running out of memory, and the daemon must
// not die for one vault.
//
// The derivation stops when ctx ends: a costly one (above 64 MiB) runs in a helper process
// that is killed then, its memory returned to the system; a cheap one runs here, and ctx is
// checked before it starts. The error then wraps ctx.Err(). Derivations do not wait for each
// other: one vault's costly key never holds up another's.
func (s ScryptKDF) DeriveKey(ctx context.Context, password []byte) ([]byte, error) {
	return s.DeriveKeyMinSalt(ctx, password, ScryptSaltLen)
}

// DeriveKeyMinSalt is DeriveKey for a format whose salts may be shorter than gocryptfs's 32
// bytes, down to minSaltLen: Cryptomator writes 8-byte salts. Every other bound is the same.
func (s ScryptKDF) DeriveKeyMinSalt(ctx context.Context, password []byte, minSaltLen int) ([]byte, error) {
	if err := s.ValidateMinSalt(minSaltLen); err != nil {
		return nil, err
	}
	if err := CheckScryptCost(s, CostBoundOf(ctx)); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("crypto: key derivation not started: %w", err)
	}
	if err := CheckScryptMemory(s); err != nil {
		return nil, err
	}
	if s.Cost() > inProcessCost {
		return deriveInHelper(ctx, s, password)
	}
	k, err := scrypt.Key(password, s.Salt, s.N, s.R, s.P, s.KeyLen)
	if err != nil {
		return nil, fmt.Errorf("crypto: scrypt: %w", err)
	}
	if s.MemoryNeed() >= inProcessCost {
		// Hand the table back to the system now, not at the next GC: the next check (and
		// the rest of the machine) would otherwise see it as still in use.
		debug.FreeOSMemory()
	}
	return k, nil
}

// HKDF derives n bytes from masterKey with HKDF-SHA256, an empty salt and the
// given info string, as gocryptfs does for its sub-keys.
func HKDF(masterKey []byte, info string, n int) []byte {
	k, err := hkdf.Key(sha256.New, masterKey, nil, info, n)
	if err != nil {
		// Only an impossible length gets here: a programming error.
		panic("crypto: HKDF: " + err.Error())
	}
	return k
}

// Master key sealing in gocryptfs.conf: AES-256-GCM over block number 0 with
// no file ID. With HKDF the GCM key is derived from the KEK and the nonce has
// 128 bits; without (gocryptfs <= 1.2) the KEK is used directly with 96 bits.
const (
	masterKeyNonceLenHKDF   = 16
	masterKeyNonceLenLegacy = 12
)

func masterKeyAEAD(kek []byte, useHKDF bool) (cipher.AEAD, int, error) {
	key := kek
	nonceLen := masterKeyNonceLenLegacy
	if useHKDF {
		key = HKDF(kek, InfoGCMContent, 32)
		defer Wipe(key)
		nonceLen = masterKeyNonceLenHKDF
	}
	if len(key) != 32 {
		return nil, 0, fmt.Errorf("crypto: key-encryption key is %d bytes, want 32", len(key))
	}
	a, err := aesGCM(key, nonceLen)
	return a, nonceLen, err
}

// SealMasterKey encrypts masterKey under the key-encryption key kek (the
// scrypt output) in the gocryptfs.conf "EncryptedKey" layout: nonce,
// ciphertext, tag.
func SealMasterKey(kek, masterKey []byte, useHKDF bool) ([]byte, error) {
	a, nonceLen, err := masterKeyAEAD(kek, useHKDF)
	if err != nil {
		return nil, err
	}
	out := make([]byte, nonceLen, nonceLen+len(masterKey)+a.Overhead())
	if _, err := rand.Read(out); err != nil {
		return nil, fmt.Errorf("crypto: reading random nonce: %w", err)
	}
	var ad [8]byte // block number 0, no file ID
	return a.Seal(out, out[:nonceLen], masterKey, ad[:]), nil
}

// OpenMasterKey decrypts an "EncryptedKey" with kek. A wrong password shows
// up here as an error wrapping ErrAuth.
func OpenMasterKey(kek, encrypted []byte, useHKDF bool) ([]byte, error) {
	a, nonceLen, err := masterKeyAEAD(kek, useHKDF)
	if err != nil {
		return nil, err
	}
	if len(encrypted) < nonceLen+a.Overhead() {
		return nil, fmt.Errorf("crypto: encrypted master key is %d bytes, too short: %w", len(encrypted), ErrAuth)
	}
	var ad [8]byte // block number 0, no file ID
	mk, err := a.Open(nil, encrypted[:nonceLen], encrypted[nonceLen:], ad[:])
	if err != nil {
		return nil, fmt.Errorf("crypto: opening master key: %w", ErrAuth)
	}
	return mk, nil
}
