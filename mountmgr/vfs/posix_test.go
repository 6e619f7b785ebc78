package vfs

import (
	"os"
	"sort"
	"testing"

	"github.com/hanwen/go-fuse/v2/posixtest"

	"github.com/vaultui/vaultui/crypto"
)

// TestPosix runs go-fuse's POSIX conformance suite against a mounted vault, with allow_other
// and default permissions as a user's mount would have.
func TestPosix(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("posixtest needs root (allow_other)")
	}
	names := make([]string, 0, len(posixtest.All))
	for name := range posixtest.All {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			if name == "FcntlFlockLocksFile" {
				// It expects a process's second POSIX lock on a file to conflict with its
				// first, which no local file system does (POSIX: a process's locks never
				// conflict with each other); TestLocksStayInKernel checks the real semantics.
				t.Skip("asserts lock semantics that are not POSIX's")
			}
			v := testVolume(t, crypto.AESGCM, true)
			mp, _ := mountTest(t, v, Options{AllowOther: true})
			posixtest.All[name](t, mp)
		})
	}
}
