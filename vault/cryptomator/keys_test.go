package cryptomator

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/layout"
)

func TestFixtureConfigVerifies(t *testing.T) {
	dir := extractFixture(t)
	tok, err := os.ReadFile(filepath.Join(dir, ConfigFileName))
	if err != nil {
		t.Fatal(err)
	}
	name, err := MasterkeyFileOf(tok)
	if err != nil || name != MasterkeyFileName {
		t.Fatalf("MasterkeyFileOf = %q, %v", name, err)
	}
	c, err := VerifyConfig(tok, mustFixtureKey(t))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{KeyID: "masterkeyfile:masterkey.cryptomator", Format: 8, ShorteningThreshold: 220,
		JTI: "b05f3ab0-a1f2-45a3-8246-880015004f92", CipherCombo: SIVGCM}
	if *c != want {
		t.Fatalf("config %+v, want %+v", *c, want)
	}
}

func TestUnlockMasterkeyWrongPassword(t *testing.T) {
	dir := extractFixture(t)
	mk, err := os.ReadFile(filepath.Join(dir, MasterkeyFileName))
	if err != nil {
		t.Fatal(err)
	}
	if k, err := UnlockMasterkey(context.Background(), mk, []byte("not the password")); !errors.Is(err, ErrWrongPassword) || k != nil {
		t.Fatalf("wrong password: %v, %v", k, err)
	}
}

// A password is NFC-normalized before scrypt, as Cryptomator does since vault version 6: the
// decomposed spelling of a password opens a vault locked with the composed one.
func TestPasswordIsNFC(t *testing.T) {
	k, err := NewMasterkey()
	if err != nil {
		t.Fatal(err)
	}
	mk, err := LockMasterkey(context.Background(), k, []byte("caf\u00e9"), 10)
	if err != nil {
		t.Fatal(err)
	}
	got, err := UnlockMasterkey(context.Background(), mk, []byte("cafe\u0301"))
	if err != nil {
		t.Fatal(err)
	}
	if *got != *k {
		t.Fatal("a different key came out")
	}
}

// Every way a masterkey file can be damaged or hostile gives an error of its kind, and no key.
func TestUnlockMasterkeyRejects(t *testing.T) {
	k, err := NewMasterkey()
	if err != nil {
		t.Fatal(err)
	}
	good, err := LockMasterkey(context.Background(), k, []byte("pw"), 10)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	flipB64 := func(m map[string]any, field string) {
		b, _ := base64.StdEncoding.DecodeString(m[field].(string))
		b[len(b)/2] ^= 1
		m[field] = base64.StdEncoding.EncodeToString(b)
	}
	for _, c := range []struct {
		name string
		data []byte
		want error
	}{
		{"not JSON", []byte("{"), layout.ErrCorrupt},
		{"versionMac changed", edit(func(m map[string]any) { flipB64(m, "versionMac") }), layout.ErrCorrupt},
		{"version changed", edit(func(m map[string]any) { m["version"] = 7 }), layout.ErrCorrupt},
		{"hmacMasterKey changed", edit(func(m map[string]any) { flipB64(m, "hmacMasterKey") }), layout.ErrCorrupt},
		{"primaryMasterKey changed", edit(func(m map[string]any) { flipB64(m, "primaryMasterKey") }), ErrWrongPassword},
		{"primaryMasterKey missing", edit(func(m map[string]any) { delete(m, "primaryMasterKey") }), layout.ErrCorrupt},
		{"versionMac missing", edit(func(m map[string]any) { delete(m, "versionMac") }), layout.ErrCorrupt},
		{"scrypt N=2^40", edit(func(m map[string]any) { m["scryptCostParam"] = 1 << 40 }), crypto.ErrWeakKDF},
		{"scrypt N=2^4", edit(func(m map[string]any) { m["scryptCostParam"] = 16 }), crypto.ErrWeakKDF},
		{"scrypt N not a power of two", edit(func(m map[string]any) { m["scryptCostParam"] = 3 << 12 }), crypto.ErrWeakKDF},
		{"scrypt block size 1024", edit(func(m map[string]any) { m["scryptBlockSize"] = 1024 }), crypto.ErrWeakKDF},
		{"salt of 4 bytes", edit(func(m map[string]any) { m["scryptSalt"] = "AAAAAA==" }), crypto.ErrWeakKDF},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := UnlockMasterkey(context.Background(), c.data, []byte("pw"))
			if !errors.Is(err, c.want) || got != nil {
				t.Fatalf("UnlockMasterkey = %v, %v; want %v", got, err, c.want)
			}
		})
	}
}

