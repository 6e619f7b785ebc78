package vault

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

func TestFixtureConfigs(t *testing.T) {
	want := map[string]crypto.CipherID{"gcm-default": crypto.AESGCM, "xchacha": crypto.XChaCha, "aessiv": crypto.AESSIV,
		"aegis256x2": crypto.AEGIS, "plaintextnames": crypto.AESGCM, "deterministic": crypto.AESGCM, "longnamemax": crypto.AESGCM}
	for _, name := range fixtureNames(t) {
		f := loadFixture(t, name)
		data, err := os.ReadFile(filepath.Join(f.dir, crypto.ConfName))
		if err != nil {
			t.Fatal(err)
		}
		c, err := gocryptfs.ParseConfig(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c.Cipher() != want[name] {
			t.Errorf("%s: cipher %s", name, c.Cipher())
		}
		// Marshal reproduces gocryptfs's file byte for byte.
		out, err := c.Marshal()
		if err != nil || !bytes.Equal(out, data) {
			t.Errorf("%s: Marshal differs from gocryptfs:\n%s\nvs\n%s", name, out, data)
		}
		info, err := ReadInfo(f.dir)
		if err != nil || info.Cipher != want[name] || info.ScryptN != 1024 || info.ScryptLogN != 10 {
			t.Errorf("%s: ReadInfo %+v %v", name, info, err)
		}
		switch name {
		case "plaintextnames":
			if !info.PlaintextNames || info.LongNameMax != 0 {
				t.Errorf("plaintextnames info %+v", info)
			}
		case "deterministic":
			if !info.DeterministicNames {
				t.Errorf("deterministic info %+v", info)
			}
		case "longnamemax":
			if info.LongNameMax != 62 || c.NameLimit() != 62 {
				t.Errorf("longnamemax info %+v", info)
			}
		default:
			if info.LongNameMax != 255 || info.DeterministicNames || info.PlaintextNames {
				t.Errorf("%s info %+v", name, info)
			}
		}
	}
}

// baseConfig returns a valid config as JSON fields to mutate.
func baseConfig(t *testing.T) map[string]any {
	t.Helper()
	f := loadFixture(t, "gcm-default")
	data, _ := os.ReadFile(filepath.Join(f.dir, crypto.ConfName))
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestParseConfigErrors(t *testing.T) {
	base := baseConfig(t)
	enc := func(mut func(m map[string]any)) []byte {
		b, _ := json.Marshal(base)
		var m map[string]any
		json.Unmarshal(b, &m)
		mut(m)
		out, _ := json.MarshalIndent(m, "", "\t")
		return out
	}
	flags := func(f ...string) func(m map[string]any) {
		return func(m map[string]any) {
			l := make([]any, len(f))
			for i, s := range f {
				l[i] = s
			}
			m["FeatureFlags"] = l
		}
	}
	scrypt := func(k string, v any) func(m map[string]any) {
		return func(m map[string]any) { m["ScryptObject"].(map[string]any)[k] = v }
	}
	good := enc(func(map[string]any) {})
	if _, err := gocryptfs.ParseConfig(good); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		data []byte
		want string
		is   error
	}{
		{"empty", nil, "empty", ErrCorrupt},
		{"not JSON", []byte("hello, world"), "not valid JSON", ErrCorrupt},
		{"truncated", good[:len(good)/2], "truncated", ErrCorrupt},
		{"truncated at 1", good[:1], "truncated", ErrCorrupt},
		{"wrong type", enc(func(m map[string]any) { m["Version"] = "two" }), "Version", ErrCorrupt},
		{"version 3", enc(func(m map[string]any) { m["Version"] = 3 }), "version 3", ErrUnsupported},
		{"version 1", enc(func(m map[string]any) { m["Version"] = 1 }), "version 1", ErrUnsupported},
		{"version missing", enc(func(m map[string]any) { delete(m, "Version") }), "Version is missing", ErrCorrupt},
		{"R too large", enc(scrypt("R", 1024)), "R=1024, but gocryptfs only uses R=8", ErrCorrupt},
		{"P too large", enc(scrypt("P", 128)), "P=128, but gocryptfs only uses P=1", ErrCorrupt},
		{"N too large", enc(scrypt("N", 1<<29)), "N=2^29 is above the maximum 2^28", ErrCorrupt},
		{"unknown flag", enc(flags("HKDF", "GCMIV128", "DirIV", "EMENames", "Quantum")), `"Quantum"`, ErrUnsupported},
		{"aegis+gcmiv128", enc(flags("HKDF", "AEGIS256X2", "GCMIV128", "EMENames")), "AEGIS256X2 and GCMIV128", ErrCorrupt},
		{"aegis+xchacha", enc(flags("HKDF", "AEGIS256X2", "XChaCha20Poly1305", "EMENames")), "AEGIS256X2 and XChaCha20Poly1305", ErrCorrupt},
		{"aegis without hkdf", enc(flags("AEGIS256X2", "EMENames")), "requires HKDF", ErrCorrupt},
		{"xchacha+gcmiv128", enc(flags("HKDF", "XChaCha20Poly1305", "GCMIV128", "EMENames")), "XChaCha20Poly1305 and GCMIV128", ErrCorrupt},
		{"xchacha+siv", enc(flags("HKDF", "XChaCha20Poly1305", "AESSIV", "EMENames")), "XChaCha20Poly1305 and AESSIV", ErrCorrupt},
		{"gcm without gcmiv128", enc(flags("HKDF", "DirIV", "EMENames")), "GCMIV128", ErrCorrupt},
		{"siv without gcmiv128", enc(flags("HKDF", "AESSIV", "EMENames")), "AESSIV requires GCMIV128", ErrCorrupt},
		{"plaintext+eme", enc(flags("HKDF", "GCMIV128", "PlaintextNames", "EMENames")), "PlaintextNames and EMENames", ErrCorrupt},
		{"no eme", enc(flags("HKDF", "GCMIV128", "DirIV")), "EMENames", ErrCorrupt},
		{"longnamemax without value", enc(flags("HKDF", "GCMIV128", "EMENames", "LongNames", "LongNameMax")), "LongNameMax is 0", ErrCorrupt},
		{"longnamemax value without flag", enc(func(m map[string]any) { m["LongNameMax"] = 100 }), "not set", ErrCorrupt},
		{"longnamemax too small", enc(func(m map[string]any) {
			flags("HKDF", "GCMIV128", "EMENames", "LongNames", "LongNameMax")(m)
			m["LongNameMax"] = 20
		}), "below the minimum", ErrCorrupt},
		{"N too small", enc(scrypt("N", 512)), "N=512", ErrCorrupt},
		{"R too small", enc(scrypt("R", 4)), "R=4", ErrCorrupt},
		{"P zero", enc(scrypt("P", 0)), "P=0", ErrCorrupt},
		{"short salt", enc(scrypt("Salt", "AAAA")), "salt", ErrCorrupt},
		{"short keylen", enc(scrypt("KeyLen", 16)), "KeyLen=16", ErrCorrupt},
		{"short EncryptedKey", enc(func(m map[string]any) { m["EncryptedKey"] = "AAAA" }), "EncryptedKey", ErrCorrupt},
		{"fido2", enc(flags("HKDF", "GCMIV128", "DirIV", "EMENames", "FIDO2")), "FIDO2", ErrUnsupported},
	}
	for _, c := range cases {
		_, err := gocryptfs.ParseConfig(c.data)
		if err == nil || !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %v containing %q", c.name, err, c.is, c.want)
		}
	}
}

func TestLoadConfigMissing(t *testing.T) {
	dir := t.TempDir()
	if _, err := gocryptfs.LoadConfig(dir); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("missing config: %v", err)
	}
	if _, err := ReadInfo(dir); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, crypto.ConfName), []byte("{"), 0o400); err != nil {
		t.Fatal(err)
	}
	if _, err := gocryptfs.LoadConfig(dir); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("corrupt config: %v", err)
	}
}
