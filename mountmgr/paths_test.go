package mountmgr

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestSocketDirWithoutRuntimeDir: root with neither XDG_RUNTIME_DIR nor TMPDIR (an fstab
// mount at boot) uses /run/vaultui; otherwise the temp dir's vaultui-UID.
func TestSocketDirWithoutRuntimeDir(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("TMPDIR", "")
	want := RootSocketDir
	if os.Getuid() != 0 {
		want = filepath.Join(os.TempDir(), "vaultui-"+strconv.Itoa(os.Getuid()))
	}
	if got := SocketDir(); got != want {
		t.Errorf("no XDG_RUNTIME_DIR, no TMPDIR: %s, want %s", got, want)
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	if got := SocketDir(); got != filepath.Join(tmp, "vaultui-"+strconv.Itoa(os.Getuid())) {
		t.Errorf("with TMPDIR: %s", got)
	}
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/1000")
	if got := SocketDir(); got != "/run/user/1000/vaultui" {
		t.Errorf("with XDG_RUNTIME_DIR: %s", got)
	}
}
