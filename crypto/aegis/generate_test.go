package aegis

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedUpToDate regenerates the assembly and its Go declarations and
// checks that the committed files match, so the generator stays the source.
func TestGeneratedUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the generator")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	dir := t.TempDir()
	cmd := exec.Command(goBin, "run", "./_asm", "-o", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run ./_asm: %v\n%s", err, out)
	}
	for _, name := range []string{"aegis_amd64.s", "aegis_stubs_amd64.go", "aegis_arm64.s", "aegis_stubs_arm64.go"} {
		want, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is out of date: run go generate in crypto/aegis", name)
		}
	}
}
