//go:build amd64 && gc && !purego

package aegis

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// narrowings are the CPU feature sets of older machines, each forced on this
// one with GODEBUG options that x/sys/cpu honours. groups is the number of
// lane groups for variants of 1, 2 and 4 lanes.
var narrowings = []struct {
	name, godebug string
	f             features
	groups        [3]int
}{
	{"aesni", "cpu.avx2=off,cpu.avx512f=off", features{aesni: true}, [3]int{1, 2, 4}},
	{"aesni-tern", "cpu.avx2=off", features{aesni: true, tern: true}, [3]int{1, 2, 4}},
	{"vaes256", "cpu.avx512f=off", features{aesni: true, vaes: true}, [3]int{1, 1, 2}},
	{"vaes256-tern", "cpu.avx512vaes=off", features{aesni: true, vaes: true, tern: true}, [3]int{1, 1, 2}},
	{"none", "cpu.aes=off", features{}, [3]int{0, 0, 0}},
}

// narrowEnv names the narrowing a re-executed test binary checks.
const narrowEnv = "AEGIS_TEST_NARROWING"

// TestLaneGroupFallbacks runs every variant with the CPU features of older
// machines (no AES instructions; AES-NI only; AES-NI and VAES without
// AVX-512; each with and without three-input logic), where the X2 and X4
// variants run their lanes in groups on narrower kernels, and compares them
// with the portable code, the batch paths and aliasing rules included. Each feature set runs in
// a child process of the test binary started with GODEBUG=cpu.*=off, so the
// production code has no test hook.
func TestLaneGroupFallbacks(t *testing.T) {
	if name := os.Getenv(narrowEnv); name != "" {
		checkNarrowing(t, name)
		return
	}
	if testing.Short() {
		t.Skip("re-executes the test binary once per feature set")
	}
	for _, n := range narrowings {
		t.Run(n.name, func(t *testing.T) {
			if (n.f.aesni && !useAESNI) || (n.f.vaes && !useVAES) || (n.f.tern && !useTern) {
				t.Skip("this CPU lacks the features to narrow from")
			}
			// The child also checks the implementation names it reports.
			cmd := exec.Command(os.Args[0], "-test.run=^(TestLaneGroupFallbacks|TestImplementationNames)$", "-test.v")
			cmd.Env = append(os.Environ(), narrowEnv+"="+n.name, "GODEBUG="+n.godebug)
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "--- PASS: TestLaneGroupFallbacks") {
				t.Fatalf("GODEBUG=%s: %v\n%s", n.godebug, err, out)
			}
		})
	}
}

// checkNarrowing runs in the child: it checks that GODEBUG produced the
// intended features and kernels, then compares every variant with the
// portable code.
func checkNarrowing(t *testing.T, name string) {
	i := 0
	for i < len(narrowings) && narrowings[i].name != name {
		i++
	}
	if i == len(narrowings) {
		t.Fatalf("unknown narrowing %q", name)
	}
	n := narrowings[i]
	if cpuFeatures != n.f {
		t.Fatalf("GODEBUG=%s gave features %+v, want %+v", os.Getenv("GODEBUG"), cpuFeatures, n.f)
	}
	for _, c := range constructors {
		for _, tagSize := range []int{16, 32} {
			t.Run(fmt.Sprintf("%s/%s/tag%d", name, c.v.name, tagSize), func(t *testing.T) {
				key := randBytes(newRand(t), c.v.keySize())
				a, err := c.new(key, tagSize)
				if err != nil {
					t.Fatal(err)
				}
				want := n.groups[map[int]int{1: 0, 2: 1, 4: 2}[c.v.lanes]]
				if got := a.(*aead).impl.groups; got != want {
					t.Fatalf("lane groups = %d, want %d", got, want)
				}
				if wantDual := c.v == v256X2 && n.f.vaes && !n.f.tern; a.(*aead).dual() != wantDual {
					t.Fatalf("dual batch kernels selected: %v, want %v", !wantDual, wantDual)
				}
				if Accelerated(a) != n.f.aesni {
					t.Fatalf("Accelerated = %v with AES-NI %v", Accelerated(a), n.f.aesni)
				}
				if impl := Implementation(a); (impl == portableName) == n.f.aesni {
					t.Fatalf("Implementation = %q with AES-NI %v", impl, n.f.aesni)
				}
				compareWithGeneric(t, c.v, a, key, 400)
				checkBatch(t, a)
				checkAliasingRules(t, a)
			})
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
	case cpuFeatures == features{aesni: true, vaes: true, vaes512: true, tern: true}:
		want = map[*variant]string{
			v128L: "AES-NI (AVX); batches VAES-256", v256: "AES-NI (AVX); batches VAES-256",
			v128X2: "VAES-256; batches VAES-512", v256X2: "VAES-256; batches VAES-512",
			v128X4: "VAES-512", v256X4: "VAES-512",
		}
	case cpuFeatures == features{aesni: true}:
		want = map[*variant]string{
			v128L: "AES-NI (AVX)", v256: "AES-NI (AVX)", v128X2: "AES-NI (AVX), 2 passes",
			v256X2: "AES-NI (AVX), 2 passes", v128X4: "AES-NI (AVX), 4 passes", v256X4: "AES-NI (AVX), 4 passes",
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
