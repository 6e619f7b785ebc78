//go:build arm64 && gc && !purego

package aegis

import "testing"

// narrowings: an ARMv8 CPU without the cryptography extension (as on some
// Raspberry Pi models), forced with GODEBUG=cpu.aes=off.
var narrowings = []narrowing{
	{"none", "cpu.aes=off", features{}, [3]int{0, 0, 0}},
}

func canNarrow(narrowing) bool { return true }

func checkArch(*testing.T, narrowing, *variant, *aead) {}

// TestImplementationNames checks what Implementation reports on this
// machine's kernels.
func TestImplementationNames(t *testing.T) {
	if !cpuFeatures.aes {
		t.Skip("no AES instructions")
	}
	want := map[int]string{1: "ARMv8 AES", 2: "ARMv8 AES", 4: "ARMv8 AES, 2 passes"}
	for _, c := range constructors {
		a, err := c.new(make([]byte, c.v.keySize()), 16)
		if err != nil {
			t.Fatal(err)
		}
		if got := Implementation(a); got != want[c.v.lanes] {
			t.Errorf("%s: Implementation = %q, want %q", c.v.name, got, want[c.v.lanes])
		}
	}
}
