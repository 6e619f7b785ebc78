package extpass

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// script writes an executable shell script into a temporary directory and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pw.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunFirstLine(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"one line", `echo 'pass word'`, "pass word"},
		{"no newline", `printf secret`, "secret"},
		{"crlf", `printf 'secret\r\n'`, "secret"},
		// pass show prints the rest of the entry after the password; the rest is read
		// and dropped, so the program never sees a closed pipe.
		{"more lines", `echo secret; i=0; while [ $i -lt 20000 ]; do echo "user: someone $i"; i=$((i+1)); done`, "secret"},
		{"stdin is empty", `read x; echo "got[$x]"`, "got[]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			pw, err := Run(context.Background(), []string{script(t, c.body)}, Options{})
			if err != nil || string(pw) != c.want {
				t.Fatalf("got %q, %v; want %q", pw, err, c.want)
			}
		})
	}
}

// TestRunArgsWithoutShell: the words are the program's arguments as given: nothing is
// expanded or split again.
func TestRunArgsWithoutShell(t *testing.T) {
	p := script(t, `printf '%s|' "$@"; echo`)
	pw, err := Run(context.Background(), []string{p, "a b", "$HOME", "*", "x;y"}, Options{})
	if err != nil || string(pw) != "a b|$HOME|*|x;y|" {
		t.Fatalf("got %q, %v", pw, err)
	}
	if got := Split("pass  show vault/work "); strings.Join(got, ",") != "pass,show,vault/work" {
		t.Fatalf("Split: %q", got)
	}
}

func TestRunFailures(t *testing.T) {
	long := strings.Repeat("x", MaxLen+1)
	for _, c := range []struct{ name, body, want string }{
		{"exit status", "echo 'vault/work is not in the password store' >&2; echo half; exit 3",
			"exited with status 3: vault/work is not in the password store"},
		{"nothing printed", "exit 0", "printed no password"},
		{"empty line", "echo; echo second", "printed no password"},
		{"too long", "echo " + long, "longer than 4096 bytes"},
		{"killed", "kill -9 $$", "killed by signal killed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			pw, err := Run(context.Background(), []string{script(t, c.body)}, Options{})
			if !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), c.want) || pw != nil {
				t.Fatalf("got %q, %v; want an error with %q", pw, err, c.want)
			}
			if strings.Contains(err.Error(), "half") {
				t.Fatalf("the output must not be in the error: %v", err)
			}
		})
	}
	_, err := Run(context.Background(), []string{"/nonexistent/pw-program"}, Options{})
	if !errors.Is(err, ErrFailed) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing program: %v", err)
	}
	if _, err := Run(context.Background(), nil, Options{}); !errors.Is(err, ErrFailed) {
		t.Fatalf("no program: %v", err)
	}
}

// TestRunTimeoutKillsGroup: a program that hangs is stopped at the timeout with its whole
// process group, a child it started included.
func TestRunTimeoutKillsGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child")
	p := script(t, "sleep 1000 & echo $! > "+pidFile+"; echo waiting >&2; wait")
	_, err := Run(context.Background(), []string{p}, Options{Timeout: 300 * time.Millisecond})
	if !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), "did not finish within 300ms and was stopped: waiting") {
		t.Fatalf("got %v", err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	// SIGKILL was sent before Run returned; the child's end is the kernel's to finish.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if gone(pid) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the program's child %d survived the timeout", pid)
		}
	}
}

// TestRunKillsGroupAfter: once the program has exited, with a password or with an error, a
// background child it left in its process group is killed too: a `sleep 100 &` (holding the
// output open, or not) does not outlive a successful mount.
func TestRunKillsGroupAfter(t *testing.T) {
	for _, c := range []struct{ name, child, rest string }{
		{"password, child holds the output", "sleep 100 &", "echo pw"},
		{"password, child detached from the output", "sleep 100 </dev/null >/dev/null 2>&1 &", "echo pw"},
		{"failure", "sleep 100 </dev/null >/dev/null 2>&1 &", "echo 'not found' >&2; exit 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "child")
			p := script(t, c.child+" echo $! > "+pidFile+"; "+c.rest)
			pw, err := Run(context.Background(), []string{p}, Options{})
			if c.name == "failure" {
				if !errors.Is(err, ErrFailed) {
					t.Fatalf("got %q, %v; want the program's failure", pw, err)
				}
			} else if err != nil || string(pw) != "pw" {
				t.Fatalf("got %q, %v; want \"pw\"", pw, err)
			}
			b, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatal(err)
			}
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			for deadline := time.Now().Add(5 * time.Second); !gone(pid); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					syscall.Kill(pid, syscall.SIGKILL)
					t.Fatalf("the program's background child %d outlived it", pid)
				}
			}
		})
	}
}

// gone: no such process, or a zombie (killed, waiting for a parent that does not reap).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(stat, ')')
	return i > 0 && len(stat) > i+2 && stat[i+2] == 'Z'
}

// TestRunCancel: the caller's context (an interrupted command) stops the program too.
func TestRunCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := script(t, "echo started >&2; sleep 1000")
	var stderr syncBuffer
	stderr.started = make(chan struct{})
	go func() { <-stderr.started; cancel() }()
	_, err := Run(ctx, []string{p}, Options{Stderr: &stderr})
	if !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), "was stopped: context canceled") {
		t.Fatalf("got %v", err)
	}
	if stderr.String() != "started\n" {
		t.Fatalf("the program's stderr is passed on: %q", stderr.String())
	}
}

// syncBuffer is the Stderr of TestRunCancel: it closes started on the first write.
type syncBuffer struct {
	bytes.Buffer
	started chan struct{}
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	if b.Len() == 0 {
		defer close(b.started)
	}
	return b.Buffer.Write(p)
}
