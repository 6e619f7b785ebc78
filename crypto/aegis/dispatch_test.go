package aegis

import "testing"

// TestDispatch logs which variants run on assembly, so test logs show what
// was exercised on the machine.
func TestDispatch(t *testing.T) {
	for _, c := range constructors {
		t.Logf("%s: assembly %v", c.v.name, hasAsm(c.v))
	}
}
