package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/vaultui/vaultui/internal/atomicfile"
	"github.com/vaultui/vaultui/internal/userfile"
)

var autostartCommand = &command{
	name:     "autostart",
	anyArgs:  true,
	group:    groupMounts,
	summary:  "Start the mount manager at login, which mounts the automount vaults",
	args:     "[--method systemd|xdg] enable|disable|status",
	operands: []string{"enable|disable|status"},
	values:   map[string]string{"method": "systemd|xdg"},
	help: `enable installs a systemd user unit (~/.config/systemd/user/vaultui.service,
enabled for default.target) that runs "vaultui daemon --autostart" at login;
where systemd is not the init system, an XDG autostart entry
(~/.config/autostart/vaultui.desktop) does the same for the desktop session.
--method chooses instead of detecting. The manager started that way never
exits when idle, and once per login mounts every vault with the automount
option ("vaultui edit --automount NAME") whose password is in the keyring
("vaultui mount --remember NAME"); "vaultui events" shows any it could not
mount and why. disable removes what enable installed; status says what is
installed. enable refuses a vaultui built by "go run" (the go tool deletes
it): run it from "go build" or "go install".

examples:
  vaultui autostart enable
  vaultui autostart status`,
	setup: func(fs *flag.FlagSet) runFunc {
		method := fs.String("method", "", "`systemd` or `xdg` (default: systemd where it is the init system)")
		return func(e *env, args []string) error {
			if len(args) != 1 {
				return e.usage("expected enable, disable or status")
			}
			m := *method
			switch m {
			case "":
				m = "xdg"
				if fi, err := os.Stat("/run/systemd/system"); err == nil && fi.IsDir() {
					m = "systemd"
				}
			case "systemd", "xdg":
			default:
				return e.usage("--method %q: want systemd or xdg", m)
			}
			paths, err := autostartPaths()
			if err != nil {
				return err
			}
			switch args[0] {
			case "enable":
				return autostartEnable(e, paths, m)
			case "disable":
				return autostartDisable(e, paths)
			case "status":
				autostartStatus(e, paths)
				return nil
			}
			return e.usage("unknown action %q: want enable, disable or status", args[0])
		}
	},
}

type autostartFiles struct {
	unit, wants, desktop string
}

func autostartPaths() (autostartFiles, error) {
	dir, err := userfile.BaseDir("XDG_CONFIG_HOME", ".config")
	if err != nil {
		return autostartFiles{}, fmt.Errorf("autostart: %w", err)
	}
	user := filepath.Join(dir, "systemd", "user")
	return autostartFiles{
		unit:    filepath.Join(user, "vaultui.service"),
		wants:   filepath.Join(user, "default.target.wants", "vaultui.service"),
		desktop: filepath.Join(dir, "autostart", "vaultui.desktop"),
	}, nil
}

// systemdUnit runs the daemon for the user's session; systemd stops it (SIGTERM: every vault
// is unmounted) at logout.
func systemdUnit(exe string) (string, error) {
	path, err := systemdExecPath(exe)
	if err != nil {
		return "", err
	}
	return `[Unit]
Description=vaultui mount manager (mounts automount vaults at login)

[Service]
Type=simple
ExecStart=` + path + ` daemon --autostart
Restart=on-failure
RestartSec=5

[Install]
WantedBy=default.target
`, nil
}

func desktopEntry(exe string) (string, error) {
	path, err := desktopExecArg(exe)
	if err != nil {
		return "", err
	}
	return `[Desktop Entry]
Type=Application
Name=vaultui mount manager
Comment=Mounts the vaults marked automount with their keyring passwords
Exec=` + path + ` daemon --autostart
Terminal=false
NoDisplay=true
X-GNOME-Autostart-enabled=true
`, nil
}

// The two files quote a program's path by different rules, so each has its own quoter.

