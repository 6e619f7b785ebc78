package mountmgr

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// goFuseErr is what go-fuse returns when fusermount fails, trailing newline included.
var goFuseErr = errors.New("fusermount exited with code 256\n")

func TestExplainFuseFailureNamesTheDevice(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, dev, reason string
	}{
		{"missing", filepath.Join(dir, "fuse"), "no such file or directory"},
		{"not a device", dir, "is a directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := explainFuseFailure(goFuseErr, c.dev)
			if !errors.Is(err, ErrFuseDevice) {
				t.Fatalf("error %q does not wrap ErrFuseDevice", err)
			}
			msg := err.Error()
			for _, want := range []string{"failed to open " + c.dev, c.reason, "fusermount exited with code 256)"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("message %q spans lines", msg)
			}
			// The sentinel survives the socket, so the command line can add its hint.
			if !errors.Is(fromWire(toWire(err)), ErrFuseDevice) {
				t.Error("ErrFuseDevice is lost across the socket")
			}
		})
	}
}

func TestExplainFuseFailureLeavesOtherErrors(t *testing.T) {
	other := errors.New("mount point busy")
	if got := explainFuseFailure(other, filepath.Join(t.TempDir(), "missing")); got != other {
		t.Errorf("an error not from fusermount became %q", got)
	}
	// A usable device: fusermount failed for another reason, which its own error keeps.
	if got := explainFuseFailure(goFuseErr, "/dev/null"); got != goFuseErr {
		t.Errorf("with a usable device the error became %q", got)
	}
}
