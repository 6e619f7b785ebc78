package mountmgr

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// SocketDir returns the directory holding the control socket: $XDG_RUNTIME_DIR/vaultui, or
// vaultui-<uid> under the system temp dir when XDG_RUNTIME_DIR is unset.
func SocketDir() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "vaultui")
	}
	return filepath.Join(os.TempDir(), "vaultui-"+strconv.Itoa(os.Getuid()))
}

// SocketPath returns the path of the control socket.
func SocketPath() string { return filepath.Join(SocketDir(), "ctl.sock") }

// LogPath returns the daemon's log file: $XDG_STATE_HOME/vaultui/daemon.log (default
// ~/.local/state/vaultui/daemon.log).
func LogPath() (string, error) {
	state := os.Getenv("XDG_STATE_HOME")
	if state == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("locating the daemon log: %w", err)
		}
		state = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(state, "vaultui", "daemon.log"), nil
}
