//go:build amd64 && !purego

package aegis

import (
	"fmt"
	"testing"
)

// TestLaneGroupFallbacks runs every variant with the CPU features of older
// machines (AES-NI only; AES-NI and VAES without AVX-512; each with and
// without three-input logic), where the X2 and X4 variants run their lanes in
// groups on narrower kernels, and compares them with the portable code, the
// batch paths included.
func TestLaneGroupFallbacks(t *testing.T) {
	if !useAESNI {
		t.Skip("no AES-NI")
	}
	defer func() { testOnlyLimit.set = false }()
	for _, lim := range []struct {
		name   string
		f      features
		groups [3]int // groups for 1, 2, 4 lanes
	}{
		{"aesni", features{aesni: true}, [3]int{1, 2, 4}},
		{"aesni-tern", features{aesni: true, tern: true}, [3]int{1, 2, 4}},
		{"vaes256", features{aesni: true, vaes: true}, [3]int{1, 1, 2}},
		{"vaes256-tern", features{aesni: true, vaes: true, tern: true}, [3]int{1, 1, 2}},
	} {
		if (lim.f.vaes && !useVAES) || (lim.f.tern && !useTern) {
			continue
		}
		testOnlyLimit.set, testOnlyLimit.features = true, lim.f
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
					if wantDual := c.v == v256X2 && lim.f.vaes && !lim.f.tern; a.(*aead).dual() != wantDual {
						t.Fatalf("dual batch kernels selected: %v, want %v", !wantDual, wantDual)
					}
					compareWithGeneric(t, c.v, a, key, 400)
					checkBatch(t, a)
				})
			}
		}
	}
}

// TestKernelChoice logs the kernel each variant runs on this machine and
// checks that a variant never gets a kernel wider than its lanes.
func TestKernelChoice(t *testing.T) {
	for _, c := range constructors {
		k, groups := kernelFor(c.v, cpuFeatures)
		if k == kNone {
			t.Logf("%s: portable code", c.v.name)
			continue
		}
		if k.width()*groups != 16*c.v.lanes {
			t.Errorf("%s: kernel width %d x %d groups for %d lanes", c.v.name, k.width(), groups, c.v.lanes)
		}
		t.Logf("%s: %d-byte registers, %d lane group(s), three-input logic %v", c.v.name, k.width(), groups, k != k.plain() || k.width() == 64)
	}
}
