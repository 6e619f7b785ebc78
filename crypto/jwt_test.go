package crypto

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

// rfc7515Key is the HMAC key of RFC 7515 appendix A.1 (its JWK "k").
const rfc7515Key = "AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow"

func jwtTestKey(t *testing.T) []byte {
	t.Helper()
	k, err := base64.RawURLEncoding.DecodeString(rfc7515Key)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// The JWS of RFC 7515 appendix A.1 (HS256), and two tokens signed with HS384 and HS512 under
// the same key by Python's hmac module (an implementation independent of this one).
var jwtVectors = []struct {
	alg, token, claims string
}{
	{"HS256", "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
		"{\"iss\":\"joe\",\r\n \"exp\":1300819380,\r\n \"http://example.com/is_root\":true}"},
	{"HS384", "eyJraWQiOiJtYXN0ZXJrZXlmaWxlOm1hc3RlcmtleS5jcnlwdG9tYXRvciIsInR5cCI6IkpXVCIsImFsZyI6IkhTMzg0In0.eyJmb3JtYXQiOjgsInNob3J0ZW5pbmdUaHJlc2hvbGQiOjIyMCwianRpIjoiY2U5NzZmN2EtN2I5Mi00Y2MwLWI0YzEtYzc0YTZhYTE3Y2Y1IiwiY2lwaGVyQ29tYm8iOiJTSVZfR0NNIn0.QwKq8inP63FEeoy_qUq_23peDwLUsrtpKJ3_i-92DA2UQmU5_guOhl8cn5mUrQ6e",
		`{"format":8,"shorteningThreshold":220,"jti":"ce976f7a-7b92-4cc0-b4c1-c74a6aa17cf5","cipherCombo":"SIV_GCM"}`},
	{"HS512", "eyJraWQiOiJtYXN0ZXJrZXlmaWxlOm1hc3RlcmtleS5jcnlwdG9tYXRvciIsInR5cCI6IkpXVCIsImFsZyI6IkhTNTEyIn0.eyJmb3JtYXQiOjgsInNob3J0ZW5pbmdUaHJlc2hvbGQiOjIyMCwianRpIjoiY2U5NzZmN2EtN2I5Mi00Y2MwLWI0YzEtYzc0YTZhYTE3Y2Y1IiwiY2lwaGVyQ29tYm8iOiJTSVZfR0NNIn0.H3yeAwl6q_C8eUDaB0P-or5OfqtOFXofZosc-Nui1-lIcM87l4z5wZHsnNKGuDEdGVkRlRuD2bBOF0-i29G_hw",
		`{"format":8,"shorteningThreshold":220,"jti":"ce976f7a-7b92-4cc0-b4c1-c74a6aa17cf5","cipherCombo":"SIV_GCM"}`},
}

func TestJWTVectors(t *testing.T) {
	key := jwtTestKey(t)
	for _, v := range jwtVectors {
		t.Run(v.alg, func(t *testing.T) {
			tok, err := ParseJWT(v.token)
			if err != nil {
				t.Fatal(err)
			}
			if tok.Header.Alg != v.alg {
				t.Fatalf("alg %q, want %q", tok.Header.Alg, v.alg)
			}
			claims, err := tok.Verify(key)
			if err != nil {
				t.Fatal(err)
			}
			if string(claims) != v.claims {
				t.Fatalf("claims %q, want %q", claims, v.claims)
			}
		})
	}
	tok, _ := ParseJWT(jwtVectors[1].token)
	if tok.Header.Kid != "masterkeyfile:masterkey.cryptomator" || tok.Header.Typ != "JWT" {
		t.Fatalf("header %+v", tok.Header)
	}
}

func TestSignJWTVerifies(t *testing.T) {
	key := []byte("a key of any length works for HMAC")
	claims := []byte(`{"format":8}`)
	for _, alg := range []string{"HS256", "HS384", "HS512"} {
		s, err := SignJWT(JWTHeader{Alg: alg, Kid: "masterkeyfile:masterkey.cryptomator", Typ: "JWT"}, claims, key)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := ParseJWT(s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tok.Verify(key)
		if err != nil || string(got) != string(claims) {
			t.Fatalf("%s: Verify = %q, %v", alg, got, err)
		}
	}
	if _, err := SignJWT(JWTHeader{Alg: "none"}, claims, key); err == nil {
		t.Fatal("SignJWT with alg none succeeded")
	}
}

// A token whose signature, header, claims or key differ in any way must not verify, and
// Verify must return no claims then.
func TestJWTVerifyRejects(t *testing.T) {
	key := jwtTestKey(t)
	good := jwtVectors[0].token
	parts := strings.Split(good, ".")
	flip := func(s string, i int) string {
		b := []byte(s)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	wrongKey := append([]byte(nil), key...)
	wrongKey[len(wrongKey)-1] ^= 1
	for _, c := range []struct {
		name, token string
		key         []byte
	}{
		{"signature changed", parts[0] + "." + parts[1] + "." + flip(parts[2], 3), key},
		{"claims changed", parts[0] + "." + flip(parts[1], 10) + "." + parts[2], key},
		{"signature truncated", parts[0] + "." + parts[1] + "." + parts[2][:20], key},
		{"signature empty", parts[0] + "." + parts[1] + ".", key},
		{"wrong key", good, wrongKey},
		{"HS384 signature relabelled HS512", relabel(t, jwtVectors[1].token, "HS512"), key},
		{"HS256 header on an HS512 signature", relabel(t, jwtVectors[2].token, "HS256"), key},
	} {
		t.Run(c.name, func(t *testing.T) {
			tok, err := ParseJWT(c.token)
			if err != nil {
				return // rejected while parsing: as good
			}
			claims, err := tok.Verify(c.key)
			if err == nil || claims != nil {
				t.Fatalf("Verify = %q, %v; want an error and no claims", claims, err)
			}
			if !errors.Is(err, ErrAuth) {
				t.Fatalf("error %v does not wrap ErrAuth", err)
			}
		})
	}
}

// relabel replaces the token's header by one naming alg, keeping claims and signature.
func relabel(t *testing.T, token, alg string) string {
	t.Helper()
	parts := strings.Split(token, ".")
	h := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"` + alg + `"}`))
	return h + "." + parts[1] + "." + parts[2]
}

func TestParseJWTRejects(t *testing.T) {
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	claims := b64(`{"format":8}`)
	sig := b64("0123456789abcdef0123456789abcdef")
	for _, c := range []struct{ name, token, want string }{
		// RFC 7515 appendix A.5: an unsecured JWS.
		{"alg none (RFC 7515 A.5)", "eyJhbGciOiJub25lIn0.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.", "none"},
		{"alg None", b64(`{"alg":"None"}`) + "." + claims + "." + sig, "None"},
		{"alg RS256", b64(`{"alg":"RS256"}`) + "." + claims + "." + sig, "RS256"},
		{"alg missing", b64(`{"typ":"JWT"}`) + "." + claims + "." + sig, "alg"},
		{"two parts", b64(`{"alg":"HS256"}`) + "." + claims, "three"},
		{"four parts", b64(`{"alg":"HS256"}`) + "." + claims + "." + sig + "." + sig, "three"},
		{"padded base64", b64(`{"alg":"HS256"}`) + "=." + claims + "." + sig, "header"},
		{"header not JSON", b64(`alg=HS256`) + "." + claims + "." + sig, "header"},
		{"crit header", b64(`{"alg":"HS256","crit":["exp"]}`) + "." + claims + "." + sig, "crit"},
		{"JWE (five parts)", "a.b.c.d.e", "three"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseJWT(c.token)
			if err == nil {
				t.Fatal("ParseJWT accepted it")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not mention %q", err, c.want)
			}
		})
	}
}

// FuzzParseJWT parses hostile tokens (a vault.cryptomator anyone who can write the vault's
// folder may replace): no panic; only HS256, HS384 and HS512 get through; each part has one
// spelling (it is the base64url its bytes encode to); and re-signing what was parsed gives a
// token that parses and verifies to the same header and claims.
func FuzzParseJWT(f *testing.F) {
	key, err := base64.RawURLEncoding.DecodeString(rfc7515Key)
	if err != nil {
		f.Fatal(err)
	}
	for _, v := range jwtVectors {
		f.Add(v.token)
		f.Add(strings.Replace(v.token, ".", ".\n", 1))
	}
	f.Add("eyJhbGciOiJub25lIn0.e30.")
	f.Add("..")
	f.Fuzz(func(t *testing.T, token string) {
		if len(token) > 1<<20 {
			t.Skip("over 1 MiB")
		}
		tok, err := ParseJWT(token)
		if err != nil {
			return
		}
		if jwtHash(tok.Header.Alg) == nil {
			t.Fatalf("alg %q accepted", tok.Header.Alg)
		}
		parts := strings.Split(token, ".")
		hb, err := DecodeBase64(jwtB64, parts[0])
		if err != nil || jwtB64.EncodeToString(hb) != parts[0] ||
			jwtB64.EncodeToString(tok.claims) != parts[1] || jwtB64.EncodeToString(tok.signature) != parts[2] {
			t.Fatalf("%q parses, but a part is not the one spelling of its bytes", token)
		}
		if claims, err := tok.Verify(key); err == nil && !bytes.Equal(claims, tok.claims) {
			t.Fatal("Verify returned other claims")
		}
		again, err := SignJWT(tok.Header, tok.claims, key)
		if err != nil {
			t.Fatal(err)
		}
		tok2, err := ParseJWT(again)
		if err != nil {
			t.Fatalf("re-signed token %q does not parse: %v", again, err)
		}
		claims, err := tok2.Verify(key)
		if err != nil || tok2.Header != tok.Header || !bytes.Equal(claims, tok.claims) {
			t.Fatalf("re-signed token differs: %+v %q, %v", tok2.Header, claims, err)
		}
	})
}
