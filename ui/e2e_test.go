package ui

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vaultui/vaultui/internal/testdeps"
	"github.com/vaultui/vaultui/keyring/keyringtest"
)

// TestEndToEndTmux drives the real binary in a tmux pane at 80x24, as a
// person would: speed test, create a vault through the wizard, mount it,
// watch the write throughput while the test writes into the mount, unmount,
// quit; then vaultui fsck must find the vault clean.
func TestEndToEndTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test: skipped with -short")
	}
	testdeps.Need(t, testdeps.Tmux, testdeps.FUSE)
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}

	tmp := t.TempDir()
	bin := filepath.Join(tmp, "vaultui")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	home := filepath.Join(tmp, "home")
	runtime := filepath.Join(tmp, "run")
	for _, d := range []string{home, runtime} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// A real keyring on a private session bus for the remember-password part; the rest runs
	// without.
	haveKeyring := testdeps.Optional(t, testdeps.DBus, "the remember-password part")
	if haveKeyring {
		keyringtest.StartService(t)
	}
	env := append(os.Environ(),
		"HOME="+home,
		"XDG_CACHE_HOME="+filepath.Join(tmp, "cache"), // the speed test's cache: not the user's
		"XDG_CONFIG_HOME="+filepath.Join(tmp, "config"),
		"XDG_RUNTIME_DIR="+runtime,
		"XDG_STATE_HOME="+filepath.Join(tmp, "state"),
		"TERM=xterm-256color",
	)
	vaultui := func(args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := vaultui("mount", "--help"); err != nil {
		t.Fatalf("vaultui mount --help: %v\n%s", err, out)
	}

	cipherDir := filepath.Join(tmp, "secret.crypt")
	mountPoint := filepath.Join(home, "Vaults", "secret")
	const password = "e2e correct horse"

	// Cleanups run last-in first-out: the tmux server goes first, then the
	// mounts and the daemon, then (t.TempDir) the files.
	t.Cleanup(func() {
		if out, err := vaultui("unmount", "--all"); err != nil {
			t.Logf("vaultui unmount --all: %v\n%s", err, out)
		}
		exec.Command("fusermount3", "-uz", mountPoint).Run()
		stopDaemon(t, bin, filepath.Join(runtime, "vaultui", "daemon.lock"))
	})

	sock := fmt.Sprintf("vaultui-e2e-%d", os.Getpid())
	tm := func(args ...string) (string, error) {
		cmd := exec.Command(tmux, append([]string{"-L", sock, "-f", "/dev/null"}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// The shell keeps the pane open after the app exits so its goodbye
	// and exit status can be read.
	script := fmt.Sprintf("%s; echo \"EXITED $?\"; sleep 600", bin)
	if out, err := tm("new-session", "-d", "-s", "e2e", "-x", "80", "-y", "24", "sh", "-c", script); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { tm("kill-server") })

	var screen string
	capture := func() string {
		out, err := tm("capture-pane", "-p", "-t", "e2e")
		if err != nil {
			t.Fatalf("tmux capture-pane: %v\n%s", err, out)
		}
		screen = out
		return out
	}
	waitFor := func(what string, timeout time.Duration, ok func(string) bool) {
		t.Helper()
		deadline := time.Now().Add(timeout)
		for {
			if ok(capture()) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out after %v waiting for %s; the screen:\n%s", timeout, what, screen)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	see := func(s string) {
		t.Helper()
		waitFor(strconv.Quote(s), 20*time.Second, func(sc string) bool { return strings.Contains(sc, s) })
	}
	keys := func(k ...string) {
		t.Helper()
		if out, err := tm(append([]string{"send-keys", "-t", "e2e"}, k...)...); err != nil {
			t.Fatalf("tmux send-keys %q: %v\n%s", k, err, out)
		}
	}
	typeText := func(s string) { t.Helper(); keys("-l", s) }

	see("No vaults yet")

	// Speed test: bars, then the recommendation.
	keys("s")
	see("Recommended:")
	if !strings.Contains(screen, "MB/s") {
		t.Fatalf("speed test shows no MB/s:\n%s", screen)
	}
	keys("Escape")
	see("No vaults yet")

	// The wizard, with a cheap scrypt cost from the advanced options.
	keys("n")
	see("step 1 of 6")
	typeText(cipherDir)
	keys("Enter")
	see("step 2 of 6")
	keys("Enter") // name: "secret", from the folder
	see("step 3 of 6")
	see(filepath.Join("Vaults", "secret"))
	keys("Enter")
	see("step 4 of 6")
	see("★ recommended")
	keys("Enter")
	see("step 5 of 6")
	typeText(password)
	keys("Enter")
	typeText(password)
	keys("Enter")
	see("step 6 of 6")
	keys("C-u")
	typeText("10")
	keys("Enter")
	see("Press y once you have stored it")
	if !regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}`).MatchString(screen) {
		t.Fatalf("no master key on screen:\n%s", screen)
	}
	keys("y")
	see("Created secret")
	see("○ locked")
	if _, err := os.Stat(filepath.Join(cipherDir, "gocryptfs.conf")); err != nil {
		t.Fatalf("the wizard wrote no config: %v", err)
	}

	// Mount: a wrong password first keeps the prompt.
	keys("m")
	see("mount secret")
	typeText("not the password")
	keys("Enter")
	see("Wrong password")
	typeText(password)
	if haveKeyring {
		keys("Tab", "Tab", "Tab", "Space") // Keyring: remember it
	}
	keys("Enter")
	see("● mounted at")
	if haveKeyring {
		see("Password stored in the keyring.")
	}

	// Write into the mount until the list shows the write throughput.
	stop := make(chan struct{})
	writeErr := make(chan error, 1)
	go func() { writeErr <- writeUntil(filepath.Join(mountPoint, "data.bin"), stop) }()
	nonZeroWrite := regexp.MustCompile(`write ([0-9.]+) (B|kB|MB|GB)/s`)
	waitFor("non-zero write throughput in the list", 30*time.Second, func(sc string) bool {
		m := nonZeroWrite.FindStringSubmatch(sc)
		return m != nil && m[1] != "0"
	})
	keys("Enter")
	see("Totals")
	see("write  now")
	close(stop)
	if err := <-writeErr; err != nil {
		t.Fatalf("writing into the mount: %v", err)
	}
	if regexp.MustCompile(`written 0 B`).MatchString(screen) {
		t.Fatalf("live view counts nothing written:\n%s", screen)
	}
	keys("Escape")
	see("● mounted at")

	keys("u")
	see("secret unmounted.")
	see("○ locked")
	// The row shows the newest event; e lists them all, from the daemon.
	see("unmounted (user)")
	keys("e")
	see("secret  mounted at")
	see("mount failed")
	keys("Escape")
	see("○ locked")

	if haveKeyring {
		// Mounted again without typing: the keyring's password. The form asks the keyring in
		// the background; under heavy load the Secret Service can miss its 5 s call timeout,
		// which the form then says. Only that is asked again, a few times; any other answer
		// fails.
		for try := 1; ; try++ {
			keys("m")
			see("mount secret")
			answered := func(sc string) bool {
				return strings.Contains(sc, "stored in the keyring: enter mounts with it") || strings.Contains(sc, "no keyring (")
			}
			// Up to three 5 s calls (connect, open a session, search), slowed by the load.
			waitFor("the keyring's answer", 60*time.Second, answered)
			if strings.Contains(screen, "stored in the keyring: enter mounts with it") {
				break
			}
			if !strings.Contains(screen, "timed out") || try == 3 {
				t.Fatalf("the mount form could not ask the keyring (try %d):\n%s", try, screen)
			}
			t.Logf("the keyring timed out (try %d); asking again:\n%s", try, screen)
			keys("Escape")
			see("○ locked")
		}
		keys("Enter")
		see("● mounted at")
		keys("u")
		see("secret unmounted.")
	}

	keys("q")
	see("EXITED 0")

	pwFile := filepath.Join(tmp, "password")
	if err := os.WriteFile(pwFile, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The speed test remembered its result in the test's cache, not in the user's.
	if _, err := os.Stat(filepath.Join(tmp, "cache", "vaultui", "speed.json")); err != nil {
		t.Errorf("the speed test's cache is not in the test's XDG_CACHE_HOME: %v", err)
	}
	if out, err := vaultui("fsck", "--passfile", pwFile, "secret"); err != nil {
		t.Fatalf("vaultui fsck after the session: %v\n%s", err, out)
	}
}

// writeUntil writes 1 MiB chunks to path until stop is closed.
func writeUntil(path string, stop chan struct{}) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	chunk := bytes.Repeat([]byte("vaultui e2e "), 1<<20/12)
	for {
		select {
		case <-stop:
			return f.Close()
		default:
		}
		if _, err := f.Write(chunk); err != nil {
			f.Close()
			return err
		}
		if st, err := f.Stat(); err == nil && st.Size() > 256<<20 {
			// Keep the file small; throughput is what matters.
			if _, err := f.Seek(0, 0); err != nil {
				f.Close()
				return err
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stopDaemon ends the daemon the test's binary started (its pid is in its
// lock file, and it runs bin) with SIGTERM, which unmounts everything, and
// waits for it.
func stopDaemon(t *testing.T, bin, lockPath string) {
	b, err := os.ReadFile(lockPath)
	if err != nil {
		return
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return
	}
	if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err != nil || exe != bin {
		return // gone, or not ours
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		if !errors.Is(err, os.ErrProcessDone) {
			t.Logf("stopping daemon %d: %v", pid, err)
		}
		return
	}
	for i := 0; i < 50; i++ {
		if p.Signal(syscall.Signal(0)) != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("daemon %d still running after SIGTERM; killing it", pid)
	p.Kill()
}
