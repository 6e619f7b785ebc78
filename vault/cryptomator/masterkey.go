package cryptomator

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"golang.org/x/text/unicode/norm"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/layout"
)

// MasterkeyFileName is the masterkey file Cryptomator writes and its vault.cryptomator names.
const MasterkeyFileName = "masterkey.cryptomator"

// Masterkey file parameters.
const (
	// masterkeyFileVersion is the "version" of every masterkey file since vault format 8: a
	// fake version that keeps older Cryptomator releases out; the real format is in the JWT.
	masterkeyFileVersion = 999
	// DefaultScryptLogN is the scrypt cost of new vaults: N = 2^15, Cryptomator's own default.
	DefaultScryptLogN = 15
	// minScryptSaltLen is the shortest salt accepted: Cryptomator writes 8 bytes.
	minScryptSaltLen = 8
	subkeyLen        = 32
	wrappedKeyLen    = subkeyLen + 8
)

// ErrWrongPassword is wrapped when the password does not unwrap the master keys.
var ErrWrongPassword = errors.New("wrong password")

// Masterkey is a vault's two 256-bit keys: encryption (AES: headers, CTR, SIV's CTR half)
// and MAC (HMAC, SIV's S2V half). Its raw form, encryption key then MAC key, is what signs
// vault.cryptomator.
type Masterkey struct {
	enc, mac [subkeyLen]byte
}

// NewMasterkey returns a fresh random master key.
func NewMasterkey() (*Masterkey, error) {
	k := new(Masterkey)
	if _, err := rand.Read(k.enc[:]); err != nil {
		return nil, err
	}
	if _, err := rand.Read(k.mac[:]); err != nil {
		return nil, err
	}
	return k, nil
}

// MasterkeyFromRaw makes a master key from its 64-byte raw form (encryption key, then MAC
// key): the key a user who lost the password may have kept.
func MasterkeyFromRaw(raw []byte) (*Masterkey, error) {
	if len(raw) != 2*subkeyLen {
		return nil, fmt.Errorf("a Cryptomator master key is %d bytes, not %d", 2*subkeyLen, len(raw))
	}
	k := new(Masterkey)
	copy(k.enc[:], raw)
	copy(k.mac[:], raw[subkeyLen:])
	return k, nil
}

// Raw returns the 64-byte raw form; the caller wipes it.
func (k *Masterkey) Raw() []byte { return append(append([]byte(nil), k.enc[:]...), k.mac[:]...) }

// sivKey is the AES-SIV key: RFC 5297's S2V key (the MAC key), then its CTR key.
func (k *Masterkey) sivKey() []byte { return append(append([]byte(nil), k.mac[:]...), k.enc[:]...) }

// Wipe overwrites the key (best effort, see crypto.Wipe).
func (k *Masterkey) Wipe() {
	crypto.Wipe(k.enc[:])
	crypto.Wipe(k.mac[:])
}

// masterkeyFile is masterkey.cryptomator. encoding/json reads and writes []byte as standard
// base64 with padding, as Cryptomator does.
type masterkeyFile struct {
	Version          int    `json:"version"`
	ScryptSalt       []byte `json:"scryptSalt"`
	ScryptCostParam  int    `json:"scryptCostParam"`
	ScryptBlockSize  int    `json:"scryptBlockSize"`
	PrimaryMasterKey []byte `json:"primaryMasterKey"`
	HmacMasterKey    []byte `json:"hmacMasterKey"`
	VersionMac       []byte `json:"versionMac"`
}

// versionMAC is HMAC-SHA256 under the MAC key of the version as a 32-bit big-endian integer:
// it binds the file's version to the key, against a downgrade.
func versionMAC(k *Masterkey, version int) []byte {
	var v [4]byte
	binary.BigEndian.PutUint32(v[:], uint32(version))
	m := hmac.New(sha256.New, k.mac[:])
	m.Write(v[:])
	return m.Sum(nil)
}

// passwordBytes is how Cryptomator feeds a password to scrypt: UTF-8 in Unicode
// Normalization Form C (since vault version 6), so that the same password typed on systems
// that compose characters differently opens the vault. It is always a copy, which the caller
// wipes (norm.NFC.Bytes may return its argument itself).
func passwordBytes(password []byte) []byte { return norm.NFC.Append(nil, password...) }

// UnlockMasterkey opens the content of a masterkey file with password. Errors wrap
// layout.ErrCorrupt (malformed file, versionMac that does not match), ErrWrongPassword, or
// crypto.ErrWeakKDF / crypto.ErrKDFMemory (scrypt parameters outside gocryptfs's bounds:
// N 2^10..2^28, block size 8, salt at least 8 bytes); they do not name the file, the caller
// does.
func UnlockMasterkey(ctx context.Context, data, password []byte) (*Masterkey, error) {
	f, kdf, err := parseMasterkeyFile(data)
	if err != nil {
		return nil, err
	}
	pw := passwordBytes(password)
	kek, err := kdf.DeriveKeyMinSalt(ctx, pw, minScryptSaltLen)
	crypto.Wipe(pw)
	if err != nil {
		return nil, err
	}
	defer crypto.Wipe(kek)
	return f.unwrap(kek)
}