func TestConfigSignVerifyRoundTrip(t *testing.T) {
	k, _ := NewMasterkey()
	for _, combo := range []CipherCombo{SIVGCM, SIVCTRMAC} {
		c, err := NewConfig(combo)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := c.Sign(k)
		if err != nil {
			t.Fatal(err)
		}
		got, err := VerifyConfig(tok, k)
		if err != nil {
			t.Fatal(err)
		}
		if *got != *c {
			t.Fatalf("%+v, want %+v", *got, *c)
		}
		if len(c.JTI) != 36 || c.JTI[14] != '4' {
			t.Fatalf("jti %q is not a version 4 UUID", c.JTI)
		}
	}
}

// signWith makes a vault.cryptomator token with any header and claims, signed under k.
func signWith(t *testing.T, k *Masterkey, alg, kid, claims string) []byte {
	t.Helper()
	tok, err := crypto.SignJWT(crypto.JWTHeader{Alg: alg, Kid: kid, Typ: "JWT"}, []byte(claims), k.Raw())
	if err != nil {
		t.Fatal(err)
	}
	return []byte(tok)
}

func TestVerifyConfigRejects(t *testing.T) {
	k, _ := NewMasterkey()
	other, _ := NewMasterkey()
	const kid = "masterkeyfile:masterkey.cryptomator"
	good := `{"format":8,"shorteningThreshold":220,"jti":"x","cipherCombo":"SIV_GCM"}`
	b64 := base64.RawURLEncoding.EncodeToString
	for _, c := range []struct {
		name  string
		token []byte
		want  error
	}{
		{"signed by another key", signWith(t, other, "HS256", kid, good), crypto.ErrAuth},
		{"alg none", []byte(b64([]byte(`{"alg":"none","kid":"`+kid+`"}`)) + "." + b64([]byte(good)) + "."), layout.ErrCorrupt},
		{"claims swapped after signing", func() []byte {
			s := strings.Split(string(signWith(t, k, "HS256", kid, good)), ".")
			return []byte(s[0] + "." + b64([]byte(strings.Replace(good, "220", "20", 1))) + "." + s[2])
		}(), crypto.ErrAuth},
		{"format 7", signWith(t, k, "HS256", kid, strings.Replace(good, `"format":8`, `"format":7`, 1)), ErrUnsupported},
		{"format a string", signWith(t, k, "HS256", kid, strings.Replace(good, `"format":8`, `"format":"8"`, 1)), layout.ErrCorrupt},
		{"format missing", signWith(t, k, "HS256", kid, strings.Replace(good, `"format":8,`, ``, 1)), layout.ErrCorrupt},
		{"unknown combo", signWith(t, k, "HS256", kid, strings.Replace(good, "SIV_GCM", "XCHACHA", 1)), ErrUnsupported},
		{"threshold 0", signWith(t, k, "HS256", kid, strings.Replace(good, "220", "0", 1)), layout.ErrCorrupt},
		{"threshold missing", signWith(t, k, "HS256", kid, `{"format":8,"cipherCombo":"SIV_GCM"}`), layout.ErrCorrupt},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := VerifyConfig(c.token, k)
			if !errors.Is(err, c.want) || got != nil {
				t.Fatalf("VerifyConfig = %+v, %v; want %v", got, err, c.want)
			}
		})
	}
	for _, alg := range []string{"HS384", "HS512"} {
		if _, err := VerifyConfig(signWith(t, k, alg, kid, good), k); err != nil {
			t.Errorf("%s: %v", alg, err)
		}
	}
}

func TestMasterkeyFileOfRejects(t *testing.T) {
	k, _ := NewMasterkey()
	claims := `{"format":8}`
	for _, c := range []struct {
		kid  string
		want error
	}{
		{"hub+https://hub.example.com/api/vaults/bb36d67c", ErrUnsupported},
		{"https://example.com/key", ErrUnsupported},
		{"masterkeyfile:../../etc/passwd", layout.ErrCorrupt},
		{"masterkeyfile:sub/masterkey.cryptomator", layout.ErrCorrupt},
		{"masterkeyfile:..", layout.ErrCorrupt},
		{"masterkeyfile:", layout.ErrCorrupt},
	} {
		if name, err := MasterkeyFileOf(signWith(t, k, "HS256", c.kid, claims)); !errors.Is(err, c.want) {
			t.Errorf("kid %q: %q, %v; want %v", c.kid, name, err, c.want)
		}
	}
}
