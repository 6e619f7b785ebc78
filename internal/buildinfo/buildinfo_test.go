package buildinfo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestIDOfStampedVersion(t *testing.T) {
	if got := idOf("v1.2.3", "/nonexistent"); got != "v1.2.3" {
		t.Errorf("idOf(v1.2.3) = %q", got)
	}
}

// The test binary is a Go executable with a build ID: its ID is stable, a devel one, and
// differs from another executable's.
func TestIDOfDevelBuild(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	a, b := idOf("", exe), ID()
	if !strings.HasPrefix(a, "devel+") || a != b {
		t.Fatalf("idOf(test binary) = %q, ID() = %q; want one devel+ ID", a, b)
	}
	f, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if goBuildID(f) == "" {
		t.Errorf("the test binary has no Go build ID note")
	}
	// Not an ELF file: its bytes are hashed instead.
	other := filepath.Join(t.TempDir(), "script")
	os.WriteFile(other, []byte("#!/bin/sh\n"), 0o755)
	if c := idOf("", other); !strings.HasPrefix(c, "devel+") || c == a {
		t.Errorf("idOf(script) = %q, want a devel+ ID other than %q", c, a)
	}
	if idOf("", filepath.Join(t.TempDir(), "missing")) != "" {
		t.Errorf("idOf(missing file) is not empty")
	}
}
