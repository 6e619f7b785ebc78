package mountmgr

import (
	"slices"
	"testing"
)

// TestSortByPID: /proc entries sort by number, so a shell (pid 998) comes before the child
// it started (pid 1003), as the holder list of a busy mount must show them.
func TestSortByPID(t *testing.T) {
	procs := []string{"/proc/1003", "/proc/998", "/proc/10", "/proc/9"}
	sortByPID(procs)
	if want := []string{"/proc/9", "/proc/10", "/proc/998", "/proc/1003"}; !slices.Equal(procs, want) {
		t.Errorf("got %v, want %v", procs, want)
	}
}
