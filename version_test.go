package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// TestVersionStamped builds vaultui as the README says, with the version stamped through
// -ldflags -X (builds here run with -buildvcs=false: nothing else records it), and checks
// that "vaultui version" prints it with the go-fuse version the build recorded.
func TestVersionStamped(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary: skipped with -short")
	}
	bin := filepath.Join(t.TempDir(), "vaultui")
	build := exec.Command("go", "build", "-o", bin, "-ldflags", "-X github.com/vaultui/vaultui/internal/buildinfo.Version=v0.0.0-stamped", ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "version")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("vaultui version: %v\n%s", err, out)
	}
	for _, want := range []string{`(?m)^vaultui +v0\.0\.0-stamped$`, `(?m)^go-fuse +v2\.\d+\.\d+$`, `(?m)^AEGIS +\S`} {
		if !regexp.MustCompile(want).Match(out) {
			t.Errorf("vaultui version printed\n%s\nwithout %s", out, want)
		}
	}
}