// systemdExecPath writes the program's path as the executable of an ExecStart= line
// (systemd.service(5) "Command lines", systemd.syntax(7) "Quoting"). The line is split at
// spaces, so a path with a space is double-quoted; `%` starts a specifier even in the
// executable's name, so it is doubled. `$` is written as is: variables are expanded in the
// arguments only, never in the executable's name, where `$$` stays two dollars and `\$` is an
// unknown escape that makes the unit fail (both measured with systemd-analyze verify). systemd
// refuses outright an executable whose name holds a quote, a backslash or a control
// character ("Executable name contains special characters"), so such a path is an error here
// rather than a unit that never starts.
func systemdExecPath(p string) (string, error) {
	if strings.ContainsAny(p, `"'\`) || hasControl(p) {
		return "", fmt.Errorf("autostart: systemd cannot start a program whose path contains a quote, a backslash or a control character: %q (move vaultui, or use --method xdg)", p)
	}
	p = strings.ReplaceAll(p, "%", "%%")
	if strings.Contains(p, " ") {
		return `"` + p + `"`, nil
	}
	return p, nil
}

// desktopExecArg writes the program's path as the program of a desktop entry's Exec= key
// (Desktop Entry Specification, "The Exec key"). A path with a reserved character is
// double-quoted, and inside the quotes `"`, "`", `$` and `\` take a backslash; `%` is doubled
// (field codes). Exec is also a string value, whose own escapes ("\\" for a backslash) are
// undone before the quoting is, so every backslash of the quoted path is then doubled: a `$`
// is written `\\$`. The spec forbids `=` in the program's path, and a control character would
// need an escape that launchers do not all undo: those paths are errors.
func desktopExecArg(p string) (string, error) {
	if strings.Contains(p, "=") || hasControl(p) {
		return "", fmt.Errorf("autostart: a desktop entry cannot run a program whose path contains '=' or a control character: %q (move vaultui, or use --method systemd)", p)
	}
	if strings.ContainsAny(p, " \t\n\"'\\><~|&;$*?#()`") {
		p = `"` + strings.NewReplacer(`"`, `\"`, "`", "\\`", `$`, `\$`, `\`, `\\`).Replace(p) + `"`
	}
	p = strings.ReplaceAll(p, "%", "%%")
	return strings.ReplaceAll(p, `\`, `\\`), nil // the string value's escape
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, unicode.IsControl)
}

func autostartEnable(e *env, p autostartFiles, method string) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("autostart: finding this program: %w", err)
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return fmt.Errorf("autostart: %w", err)
	}
	return installAutostart(e, p, method, exe)
}

// errBuildCache: the program runs from Go's build cache or the go tool's temporary work
// directory ("go run ."), which the go tool cleans: an autostart entry would outlive it.
var errBuildCache = errors.New("this vaultui is a temporary build of \"go run\"")

// inGoBuildCache reports whether exe is a build of "go run" or "go test": in the go tool's
// temporary work directory ($GOTMPDIR or the system temp dir, go-buildNNN) or in the build
// cache (gocache: $GOCACHE, default ~/.cache/go-build; "" to take it from the environment).
func inGoBuildCache(exe, gocache string) bool {
	if gocache == "" {
		gocache = os.Getenv("GOCACHE")
		if gocache == "" {
			if d, err := os.UserCacheDir(); err == nil {
				gocache = filepath.Join(d, "go-build")
			}
		}
	}
	if gocache != "" && gocache != "off" {
		if rel, err := filepath.Rel(gocache, exe); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return true
		}
	}
	// The work directory is os.MkdirTemp(dir, "go-build"): the prefix and random digits.
	for _, part := range strings.Split(filepath.Dir(exe), string(filepath.Separator)) {
		if digits, ok := strings.CutPrefix(part, "go-build"); ok && digits != "" && strings.Trim(digits, "0123456789") == "" {
			return true
		}
	}
	return false
}

// installAutostart writes the entry that runs exe at login, unless exe would not last.
func installAutostart(e *env, p autostartFiles, method, exe string) error {
	if inGoBuildCache(exe, "") {
		return withHint(fmt.Errorf("autostart: %w (%s): the go tool deletes it, and the login entry would run nothing", errBuildCache, exe),
			`build the program and run its enable from there: "go build -o ~/bin/vaultui . && ~/bin/vaultui autostart enable", or "go install" and "$(go env GOPATH)/bin/vaultui autostart enable"`)
	}
	if method == "xdg" {
		entry, err := desktopEntry(exe)
		if err != nil {
			return err
		}
		if err := writeFileAtomic(p.desktop, entry); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "Installed %s: the mount manager starts with the desktop session.\n", p.desktop)
		return nil
	}
	unit, err := systemdUnit(exe)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(p.unit, unit); err != nil {
		return err
	}
	// What "systemctl --user enable" does, without needing a running user manager.
	if err := os.MkdirAll(filepath.Dir(p.wants), 0o755); err != nil {
		return fmt.Errorf("autostart: %w", err)
	}
	os.Remove(p.wants)
	if err := os.Symlink(p.unit, p.wants); err != nil {
		return fmt.Errorf("autostart: %w", err)
	}
	fmt.Fprintf(e.stdout, "Installed and enabled %s: the mount manager starts at login.\n", p.unit)
	if err := systemctlUser(e.ctx, "daemon-reload"); err != nil {
		fmt.Fprintf(e.stderr, "note: systemctl --user daemon-reload: %v; systemd reads the unit at the next login\n", err)
	}
	return nil
}

func autostartDisable(e *env, p autostartFiles) error {
	removed := 0
	for _, f := range []string{p.wants, p.unit, p.desktop} {
		err := os.Remove(f)
		if err == nil {
			removed++
			fmt.Fprintf(e.stdout, "Removed %s\n", f)
		} else if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("autostart: %w", err)
		}
	}
	if removed == 0 {
		fmt.Fprintln(e.stdout, "Autostart was not enabled.")
		return nil
	}
	if err := systemctlUser(e.ctx, "daemon-reload"); err != nil && fileExists(filepath.Dir(p.unit)) {
		fmt.Fprintf(e.stderr, "note: systemctl --user daemon-reload: %v\n", err)
	}
	return nil
}

func autostartStatus(e *env, p autostartFiles) {
	switch {
	case fileExists(p.wants) && fileExists(p.unit):
		fmt.Fprintf(e.stdout, "enabled: systemd user unit %s\n", p.unit)
	case fileExists(p.unit):
		fmt.Fprintf(e.stdout, "installed but not enabled: systemd user unit %s (vaultui autostart enable)\n", p.unit)
	case fileExists(p.desktop):
		fmt.Fprintf(e.stdout, "enabled: XDG autostart entry %s\n", p.desktop)
	default:
		fmt.Fprintln(e.stdout, "disabled")
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// systemctlUser runs "systemctl --user ARGS", bounded: without a user manager it fails fast.
func systemctlUser(ctx context.Context, args ...string) error {
	if _, err := exec.LookPath("systemctl"); err != nil {
		return errors.New("systemctl not found")
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "systemctl", append([]string{"--user"}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// writeFileAtomic writes content to path (0644, directories 0755) through a temp file.
func writeFileAtomic(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("autostart: %w", err)
	}
	if err := atomicfile.Replace(atomicfile.OS{}, path, path+".tmp", []byte(content), 0o644); err != nil {
		return fmt.Errorf("autostart: %w", err)
	}
	return nil
}
