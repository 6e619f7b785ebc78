package layout

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// noHang runs fn and fails the test if it does not return within a few seconds.
func noHang(t *testing.T, what string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatalf("%s blocks", what)
		return nil
	}
}

// OpenFile hands back regular files only, never blocks, never follows a symlink, and leaves
// the descriptor blocking as asked.
func TestOpenFile(t *testing.T) {
	dir := t.TempDir()
	dfd := openDir(t, dir)
	os.WriteFile(filepath.Join(dir, "file"), []byte("content"), 0o644)
	unix.Mkfifo(filepath.Join(dir, "fifo"), 0o644)
	os.Mkdir(filepath.Join(dir, "dir"), 0o755)
	os.Symlink("file", filepath.Join(dir, "link"))
	l, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	var st unix.Stat_t
	fd, err := OpenFile(dfd, "file", unix.O_RDONLY, 0, &st)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size != 7 || st.Mode&unix.S_IFMT != unix.S_IFREG {
		t.Errorf("stat of the file: size %d, mode %o", st.Size, st.Mode)
	}
	if fl, _ := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); fl&unix.O_NONBLOCK != 0 {
		t.Error("the descriptor is left non-blocking")
	}
	// Reopen through it, as the mount reopens a file through a handle.
	rfd, err := Reopen(fd, unix.O_RDWR, nil)
	if err != nil {
		t.Fatalf("Reopen: %v", err)
	}
	if fl, _ := unix.FcntlInt(uintptr(rfd), unix.F_GETFL, 0); fl&unix.O_ACCMODE != unix.O_RDWR || fl&unix.O_NONBLOCK != 0 {
		t.Errorf("Reopen's flags: %#o", fl)
	}
	unix.Close(rfd)
	unix.Close(fd)
	fd, err = OpenFile(dfd, "file", unix.O_RDONLY|unix.O_NONBLOCK, 0, nil)
	if fl, _ := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err != nil || fl&unix.O_NONBLOCK == 0 {
		t.Errorf("O_NONBLOCK asked for and not kept: %v", err)
	}
	unix.Close(fd)
	fd, err = OpenFile(dfd, "new", unix.O_RDWR|unix.O_CREAT|unix.O_EXCL, 0o600, nil)
	if err != nil {
		t.Fatalf("creating: %v", err)
	}
	unix.Close(fd)

	for _, c := range []struct {
		name  string
		flags int
		want  string
	}{
		{"fifo", unix.O_RDONLY, "is not a regular file (a FIFO)"},
		{"fifo", unix.O_RDWR, "is not a regular file (a FIFO)"},
		{"fifo", unix.O_RDWR | unix.O_CREAT, "is not a regular file (a FIFO)"},
		{"dir", unix.O_RDONLY, "is not a regular file (a directory)"},
	} {
		err := noHang(t, "opening the "+c.name, func() error {
			fd, err := OpenFile(dfd, c.name, c.flags, 0o600, nil)
			if err == nil {
				unix.Close(fd)
			}
			return err
		})
		if !errors.Is(err, ErrCorrupt) || !IsNotRegular(err) || !strings.Contains(err.Error(), c.name+" "+c.want) {
			t.Errorf("OpenFile(%s, %#o): %v; want ErrCorrupt saying %q", c.name, c.flags, err, c.want)
		}
		if Errno(err) != unix.EIO {
			t.Errorf("Errno = %v, want EIO", Errno(err))
		}
	}
	// A FIFO opened for writing alone fails without a reader (ENXIO), a socket cannot be
	// opened (ENXIO), a symlink is not followed (ELOOP): none of them blocks.
	for name, want := range map[string]error{"fifo": unix.ENXIO, "sock": unix.ENXIO, "link": unix.ELOOP} {
		flags := unix.O_RDONLY
		if name == "fifo" {
			flags = unix.O_WRONLY
		}
		err := noHang(t, "opening the "+name, func() error {
			_, err := OpenFile(dfd, name, flags, 0, nil)
			return err
		})
		if !errors.Is(err, want) {
			t.Errorf("OpenFile(%s): %v, want %v", name, err, want)
		}
	}
	// A descriptor of a FIFO (O_PATH opens anything) is not reopened either.
	pfd, err := unix.Openat(dfd, "fifo", unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pfd)
	err = noHang(t, "reopening the FIFO", func() error {
		_, err := Reopen(pfd, unix.O_RDONLY, nil)
		return err
	})
	if !IsNotRegular(err) || !strings.Contains(err.Error(), "FIFO") {
		t.Errorf("Reopen of a FIFO: %v", err)
	}
}

// ReadDirPath lists a directory and refuses a FIFO in its place without blocking.
func TestReadDirPath(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "b"), nil, 0o644)
	os.Mkdir(filepath.Join(dir, "a"), 0o755)
	unix.Mkfifo(filepath.Join(dir, "fifo"), 0o644)
	ents, err := ReadDirPath(dir)
	if err != nil || len(ents) != 3 || ents[0].Name() != "a" || ents[1].Name() != "b" {
		t.Fatalf("ReadDirPath: %v, %v", ents, err)
	}
	err = noHang(t, "listing a FIFO", func() error {
		_, err := ReadDirPath(filepath.Join(dir, "fifo"))
		return err
	})
	if !errors.Is(err, unix.ENOTDIR) {
		t.Errorf("ReadDirPath of a FIFO: %v, want ENOTDIR", err)
	}
}
