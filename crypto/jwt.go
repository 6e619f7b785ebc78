package crypto

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash"
	"strings"
)

// JSON Web Tokens signed with HMAC (RFC 7519 over RFC 7515's compact serialization), as far as
// Cryptomator's vault.cryptomator needs them: HS256, HS384 and HS512, nothing else. A token
// with any other "alg" ("none" above all) is refused while parsing, so that no caller can be
// talked into skipping the signature.

// JWTHeader is the protected header of a token.
type JWTHeader struct {
	Alg string `json:"alg"`
	Kid string `json:"kid,omitempty"`
	Typ string `json:"typ,omitempty"`
}

// JWT is a parsed token whose signature is not checked yet. Its header is readable (a
// verifier needs "kid" to find the key); its claims are only released by Verify.
type JWT struct {
	Header       JWTHeader
	signingInput string
	claims       []byte
	signature    []byte
}

// jwtHash returns the hash of an HMAC "alg", or nil for any other.
func jwtHash(alg string) func() hash.Hash {
	switch alg {
	case "HS256":
		return sha256.New
	case "HS384":
		return sha512.New384
	case "HS512":
		return sha512.New
	}
	return nil
}

// jwtB64 is the base64url of JWS without padding; Strict refuses non-zero trailing bits, and
// DecodeBase64 line breaks, so that one token has one spelling.
var jwtB64 = base64.RawURLEncoding.Strict()

// ParseJWT splits a compact token into header, claims and signature and decodes the header.
// It refuses a token that is not three base64url parts, whose header is not a JSON object, or
// whose "alg" is not HS256, HS384 or HS512, or that has a "crit" header (no extension is
// understood here).
func ParseJWT(token string) (*JWT, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("crypto: a JWT has three dot-separated parts, this has %d", len(parts))
	}
	hb, err := DecodeBase64(jwtB64, parts[0])
	if err != nil {
		return nil, fmt.Errorf("crypto: JWT header is not base64url: %w", err)
	}
	var h struct {
		JWTHeader
		Crit json.RawMessage `json:"crit"`
	}
	if err := json.Unmarshal(hb, &h); err != nil {
		return nil, fmt.Errorf("crypto: JWT header is not a JSON object: %w", err)
	}
	switch {
	case h.Alg == "":
		return nil, fmt.Errorf("crypto: JWT header has no alg")
	case jwtHash(h.Alg) == nil:
		return nil, fmt.Errorf("crypto: JWT alg %q is not accepted (only HS256, HS384, HS512)", h.Alg)
	case h.Crit != nil:
		return nil, fmt.Errorf("crypto: JWT header has crit %s, which is not understood", h.Crit)
	}
	claims, err := DecodeBase64(jwtB64, parts[1])
	if err != nil {
		return nil, fmt.Errorf("crypto: JWT claims are not base64url: %w", err)
	}
	sig, err := DecodeBase64(jwtB64, parts[2])
	if err != nil {
		return nil, fmt.Errorf("crypto: JWT signature is not base64url: %w", err)
	}
	return &JWT{Header: h.JWTHeader, signingInput: parts[0] + "." + parts[1], claims: claims, signature: sig}, nil
}

// Verify checks the token's HMAC under key, in constant time, and returns the claims (the
// JSON text) only when it matches. A mismatch is an error wrapping ErrAuth.
func (t *JWT) Verify(key []byte) ([]byte, error) {
	want := jwtMAC(t.Header.Alg, t.signingInput, key)
	if !hmac.Equal(want, t.signature) {
		return nil, fmt.Errorf("crypto: JWT signature (%s) does not match: %w", t.Header.Alg, ErrAuth)
	}
	return append([]byte(nil), t.claims...), nil
}

// SignJWT returns the compact token of header h and the JSON text claims, signed with key
// under h.Alg (HS256, HS384 or HS512).
func SignJWT(h JWTHeader, claims, key []byte) (string, error) {
	if jwtHash(h.Alg) == nil {
		return "", fmt.Errorf("crypto: JWT alg %q is not supported (only HS256, HS384, HS512)", h.Alg)
	}
	hb, err := json.Marshal(h)
	if err != nil {
		return "", fmt.Errorf("crypto: JWT header: %w", err)
	}
	in := jwtB64.EncodeToString(hb) + "." + jwtB64.EncodeToString(claims)
	return in + "." + jwtB64.EncodeToString(jwtMAC(h.Alg, in, key)), nil
}

func jwtMAC(alg, signingInput string, key []byte) []byte {
	m := hmac.New(jwtHash(alg), key)
	m.Write([]byte(signingInput))
	return m.Sum(nil)
}
