// Package testdeps says whether the devices and programs that tests depend on work here, and
// turns a missing one into a skip that names it, or, when the environment variable
// VAULTUI_REQUIRE names the dependency, into a failure.
//
// A test without a dependency would otherwise pass by skipping: CI sets VAULTUI_REQUIRE=all, so
// a machine without FUSE, gocryptfs or tmux fails CI instead of looking green. An ordinary
// user's `go test ./...` leaves it unset and gets skips that say what to install.
//
// Each probe runs once per test binary and tries the dependency for real: FUSE mounts an empty
// file system (as root through /dev/fuse, as anyone else through the setuid fusermount3),
// strace injects a fault, the programs start. Imported by tests only.
package testdeps

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/hanwen/go-fuse/v2/fs"
)

// Dep is a dependency of some tests, by the name VAULTUI_REQUIRE uses.
type Dep string

// The dependencies, with the Debian packages that provide them in their probes' messages.
const (
	FUSE       Dep = "fuse"        // a working FUSE mount (fuse3; fusermount3 setuid for non-root)
	Gocryptfs  Dep = "gocryptfs"   // gocryptfs and gocryptfs-xray (gocryptfs)
	Tmux       Dep = "tmux"        // tmux, for the end-to-end test (tmux)
	DBus       Dep = "dbus"        // a private session bus with a keyring (dbus, gnome-keyring)
	SecretTool Dep = "secret-tool" // libsecret's command line client (libsecret-tools)
	Qemu       Dep = "qemu"        // qemu-aarch64-static, for the arm64 AEGIS kernels (qemu-user-static)
	Strace     Dep = "strace"      // strace with fault injection, for the kill suites (strace)
	Shells     Dep = "shells"      // zsh and fish, whose completion is tested in them, and tmux (zsh, fish)
)

// All lists every dependency; VAULTUI_REQUIRE=all requires them all.
var All = []Dep{FUSE, Gocryptfs, Tmux, DBus, SecretTool, Qemu, Strace, Shells}

// RequireEnv is the environment variable that lists the required dependencies.
const RequireEnv = "VAULTUI_REQUIRE"

// probes say why each dependency cannot be used here, or "", probing once per process.
var probes = map[Dep]func() string{
	FUSE:       sync.OnceValue(probeFUSE),
	Gocryptfs:  sync.OnceValue(func() string { return programs("gocryptfs", "gocryptfs-xray") }),
	Tmux:       sync.OnceValue(func() string { return programs("tmux") }),
	DBus:       sync.OnceValue(func() string { return programs("dbus-daemon", "gnome-keyring-daemon") }),
	SecretTool: sync.OnceValue(func() string { return programs("secret-tool") }),
	Qemu:       sync.OnceValue(probeQemu),
	Strace:     sync.OnceValue(probeStrace),
	Shells:     sync.OnceValue(func() string { return programs("zsh", "fish", "tmux") }),
}

// Missing returns why dep cannot be used here, or "" when it can. It probes once per process.
func Missing(dep Dep) string {
	probe, ok := probes[dep]
	if !ok {
		panic("testdeps: unknown dependency " + string(dep))
	}
	return probe()
}

// Need skips t, naming what is missing, unless every dep is usable; when VAULTUI_REQUIRE
// names a missing one, it fails t instead.
func Need(t testing.TB, deps ...Dep) {
	t.Helper()
	for _, dep := range deps {
		if why := Missing(dep); why != "" {
			Unusable(t, dep, why)
		}
	}
}

// Optional reports whether dep is usable, for a part of t that runs only with it (what names
// the part). A missing dep is logged, or fails t when VAULTUI_REQUIRE names it.
func Optional(t testing.TB, dep Dep, what string) bool {
	t.Helper()
	why := Missing(dep)
	if why == "" {
		return true
	}
	if required, err := Required(dep); err != nil || required {
		Unusable(t, dep, why)
	}
	t.Logf("without %s: %s: %s", what, dep, why)
	return false
}

// Unusable ends t because dep did not work, for why: a failure when VAULTUI_REQUIRE names dep
// (or there is an error in its value), otherwise a skip.
func Unusable(t testing.TB, dep Dep, why string) {
	t.Helper()
	if msg, fail := verdict(dep, why); fail {
		t.Fatalf("%s", msg)
	} else {
		t.Skipf("%s", msg)
	}
}

// Verdict is Need for a caller without a testing.TB (a testscript command): "" when dep works
// here, otherwise the message naming what is missing and whether to fail rather than skip.
func Verdict(dep Dep) (msg string, fail bool) {
	if probes[dep] == nil {
		return fmt.Sprintf("unknown dependency %q (known: %s)", dep, known()), true
	}
	if why := Missing(dep); why != "" {
		return verdict(dep, why)
	}
	return "", false
}

