package crypto

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"testing"
)

// xattrFixture was made by gocryptfs 2.3: extended attributes set through its mount, read raw
// from the cipher file.
type xattrFixture struct {
	MasterKey string            `json:"master_key"`
	Plain     map[string]string `json:"plain"`
	CipherHex map[string]string `json:"cipher_hex"`
}

func TestXattrGocryptfsFixture(t *testing.T) {
	b, err := os.ReadFile("testdata/xattr-gocryptfs.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx xattrFixture
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	key, _ := hex.DecodeString(fx.MasterKey)
	names, err := NewNameTransform(key, true, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := NewContentEnc(AESGCM, key, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(fx.Plain) != len(fx.CipherHex) || len(fx.Plain) == 0 {
		t.Fatalf("fixture has %d plain and %d cipher attributes", len(fx.Plain), len(fx.CipherHex))
	}
	for name, value := range fx.Plain {
		cname, err := names.EncryptXattrName(name)
		if err != nil {
			t.Fatal(err)
		}
		chex, ok := fx.CipherHex[XattrPrefix+cname]
		if !ok {
			t.Errorf("%s encrypts to %s, which gocryptfs did not write", name, cname)
			continue
		}
		if got, err := names.DecryptXattrName(cname); err != nil || got != name {
			t.Errorf("DecryptXattrName(%s) = %q, %v; want %q", cname, got, err, name)
		}
		cval, _ := hex.DecodeString(chex)
		got, err := enc.DecryptXattrValue(cval)
		if err != nil || string(got) != value {
			t.Errorf("%s: value decrypts to %q, %v; want %q", name, got, err, value)
		}
		// Our encryption of the value opens the same way (random nonce: not byte-equal).
		if got, err := enc.DecryptXattrValue(enc.EncryptXattrValue([]byte(value))); err != nil || string(got) != value {
			t.Errorf("%s: round trip gives %q, %v", name, got, err)
		}
	}
}

func TestXattrNamesAndValuesRefuseBadInput(t *testing.T) {
	eachCipher(t, func(t *testing.T, e *ContentEnc) {
		c := e.EncryptXattrValue([]byte("value"))
		c[len(c)-1] ^= 1
		if _, err := e.DecryptXattrValue(c); !errors.Is(err, ErrAuth) {
			t.Errorf("a tampered value: %v, want ErrAuth", err)
		}
		if c := e.EncryptXattrValue(nil); len(c) != 0 {
			t.Errorf("an empty value encrypts to %d bytes, want 0 (as gocryptfs)", len(c))
		}
		big := e.EncryptXattrValue(bytes.Repeat([]byte("x"), 65536))
		if got, err := e.DecryptXattrValue(big); err != nil || len(got) != 65536 {
			t.Errorf("a 64 KiB value: %d bytes, %v", len(got), err)
		}
	})
	names, _ := NewNameTransform(testKey(), true, true, 0)
	for _, bad := range []string{"", "a\x00b"} {
		if _, err := names.EncryptXattrName(bad); err == nil {
			t.Errorf("EncryptXattrName(%q) succeeded", bad)
		}
	}
	if _, err := names.DecryptXattrName("not base64!"); err == nil {
		t.Error("DecryptXattrName of garbage succeeded")
	}
}
