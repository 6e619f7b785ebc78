package cryptomator

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/layout"
)

// ConfigFileName is the vault configuration, a JWT signed with the raw master key.
const ConfigFileName = "vault.cryptomator"

// Format is the only vault format this package reads and writes.
const Format = 8

// DefaultShorteningThreshold is Cryptomator's: encrypted names (with ".c9r") longer than 220
// characters are shortened, leaving room for a sync tool's conflict suffix within 255.
const DefaultShorteningThreshold = 220

// masterkeyFileScheme prefixes a "kid" naming a masterkey file in the vault's folder.
// Cryptomator Hub's kids ("hub+https://...") name a server this package does not talk to.
const masterkeyFileScheme = "masterkeyfile:"

// Config is a verified vault.cryptomator.
type Config struct {
	// KeyID is the JWT's "kid": where the master key is ("masterkeyfile:masterkey.cryptomator").
	KeyID string
	// Format is the vault format (8).
	Format int
	// ShorteningThreshold is the longest encrypted name (with ".c9r") stored as it is.
	ShorteningThreshold int
	// JTI is the vault's random UUID.
	JTI string
	// CipherCombo says how contents are encrypted.
	CipherCombo CipherCombo
}

type configClaims struct {
	Format              *int   `json:"format"`
	ShorteningThreshold *int   `json:"shorteningThreshold"`
	JTI                 string `json:"jti,omitempty"`
	CipherCombo         string `json:"cipherCombo"`
}

// MasterkeyFileOf reads the "kid" of a vault.cryptomator token before its signature can be
// checked (the key it names is needed for that) and returns the masterkey file's name in the
// vault's folder. Only a plain file name is accepted: a kid is not trusted yet, so it must not
// lead anywhere else.
func MasterkeyFileOf(token []byte) (string, error) {
	t, err := crypto.ParseJWT(string(bytes.TrimSpace(token)))
	if err != nil {
		return "", fmt.Errorf("%w: %v", layout.ErrCorrupt, err)
	}
	kid := t.Header.Kid
	name, ok := strings.CutPrefix(kid, masterkeyFileScheme)
	switch {
	case strings.HasPrefix(kid, "hub+"):
		return "", fmt.Errorf("%w: the key is in Cryptomator Hub (kid %q)", ErrUnsupported, kid)
	case !ok:
		return "", fmt.Errorf("%w: key location %q (only %s<file>)", ErrUnsupported, kid, masterkeyFileScheme)
	case name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00"):
		return "", fmt.Errorf("%w: kid %q does not name a file in the vault's folder", layout.ErrCorrupt, kid)
	}
	return name, nil
}

// VerifyConfig checks the token's signature under k (HS256, HS384 or HS512; "none" and
// others are refused) and then its claims: format 8, a known cipher combo, a positive
// shortening threshold. A signature that does not match is a wrong key for the vault or a
// changed file: an error wrapping layout.ErrCorrupt and crypto.ErrAuth.
func VerifyConfig(token []byte, k *Masterkey) (*Config, error) {
	t, err := crypto.ParseJWT(string(bytes.TrimSpace(token)))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", layout.ErrCorrupt, err)
	}
	raw := k.Raw()
	claims, err := t.Verify(raw)
	crypto.Wipe(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: signature does not match the master key (the file was changed, or belongs to another vault): %w", layout.ErrCorrupt, err)
	}
	var c configClaims
	if err := json.Unmarshal(claims, &c); err != nil {
		return nil, fmt.Errorf("%w: claims: %v", layout.ErrCorrupt, err)
	}
	switch {
	case c.Format == nil:
		return nil, fmt.Errorf("%w: no format claim", layout.ErrCorrupt)
	case *c.Format != Format:
		return nil, fmt.Errorf("%w: vault format %d (only %d)", ErrUnsupported, *c.Format, Format)
	case c.ShorteningThreshold == nil:
		return nil, fmt.Errorf("%w: no shorteningThreshold claim", layout.ErrCorrupt)
	case *c.ShorteningThreshold < 1:
		return nil, fmt.Errorf("%w: shorteningThreshold %d", layout.ErrCorrupt, *c.ShorteningThreshold)
	case CipherCombo(c.CipherCombo) != SIVGCM && CipherCombo(c.CipherCombo) != SIVCTRMAC:
		return nil, fmt.Errorf("%w: cipher combo %q (known: %s, %s)", ErrUnsupported, c.CipherCombo, SIVGCM, SIVCTRMAC)
	}
	return &Config{KeyID: t.Header.Kid, Format: *c.Format, ShorteningThreshold: *c.ShorteningThreshold,
		JTI: c.JTI, CipherCombo: CipherCombo(c.CipherCombo)}, nil
}

// NewConfig returns the configuration of a new vault: format 8, combo, Cryptomator's
// shortening threshold, a fresh random UUID, the key in masterkey.cryptomator.
func NewConfig(combo CipherCombo) (*Config, error) {
	var u [16]byte
	if _, err := rand.Read(u[:]); err != nil {
		return nil, err
	}
	return &Config{KeyID: masterkeyFileScheme + MasterkeyFileName, Format: Format,
		ShorteningThreshold: DefaultShorteningThreshold, JTI: uuidString(u), CipherCombo: combo}, nil
}

// Sign returns the token of c signed with HS256 under k, as Cryptomator writes it.
func (c *Config) Sign(k *Masterkey) ([]byte, error) {
	claims, err := json.Marshal(configClaims{Format: &c.Format, ShorteningThreshold: &c.ShorteningThreshold,
		JTI: c.JTI, CipherCombo: string(c.CipherCombo)})
	if err != nil {
		return nil, err
	}
	raw := k.Raw()
	defer crypto.Wipe(raw)
	s, err := crypto.SignJWT(crypto.JWTHeader{Alg: "HS256", Kid: c.KeyID, Typ: "JWT"}, claims, raw)
	return []byte(s), err
}

// uuidString formats 16 random bytes as a version 4 UUID (RFC 9562).
func uuidString(u [16]byte) string {
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}
