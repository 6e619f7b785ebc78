package mountmgr

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/vaultui/vaultui/internal/userfile"
)

// SocketDir returns the directory holding the control socket: $XDG_RUNTIME_DIR/vaultui, or
// vaultui-<uid> under the system temp dir when XDG_RUNTIME_DIR is unset.
//
// Root without XDG_RUNTIME_DIR or TMPDIR (mount(8) running "vaultui SRC MNT -o OPTS" for an
// fstab line at boot, sudo, a system service) uses RootSocketDir: /run exists from the start
// of boot, whereas /tmp may be mounted (a tmpfs) only after the fstab's mounts, hiding a
// socket made there, and is cleaned by age. So the daemon of boot-time mounts is root's at
// /run/vaultui, which "sudo vaultui status" reaches.
func SocketDir() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "vaultui")
	}
	if os.Getuid() == 0 && os.Getenv("TMPDIR") == "" {
		return RootSocketDir
	}
	return filepath.Join(os.TempDir(), "vaultui-"+strconv.Itoa(os.Getuid()))
}

// RootSocketDir is root's socket directory when no XDG_RUNTIME_DIR is set (see SocketDir).
const RootSocketDir = "/run/vaultui"

// SocketPath returns the path of the control socket.
func SocketPath() string { return filepath.Join(SocketDir(), "ctl.sock") }

// LogPath returns the daemon's log file: $XDG_STATE_HOME/vaultui/daemon.log (default
// ~/.local/state/vaultui/daemon.log).
func LogPath() (string, error) {
	state, err := userfile.BaseDir("XDG_STATE_HOME", filepath.Join(".local", "state"))
	if err != nil {
		return "", fmt.Errorf("locating the daemon log: %w", err)
	}
	return filepath.Join(state, "vaultui", "daemon.log"), nil
}
