//go:build amd64 && gc && !purego

package aegis

import (
	"testing"
)

// narrowings are the CPU feature sets of older machines, each forced on this
// one with GODEBUG options that x/sys/cpu honours. groups is the number of
// lane groups for variants of 1, 2 and 4 lanes.
var narrowings = []narrowing{
	{"sse", "cpu.avx=off", features{aes: true}, [3]int{1, 2, 4}},
	{"aesni", "cpu.avx2=off,cpu.avx512f=off", features{aes: true, aesni: true}, [3]int{1, 2, 4}},
	{"aesni-tern", "cpu.avx2=off", features{aes: true, aesni: true, tern: true}, [3]int{1, 2, 4}},
	{"vaes256", "cpu.avx512f=off", features{aes: true, aesni: true, vaes: true}, [3]int{1, 1, 2}},
	{"vaes256-tern", "cpu.avx512vaes=off", features{aes: true, aesni: true, vaes: true, tern: true}, [3]int{1, 1, 2}},
	{"none", "cpu.aes=off", features{}, [3]int{0, 0, 0}},
}

// canNarrow reports whether this CPU has the features n keeps.
func canNarrow(n narrowing) bool {
	return (!n.f.aes || useAESSSE) && (!n.f.aesni || useAESNI) && (!n.f.vaes || useVAES) && (!n.f.tern || useTern)
}

// checkArch checks what is particular to amd64 under a narrowing: which
// AEGIS-256X2 batch kernels run.
func checkArch(t *testing.T, n narrowing, v *variant, a *aead) {
	if wantDual := v == v256X2 && n.f.vaes && !n.f.tern; a.dual() != wantDual {
		t.Fatalf("dual batch kernels selected: %v, want %v", !wantDual, wantDual)
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
		spec := kernelSpecs[k]
		if spec.wide != c.v.wide {
			t.Errorf("%s: kernel of the other family", c.v.name)
		}
		if k.width()*groups != 16*c.v.lanes {
			t.Errorf("%s: kernel width %d x %d groups for %d lanes", c.v.name, k.width(), groups, c.v.lanes)
		}
		t.Logf("%s: %s, %d-byte registers, %d lane group(s), three-input logic %v", c.v.name, spec.impl, k.width(), groups, spec.enc != encVEX)
	}
}

// TestImplementationNames checks what Implementation reports on this
// machine's kernels.
func TestImplementationNames(t *testing.T) {
	want := map[*variant]string{}
	switch {
	case cpuFeatures == features{aes: true, aesni: true, vaes: true, vaes512: true, tern: true}:
		want = map[*variant]string{
			v128L: "AES-NI (AVX); batches VAES-256", v256: "AES-NI (AVX); batches VAES-256",
			v128X2: "VAES-256; batches VAES-512", v256X2: "VAES-256; batches VAES-512",
			v128X4: "VAES-512", v256X4: "VAES-512",
		}
	case cpuFeatures == features{aes: true, aesni: true}:
		want = map[*variant]string{
			v128L: "AES-NI (AVX)", v256: "AES-NI (AVX)", v128X2: "AES-NI (AVX), 2 passes",
			v256X2: "AES-NI (AVX), 2 passes", v128X4: "AES-NI (AVX), 4 passes", v256X4: "AES-NI (AVX), 4 passes",
		}
	case cpuFeatures == features{aes: true}:
		want = map[*variant]string{
			v128L: "AES-NI (SSE)", v256: "AES-NI (SSE)", v128X2: "AES-NI (SSE), 2 passes",
			v256X2: "AES-NI (SSE), 2 passes", v128X4: "AES-NI (SSE), 4 passes", v256X4: "AES-NI (SSE), 4 passes",
		}
	default:
		t.Skip("no expectations for this CPU's features")
	}
	for _, c := range constructors {
		a, err := c.new(make([]byte, c.v.keySize()), 16)
		if err != nil {
			t.Fatal(err)
		}
		if got := Implementation(a); got != want[c.v] {
			t.Errorf("%s: Implementation = %q, want %q", c.v.name, got, want[c.v])
		}
	}
}
