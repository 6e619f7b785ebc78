package cli

import "testing"

// The daemon collects at 50% heap growth unless the user chose GOGC.
func TestDaemonGCPercent(t *testing.T) {
	for _, c := range []struct {
		gogc string
		pct  int
		set  bool
	}{
		{"", 50, true},
		{"100", 0, false},
		{"off", 0, false},
	} {
		getenv := func(k string) string {
			if k == "GOGC" {
				return c.gogc
			}
			return ""
		}
		if pct, set := daemonGCPercent(getenv); pct != c.pct || set != c.set {
			t.Errorf("GOGC=%q: got (%d, %v), want (%d, %v)", c.gogc, pct, set, c.pct, c.set)
		}
	}
}
