package registry

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// FuzzParse reads hostile vaults.json contents: no panic; what parses holds valid entries
// without duplicates, and writes out (encode, as Save does) to a file that parses to the same
// vaults and writes out to the same bytes again, fields this version does not know included.
func FuzzParse(f *testing.F) {
	seed, err := encode([]Entry{
		{Name: "work", CipherDir: "/c/work", MountPoint: "/m/work", Idle: 15 * time.Minute, Lock: LockSleep},
		{Name: "Fotos ✓", CipherDir: "/c/f", ReadOnly: true, Reverse: true, Exclude: []string{"*.tmp"}, ExtPass: []string{"pass", "show"},
			extra: map[string]json.RawMessage{"future": []byte(`{"a":[1,2]}`)}},
	}, map[string]json.RawMessage{"newer": []byte(`"x"`)})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"version":1,"vaults":[]}`))
	f.Add([]byte(`{"version":1,"vaults":[{"name":"a","cipherdir":"/a"},{"name":"b","cipherdir":"/a/"}]}`))
	f.Add([]byte(`{"version":1,"vaults":[{"name":"a","cipherdir":"/a","idle":"-1s"}]} {}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<20 {
			t.Skip("over 1 MiB")
		}
		vaults, extra, err := parse(data)
		if err != nil {
			return
		}
		x := newVaultIndex(len(vaults))
		for _, e := range vaults {
			if err := validateRegistryEntry(e); err != nil {
				t.Fatal(err)
			}
			if err := x.add(e); err != nil {
				t.Fatal(err)
			}
		}
		out, err := encode(vaults, extra)
		if err != nil {
			t.Fatalf("a registry that parses does not encode: %v", err)
		}
		vaults2, extra2, err := parse(out)
		if err != nil {
			t.Fatalf("encoded registry does not parse: %v\n%s", err, out)
		}
		if len(vaults2) != len(vaults) {
			t.Fatalf("%d vaults read back as %d", len(vaults), len(vaults2))
		}
		for i := range vaults {
			a, b := vaults[i], vaults2[i]
			a.extra, b.extra = nil, nil
			if a.Name != b.Name || a.CipherDir != b.CipherDir || a.MountPoint != b.MountPoint || a.Idle != b.Idle ||
				a.Lock != b.Lock || a.ReadOnly != b.ReadOnly || len(a.ExtPass) != len(b.ExtPass) {
				t.Fatalf("vault %+v read back as %+v", a, b)
			}
		}
		out2, err := encode(vaults2, extra2)
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("encoding is not stable (%v):\n%s\n%s", err, out, out2)
		}
	})
}
