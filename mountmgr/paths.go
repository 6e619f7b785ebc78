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
			return "", fmt.Errorf("mountmgr: locating the daemon log: %w", err)
		}
		state = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(state, "vaultui", "daemon.log"), nil
}

// ensureSocketDir creates dir with mode 0700 and refuses a directory that another user owns or
// that others can enter: the socket inside is the only gate to unlocked vaults.
func ensureSocketDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("mountmgr: creating socket directory %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("mountmgr: socket directory %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("mountmgr: socket directory %s is not a directory", dir)
	}
	if uid, ok := fileUID(fi); ok && uid != os.Getuid() {
		return fmt.Errorf("mountmgr: socket directory %s belongs to uid %d, not %d", dir, uid, os.Getuid())
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("mountmgr: socket directory %s: %w", dir, err)
		}
	}
	return nil
}
