package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

	"github.com/vaultui/vaultui/internal/userfile"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

// notifyWriter is a stderr that calls on for each write, with everything written so far.
type notifyWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
	on  func(string)
}

func (w *notifyWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	w.buf.Write(b)
	s := w.buf.String()
	w.mu.Unlock()
	w.on(s)
	return len(b), nil
}

// TestPassfileFIFO: a named FIFO is read once something writes to it (not taken for an empty
// file while no writer has come), and the wait for a writer ends when the command is
// interrupted.
func TestPassfileFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// The writer's close must come before the second read opens the FIFO: a reader that
	// joins a writer about to close reads an empty password.
	written := make(chan struct{})
	writeLater := &notifyWriter{on: func(s string) {
		if strings.Contains(s, "Waiting for the password") {
			go func() {
				defer close(written)
				w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
				if err != nil {
					t.Error(err)
					return
				}
				w.Write([]byte("secret\n"))
				w.Close()
			}()
		}
	}}
	// readWithin fails the test if readPassfile hangs (a plain open of the FIFO did).
	readWithin := func(e *env) ([]byte, error) {
		type res struct {
			pw  []byte
			err error
		}
		done := make(chan res, 1)
		go func() { pw, err := e.readPassfile(fifo); done <- res{pw, err} }()
		select {
		case r := <-done:
			return r.pw, r.err
		case <-time.After(20 * time.Second):
			t.Fatal("reading a FIFO hangs")
		}
		return nil, nil
	}
	got, err := readWithin(&env{ctx: context.Background(), stderr: writeLater})
	if err != nil || string(got) != "secret" {
		t.Fatalf("FIFO written after the wait began: %q, %v", got, err)
	}
	<-written

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err = readWithin(&env{ctx: ctx, stderr: &notifyWriter{on: func(s string) { cancel() }}})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), fifo) {
		t.Errorf("interrupted wait: %v, want context.Canceled naming %s", err, fifo)
	}
}

// TestPassfileRefused: a passfile that is a device (a link to /dev/zero) or another user's
// file is refused with an error naming it.
func TestPassfileRefused(t *testing.T) {
	dir := t.TempDir()
	zero := filepath.Join(dir, "zero")
	os.Symlink("/dev/zero", zero)
	e := &env{ctx: context.Background()}
	if _, err := e.readPassfile(zero); !errors.Is(err, userfile.ErrUnsafe) || !strings.Contains(err.Error(), "character device") {
		t.Errorf("link to /dev/zero: %v", err)
	}
	if os.Geteuid() == 0 {
		theirs := filepath.Join(dir, "theirs")
		os.WriteFile(theirs, []byte("pw\n"), 0o644)
		os.Chown(theirs, 65534, 65534)
		if _, err := e.readPassfile(theirs); !errors.Is(err, userfile.ErrUnsafe) || !strings.Contains(err.Error(), "another user") {
			t.Errorf("another user's passfile: %v", err)
		}
	}
}

// TestPassfileFIFOSignal runs vaultui with a named FIFO nothing writes to as its passfile:
// SIGTERM (it used to be ignored) and a first SIGINT end it with exit code 130 and say why,
// and nothing is created. A pipe given as /dev/fd/N, as `<(pass show x)` does, still works.
func TestPassfileFIFOSignal(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			vaultDir := filepath.Join(dir, "v-"+strings.ReplaceAll(sig.String(), " ", ""))
			cmd := exec.Command("vaultui", "init", "--scryptn", "10", "--passfile", fifo, vaultDir)
			cmd.Env = env
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			// The note says it waits on the FIFO, its signal handling set up: now signal it.
			// (A vaultui blocked in open(2) on the FIFO never says so.)
			var mu sync.Mutex
			var out bytes.Buffer
			noted, ended := make(chan struct{}), make(chan struct{})
			go func() {
				defer close(ended)
				buf := make([]byte, 4096)
				for said := false; ; {
					n, err := stderr.Read(buf)
					mu.Lock()
					out.Write(buf[:n])
					if !said && strings.Contains(out.String(), "Waiting for the password") {
						said = true
						close(noted)
					}
					mu.Unlock()
					if err != nil {
						return
					}
				}
			}()
			select {
			case <-noted:
			case <-ended:
				t.Fatalf("vaultui ended before waiting on the FIFO:\n%s", out.String())
			case <-time.After(20 * time.Second):
				t.Error("vaultui does not say it is waiting on the FIFO") // signal it all the same
			}
			cmd.Process.Signal(sig)
			exited := make(chan error, 1)
			go func() { <-ended; exited <- cmd.Wait() }()
			select {
			case err = <-exited:
			case <-time.After(20 * time.Second):
				t.Fatalf("vaultui waiting on a FIFO ignores %v", sig)
			}
			var ee *exec.ExitError
			mu.Lock()
			defer mu.Unlock()
			if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted || !strings.Contains(out.String(), "interrupted") {
				t.Errorf("after %v: %v, want exit code %d and a message saying interrupted; stderr:\n%s", sig, err, exitInterrupted, out.String())
			}
			if _, err := os.Stat(vaultDir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("an interrupted init left %s: %v", vaultDir, err)
			}
		})
	}

	// /dev/fd/3: a pipe the command inherits, which the shell's <(...) makes.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	vaultDir := filepath.Join(dir, "piped")
	cmd := exec.Command("vaultui", "init", "--scryptn", "10", "--passfile", "/dev/fd/3", vaultDir)
	cmd.Env, cmd.ExtraFiles = env, []*os.File{r}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	w.Write([]byte("from a pipe\n"))
	w.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("init --passfile /dev/fd/3: %v\n%s", err, out.String())
	}
	if _, err := gocryptfs.Unlock(context.Background(), vaultDir, []byte("from a pipe")); err != nil {
		t.Errorf("the vault made with a piped password does not open with it: %v", err)
	}
}

// TestReadFirstLine: the first line comes back in a slice with no room past it (what was
// read after the newline is wiped, not kept behind the password), however the reads split
// the input; a line longer than max comes back longer than max for the caller to refuse.
func TestReadFirstLine(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		max      int
	}{
		{"pw\nnext secret\n", "pw", 10},
		{"pw", "pw", 10},
		{"0123456789\n", "0123456789", 10},
		{"0123456789a\n", "0123456789a", 10},
		{"0123456789abc", "0123456789a", 10},
		{"\nsecond", "", 10},
	} {
		got, err := readFirstLine(iotest.OneByteReader(strings.NewReader(tc.in)), tc.max)
		if err != nil || string(got) != tc.want || cap(got) != len(got) {
			t.Errorf("%q: got %q (cap %d), %v; want %q with no room past it", tc.in, got, cap(got), err, tc.want)
		}
	}
	if _, err := readFirstLine(iotest.TimeoutReader(strings.NewReader("pw")), 10); err == nil {
		t.Errorf("a read error was not reported")
	}
}