// parseMasterkeyFile checks everything of a masterkey file that needs no password: its JSON,
// version, the lengths of the wrapped keys and of versionMac, and the scrypt parameters, all
// before any key derivation, so that a hostile file costs no more than its parsing.
func parseMasterkeyFile(data []byte) (*masterkeyFile, crypto.ScryptKDF, error) {
	var f masterkeyFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, crypto.ScryptKDF{}, fmt.Errorf("%w: not a masterkey file: %v", layout.ErrCorrupt, err)
	}
	switch {
	case f.Version == 0:
		return nil, crypto.ScryptKDF{}, fmt.Errorf("%w: no version", layout.ErrCorrupt)
	case len(f.PrimaryMasterKey) != wrappedKeyLen:
		return nil, crypto.ScryptKDF{}, fmt.Errorf("%w: primaryMasterKey is %d bytes, want %d", layout.ErrCorrupt, len(f.PrimaryMasterKey), wrappedKeyLen)
	case len(f.HmacMasterKey) != wrappedKeyLen:
		return nil, crypto.ScryptKDF{}, fmt.Errorf("%w: hmacMasterKey is %d bytes, want %d", layout.ErrCorrupt, len(f.HmacMasterKey), wrappedKeyLen)
	case len(f.VersionMac) != sha256.Size:
		return nil, crypto.ScryptKDF{}, fmt.Errorf("%w: versionMac is %d bytes, want %d", layout.ErrCorrupt, len(f.VersionMac), sha256.Size)
	}
	kdf := crypto.ScryptKDF{Salt: f.ScryptSalt, N: f.ScryptCostParam, R: f.ScryptBlockSize, P: 1, KeyLen: subkeyLen}
	if err := kdf.ValidateMinSalt(minScryptSaltLen); err != nil {
		return nil, crypto.ScryptKDF{}, err
	}
	return &f, kdf, nil
}

// unwrap opens the file's keys with the key-encryption key kek (the password's scrypt
// output) and checks versionMac under them.
func (f *masterkeyFile) unwrap(kek []byte) (*Masterkey, error) {
	enc, err := crypto.KeyUnwrap(kek, f.PrimaryMasterKey)
	if err != nil {
		return nil, ErrWrongPassword
	}
	defer crypto.Wipe(enc)
	mac, err := crypto.KeyUnwrap(kek, f.HmacMasterKey)
	if err != nil {
		// The password unwrapped one key: the other was changed.
		return nil, fmt.Errorf("%w: hmacMasterKey does not unwrap under the password that unwraps primaryMasterKey", layout.ErrCorrupt)
	}
	defer crypto.Wipe(mac)
	if len(enc) != subkeyLen || len(mac) != subkeyLen {
		return nil, fmt.Errorf("%w: unwrapped keys of %d and %d bytes", layout.ErrCorrupt, len(enc), len(mac))
	}
	k := new(Masterkey)
	copy(k.enc[:], enc)
	copy(k.mac[:], mac)
	if !hmac.Equal(versionMAC(k, f.Version), f.VersionMac) {
		k.Wipe()
		return nil, fmt.Errorf("%w: versionMac does not match version %d (the file was changed)", layout.ErrCorrupt, f.Version)
	}
	return k, nil
}

// LockKey returns the content of a masterkey file holding the vault's master key under
// password (LockMasterkey).
func (v *Vault) LockKey(ctx context.Context, password []byte, logN int) ([]byte, error) {
	return LockMasterkey(ctx, v.key, password, logN)
}

// LockMasterkey returns the content of a masterkey file holding k under password, with
// scrypt cost 2^logN (0: DefaultScryptLogN) and a 32-byte salt (longer than Cryptomator's 8,
// which every reader accepts).
func LockMasterkey(ctx context.Context, k *Masterkey, password []byte, logN int) ([]byte, error) {
	if logN == 0 {
		logN = DefaultScryptLogN
	}
	kdf, err := crypto.NewScryptKDF(logN)
	if err != nil {
		return nil, err
	}
	pw := passwordBytes(password)
	kek, err := kdf.DeriveKey(ctx, pw)
	crypto.Wipe(pw)
	if err != nil {
		return nil, err
	}
	defer crypto.Wipe(kek)
	f := masterkeyFile{
		Version:         masterkeyFileVersion,
		ScryptSalt:      kdf.Salt,
		ScryptCostParam: kdf.N,
		ScryptBlockSize: kdf.R,
		VersionMac:      versionMAC(k, masterkeyFileVersion),
	}
	if f.PrimaryMasterKey, err = crypto.KeyWrap(kek, k.enc[:]); err != nil {
		return nil, err
	}
	if f.HmacMasterKey, err = crypto.KeyWrap(kek, k.mac[:]); err != nil {
		return nil, err
	}
	return json.MarshalIndent(f, "", "  ")
}
