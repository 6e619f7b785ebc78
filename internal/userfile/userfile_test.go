package userfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOpenRefuses: what a user file must not be, each refused at once with an error that
// names the path and the reason.
func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	linkToZero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", linkToZero); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{fifo, "FIFO"},
		{linkToZero, "character device"},
		{dir, "a directory"},
	} {
		done := make(chan error, 1)
		go func() {
			f, err := Open(c.path)
			if f != nil {
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Open(%s) = %v, want ErrUnsafe naming it and saying %q", c.path, err, c.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Open(%s) hangs", c.path)
		}
	}
	if _, err := Open(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open(missing) = %v, want fs.ErrNotExist", err)
	}
}

// TestOpenPipeOrFile takes the FIFO Open refuses, without blocking on it.
func TestOpenPipeOrFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := OpenPipeOrFile(fifo)
	if err != nil {
		t.Fatalf("OpenPipeOrFile(FIFO): %v", err)
	}
	f.Close()
}

// TestReadBounded: a file over the limit is refused, not read into memory; one at the limit
// is read whole.
func TestReadBounded(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("12345"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := Read(p, 5); err != nil || string(got) != "12345" {
		t.Errorf("Read(limit 5) = %q, %v", got, err)
	}
	if _, err := Read(p, 4); !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "larger than 4 bytes") {
		t.Errorf("Read(limit 4) = %v, want ErrUnsafe saying it is too large", err)
	}
}

// TestCheckDir refuses a directory others may write in, as ssh does for ~/.ssh.
func TestCheckDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := CheckDir(dir); err != nil {
		t.Fatalf("CheckDir(0700) = %v", err)
	}
	if err := os.Chmod(dir, 0o770); err != nil {
		t.Fatal(err)
	}
	if err := CheckDir(dir); !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "chmod go-w") {
		t.Errorf("CheckDir(0770) = %v, want ErrUnsafe with the chmod that fixes it", err)
	}
}
