//go:build amd64 && !purego

package aegis

import (
	"fmt"
	"testing"
)

// TestLaneGroupFallbacks runs every variant with the CPU features of older
// machines (AES-NI only; AES-NI and VAES without AVX-512), where the X2 and X4
// variants run their lanes in groups on narrower kernels, and compares them
// with the portable code.
func TestLaneGroupFallbacks(t *testing.T) {
	if !useAESNI {
		t.Skip("no AES-NI")
	}
	defer func() { testOnlyLimit.set = false }()
	for _, lim := range []struct {
		name       string
		vaes, v512 bool
		groups     [3]int // groups for 1, 2, 4 lanes
	}{
		{"aesni", false, false, [3]int{1, 2, 4}},
		{"vaes256", true, false, [3]int{1, 1, 2}},
	} {
		if lim.vaes && !useVAES {
			continue
		}
		testOnlyLimit.set, testOnlyLimit.aesni, testOnlyLimit.vaes, testOnlyLimit.vaes512 = true, true, lim.vaes, lim.v512
		for _, c := range constructors {
			for _, tagSize := range []int{16, 32} {
				t.Run(fmt.Sprintf("%s/%s/tag%d", lim.name, c.v.name, tagSize), func(t *testing.T) {
					key := randBytes(newRand(t), c.v.keySize())
					a, err := c.new(key, tagSize)
					if err != nil {
						t.Fatal(err)
					}
					want := lim.groups[map[int]int{1: 0, 2: 1, 4: 2}[c.v.lanes]]
					if got := a.(*aead).impl.groups; got != want {
						t.Fatalf("lane groups = %d, want %d", got, want)
					}
					compareWithGeneric(t, c.v, a, key, 400)
				})
			}
		}
	}
}