func verdict(dep Dep, why string) (msg string, fail bool) {
	required, err := Required(dep)
	switch {
	case err != nil:
		return fmt.Sprintf("%s (%s: %s)", err, dep, why), true
	case required:
		return fmt.Sprintf("%s: %s, and %s=%s requires it", dep, why, RequireEnv, os.Getenv(RequireEnv)), true
	default:
		return fmt.Sprintf("%s: %s (set %s=%s to make this a failure)", dep, why, RequireEnv, dep), false
	}
}

// Required reports whether VAULTUI_REQUIRE names dep, or is "all". A name in it that is not a
// dependency is an error, so a typo cannot quietly turn the switch off.
func Required(dep Dep) (bool, error) {
	return parseRequire(os.Getenv(RequireEnv), dep)
}

func parseRequire(value string, dep Dep) (bool, error) {
	required := false
	for _, name := range strings.Split(value, ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == "":
		case name == "all" || Dep(name) == dep:
			required = true
		case probes[Dep(name)] == nil:
			return false, fmt.Errorf("%s=%q: unknown dependency %q (known: all, %s)", RequireEnv, value, name, known())
		}
	}
	return required, nil
}

func known() string {
	names := make([]string, len(All))
	for i, d := range All {
		names[i] = string(d)
	}
	return strings.Join(names, ", ")
}

// programs returns which of names are not on PATH, or "".
func programs(names ...string) string {
	var missing []string
	for _, name := range names {
		if _, err := exec.LookPath(name); err != nil {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return strings.Join(missing, " and ") + " not on PATH"
}

// probeFUSE mounts an empty file system on a temporary directory and unmounts it: only a real
// mount shows that the device opens, the kernel lets us mount, and (for an ordinary user)
// fusermount3 is there and setuid root.
func probeFUSE() string {
	dir, err := os.MkdirTemp("", "testdeps-fuse")
	if err != nil {
		return "no temporary directory to mount on: " + err.Error()
	}
	defer os.Remove(dir)
	// As the mounts under test do (vfs.Mount), root mounts directly and falls back to
	// fusermount3 only if that fails: a root machine without fuse3 installed can mount.
	opts := &fs.Options{}
	opts.DirectMount = os.Geteuid() == 0
	server, err := fs.Mount(dir, &fs.Inode{}, opts)
	if err != nil {
		return "mounting an empty file system failed (" + strings.TrimSpace(err.Error()) + ")" + fuseHint()
	}
	if err := server.Unmount(); err != nil {
		return "unmounting an empty file system failed: " + err.Error()
	}
	return ""
}

// fuseHint says what is likely wrong when a mount failed.
func fuseHint() string {
	if os.Geteuid() == 0 {
		f, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
		if err != nil {
			return ": /dev/fuse does not open: " + err.Error()
		}
		f.Close()
		return ""
	}
	p, err := exec.LookPath("fusermount3")
	if err != nil {
		return ": not root and no fusermount3 (apt-get install fuse3)"
	}
	// fusermount3 opens the device with the caller's rights; udev makes it 0666, a machine
	// without udev (a VM or container image) may leave it root's alone.
	dev, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
	if err != nil {
		return ": not root and /dev/fuse does not open for you (" + err.Error() + "; udev makes it mode 0666)"
	}
	dev.Close()
	st, err := os.Stat(p)
	if err != nil {
		return ": " + err.Error()
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); !ok || st.Mode()&os.ModeSetuid == 0 || sys.Uid != 0 {
		return ": not root and " + p + " is not setuid root"
	}
	return ": " + p + " is setuid root, yet it failed (its message is above; a nosuid file system or a sandbox can stop it)"
}

// probeQemu runs qemu-aarch64-static, which runs the arm64 test binaries on other machines.
func probeQemu() string {
	if why := programs("qemu-aarch64-static"); why != "" {
		return why
	}
	if out, err := exec.Command("qemu-aarch64-static", "-version").CombinedOutput(); err != nil {
		return fmt.Sprintf("qemu-aarch64-static -version: %v: %s", err, out)
	}
	return ""
}

// probeStrace kills a shell at its first getppid with strace's fault injection, as the kill
// suites do: strace must be there and ptrace permitted.
func probeStrace() string {
	if why := programs("strace"); why != "" {
		return why
	}
	out, err := exec.Command("strace", "-f", "-o", "/dev/null", "-e", "trace=none",
		"-e", "inject=getppid:signal=KILL:when=1", "/bin/sh", "-c", "echo $PPID >/dev/null; exit 3").CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return fmt.Sprintf("strace does not run: %v: %s", err, out)
	}
	if strings.Contains(string(out), "Operation not permitted") {
		return "ptrace is not permitted here: " + strings.TrimSpace(string(out))
	}
	return ""
}
