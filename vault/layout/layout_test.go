package layout

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
)

func openDir(t *testing.T, dir string) int {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

func testNames(t *testing.T) *crypto.NameTransform {
	t.Helper()
	nt, err := crypto.NewNameTransform(make([]byte, crypto.MasterKeyLen), true, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	return nt
}

func TestDirIVRoundTrip(t *testing.T) {
	dir := t.TempDir()
	fd := openDir(t, dir)
	iv, err := WriteDirIV(fd)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, crypto.DirIVName))
	if err != nil || st.Mode().Perm() != 0o440 {
		t.Fatalf("diriv: %v, mode %v; want 0440", err, st.Mode())
	}
	got, err := ReadDirIV(fd)
	if err != nil || !bytes.Equal(got, iv) {
		t.Fatalf("ReadDirIV = %x, %v; want %x", got, err, iv)
	}
	if _, err := WriteDirIV(fd); !errors.Is(err, unix.EEXIST) {
		t.Fatalf("second WriteDirIV: %v, want EEXIST", err)
	}
}

// Every malformed or hostile diriv is an error that names the problem, and none of them
// blocks: a FIFO must not hang the reader (a mount thread or fsck).
func TestReadDirIVHostile(t *testing.T) {
	cases := []struct {
		name, want string
		make       func(p string) error
	}{
		{"missing", "missing gocryptfs.diriv", func(string) error { return nil }},
		{"empty", "is empty", func(p string) error { return os.WriteFile(p, nil, 0o644) }},
		{"short", "is 15 bytes", func(p string) error { return os.WriteFile(p, make([]byte, 15), 0o644) }},
		{"long", "longer than 16 bytes", func(p string) error { return os.WriteFile(p, make([]byte, 1<<20), 0o644) }},
		{"fifo", "is not a regular file (a FIFO)", func(p string) error { return unix.Mkfifo(p, 0o644) }},
		{"dir", "is not a regular file (a directory)", func(p string) error { return os.Mkdir(p, 0o755) }},
		{"symlink", "is a symlink", func(p string) error {
			os.WriteFile(p+".real", make([]byte, 16), 0o644)
			return os.Symlink(p+".real", p)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := c.make(filepath.Join(dir, crypto.DirIVName)); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { _, err := ReadDirIV(openDir(t, dir)); done <- err }()
			select {
			case err := <-done:
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("ReadDirIV: %v; want ErrCorrupt saying %q", err, c.want)
				}
				if Errno(err) != unix.EIO {
					t.Fatalf("Errno = %v, want EIO", Errno(err))
				}
			case <-time.After(5 * time.Second):
				t.Fatal("ReadDirIV blocked")
			}
		})
	}
}

func TestLongName(t *testing.T) {
	nt := testNames(t)
	dir := t.TempDir()
	fd := openDir(t, dir)
	encoded := strings.Repeat("A", 300)
	stored := nt.HashLongName(encoded)
	created, err := WriteLongName(fd, stored, encoded)
	if err != nil || !created {
		t.Fatalf("WriteLongName = %v, %v", created, err)
	}
	if created, err := WriteLongName(fd, stored, encoded); err != nil || created {
		t.Fatalf("second WriteLongName = %v, %v; want false, nil", created, err)
	}
	got, err := ReadLongName(fd, stored, nt)
	if err != nil || got != encoded {
		t.Fatalf("ReadLongName = %q, %v", got, err)
	}

	// A .name file that does not hash to its entry's name is refused.
	other := nt.HashLongName(strings.Repeat("B", 300))
	os.WriteFile(filepath.Join(dir, other+crypto.LongNameSuffix), []byte(encoded), 0o400)
	if _, err := ReadLongName(fd, other, nt); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "hash") {
		t.Fatalf("mismatched .name: %v", err)
	}
	// So is one too big to be a name, and a FIFO.
	big := nt.HashLongName("C")
	os.WriteFile(filepath.Join(dir, big+crypto.LongNameSuffix), make([]byte, 1<<20), 0o400)
	if _, err := ReadLongName(fd, big, nt); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("huge .name: %v", err)
	}
	fifo := nt.HashLongName("D")
	unix.Mkfifo(filepath.Join(dir, fifo+crypto.LongNameSuffix), 0o600)
	if _, err := ReadLongName(fd, fifo, nt); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("FIFO .name: %v", err)
	}

	if err := RemoveLongName(fd, stored); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, stored+crypto.LongNameSuffix)); !os.IsNotExist(err) {
		t.Fatalf(".name file still there: %v", err)
	}
}

// TestLongNameAfterACrash: a crash between creating a .name file and writing it leaves it
// empty or short. Writing that long name again must write it whole: it used to keep the
// leftover, and the entry renamed or created next to it had no name (settling a conflict
// again after a kill did that; see cli TestSettleCrash).
func TestLongNameAfterACrash(t *testing.T) {
	nt := testNames(t)
	dir := t.TempDir()
	fd := openDir(t, dir)
	encoded := strings.Repeat("A", 300)
	stored := nt.HashLongName(encoded)
	for _, left := range []string{"", encoded[:100]} {
		file := filepath.Join(dir, stored+crypto.LongNameSuffix)
		os.Remove(file)
		if err := os.WriteFile(file, []byte(left), 0o400); err != nil {
			t.Fatal(err)
		}
		if created, err := WriteLongName(fd, stored, encoded); err != nil || !created {
			t.Fatalf("WriteLongName over %d bytes left by a crash = %v, %v; want true, nil", len(left), created, err)
		}
		if got, err := ReadLongName(fd, stored, nt); err != nil || got != encoded {
			t.Fatalf("after writing over %d bytes left by a crash: %q, %v", len(left), got, err)
		}
	}
}

// OpenDir and OpenDirPath never follow a symlink.
func TestOpenDirNoFollow(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "real"), 0o755)
	os.Symlink("real", filepath.Join(dir, "link"))
	fd := openDir(t, dir)
	for name, open := range map[string]func(int, string) (int, error){"OpenDir": OpenDir, "OpenDirPath": OpenDirPath} {
		if cfd, err := open(fd, "link"); err == nil {
			unix.Close(cfd)
			t.Errorf("%s followed a symlink", name)
		}
		cfd, err := open(fd, "real")
		if err != nil {
			t.Fatalf("%s(real): %v", name, err)
		}
		unix.Close(cfd)
	}
}

func TestReadDirNames(t *testing.T) {
	dir := t.TempDir()
	want := []string{"a", "b.dir", strings.Repeat("n", 255)}
	os.WriteFile(filepath.Join(dir, want[0]), nil, 0o600)
	os.Mkdir(filepath.Join(dir, want[1]), 0o700)
	os.WriteFile(filepath.Join(dir, want[2]), nil, 0o600)
	// An O_PATH descriptor, as the walk holds, lists too; "." and ".." are left out.
	fd, err := OpenDirPath(unix.AT_FDCWD, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	got, err := ReadDirNames(fd)
	slices.Sort(got)
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("ReadDirNames = %q, %v; want %q", got, err, want)
	}
	if _, err := ReadDirNames(-1); err == nil {
		t.Error("a bad descriptor listed")
	}
}
