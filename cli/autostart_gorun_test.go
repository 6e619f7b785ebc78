package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInGoBuildCache(t *testing.T) {
	cache := "/home/u/.cache/go-build"
	for exe, want := range map[string]bool{
		"/tmp/go-build2749381/b001/exe/vaultui":       true, // go run, Go before 1.24
		"/home/u/.cache/go-build/3f/3f2a9c-d/vaultui": true, // go run, cached (Go 1.24 on)
		"/var/tmp/gotmp/go-build12/b001/vaultui.test": true, // $GOTMPDIR
		"/home/u/go/bin/vaultui":                      false,
		"/usr/local/bin/vaultui":                      false,
		"/home/u/.cache/go-build-notes/vaultui":       false,
		"/tmp/testscript-main123/bin/vaultui":         false,
		"/home/u/src/vaultui/vaultui":                 false,
	} {
		if got := inGoBuildCache(exe, cache); got != want {
			t.Errorf("inGoBuildCache(%q) = %v, want %v", exe, got, want)
		}
	}
}

// TestAutostartRefusesGoRun: "go run . autostart enable" would write an Exec= into a
// directory the go tool deletes; it is refused with what to run instead, and nothing is
// written.
func TestAutostartRefusesGoRun(t *testing.T) {
	dir := t.TempDir()
	p := autostartFiles{unit: filepath.Join(dir, "vaultui.service"), wants: filepath.Join(dir, "wants", "vaultui.service"), desktop: filepath.Join(dir, "vaultui.desktop")}
	var out strings.Builder
	e := &env{ctx: context.Background(), stdout: &out, stderr: &out}
	for _, method := range []string{"systemd", "xdg"} {
		err := installAutostart(e, p, method, "/tmp/go-build2749381/b001/exe/vaultui")
		if !errors.Is(err, errBuildCache) {
			t.Fatalf("%s: err %v, want errBuildCache", method, err)
		}
		var h *hintError
		if !errors.As(err, &h) || !strings.Contains(h.hint, "go build") || !strings.Contains(h.hint, "go install") {
			t.Fatalf("%s: no hint at the installed program: %v", method, err)
		}
		for _, f := range []string{p.unit, p.wants, p.desktop} {
			if _, err := os.Lstat(f); err == nil {
				t.Fatalf("%s: %s was written", method, f)
			}
		}
	}
}
