package gocryptfs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/vaultui/vaultui/vault/format"
	"github.com/vaultui/vaultui/vault/layout"
)

// FuzzParseConfig: whatever gocryptfs.conf holds, ParseConfig refuses it with a sentinel or
// parses it to a config that re-encodes to the same.
func FuzzParseConfig(f *testing.F) {
	ents, _ := filepath.Glob("testdata/fuzz-seeds/*.conf")
	for _, p := range ents {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Add([]byte(`{"Version":2}`))
	f.Add([]byte(`{"Version":2,"FeatureFlags":["HKDF","AEGIS256X2","EMENames"],"ScryptObject":{"N":1024,"R":8,"P":1,"KeyLen":32}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err != nil {
			if !errors.Is(err, layout.ErrCorrupt) && !errors.Is(err, format.ErrUnsupported) {
				t.Fatalf("error without sentinel: %v", err)
			}
			return
		}
		// A config that parses re-encodes to one that parses the same.
		out, err := c.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		c2, err := ParseConfig(out)
		if err != nil {
			t.Fatalf("re-encoded config fails: %v", err)
		}
		if c2.Cipher() != c.Cipher() || c2.NameLimit() != c.NameLimit() {
			t.Fatal("round trip changed the config")
		}
	})
}
