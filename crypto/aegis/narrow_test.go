//go:build (amd64 || arm64) && gc && !purego

package aegis

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// narrowing is a CPU feature set of an older machine, forced on this one
// with GODEBUG options that x/sys/cpu honours (see narrowings in the
// architecture's test file). groups is the number of lane groups for
// variants of 1, 2 and 4 lanes; 0 means the portable code.
type narrowing struct {
	name, godebug string
	f             features
	groups        [3]int
}

// narrowEnv names the narrowing a re-executed test binary checks.
const narrowEnv = "AEGIS_TEST_NARROWING"

// TestLaneGroupFallbacks runs every variant with the CPU features of older
// machines (on amd64: no AES instructions; AES-NI only; AES-NI and VAES
// without AVX-512; each with and without three-input logic; on arm64: no
// AES instructions), where the X2 and X4 variants run their lanes in groups
// on narrower kernels, and compares them with the portable code, the batch
// paths and aliasing rules included. Each feature set runs in a child process
// of the test binary started with GODEBUG=cpu.*=off, so the production code
// has no test hook.
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
			if !canNarrow(n) {
				t.Skip("this CPU lacks the features to narrow from")
			}
			// The child also checks the implementation names it reports.
			cmd := exec.Command(os.Args[0], "-test.run=^(TestLaneGroupFallbacks|TestImplementationNames)$", "-test.v")
			cmd.Env = append(os.Environ(), narrowEnv+"="+n.name, "GODEBUG="+n.godebug)
			out, err := cmd.CombinedOutput()
			if errors.Is(err, syscall.ENOEXEC) {
				// Under qemu-user without binfmt_misc the binary cannot start
				// itself; .ci/run runs the child directly under qemu.
				t.Skipf("cannot re-execute the test binary (%v): run it with %s=%s GODEBUG=%s",
					err, narrowEnv, n.name, n.godebug)
			}
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
				if accel := want != 0; Accelerated(a) != accel {
					t.Fatalf("Accelerated = %v, want %v", Accelerated(a), accel)
				}
				if impl := Implementation(a); (impl == portableName) == (want != 0) {
					t.Fatalf("Implementation = %q with %d lane groups", impl, want)
				}
				checkArch(t, n, c.v, a.(*aead))
				compareWithGeneric(t, c.v, a, key, 400)
				checkBatch(t, a)
				checkAliasingRules(t, a)
			})
		}
	}
}
