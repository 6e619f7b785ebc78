package registry

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/userfile"
)

// loadWithin runs Load in a goroutine: a registry that is a FIFO used to hang it.
func loadWithin(t *testing.T, path string) (*Registry, error) {
	t.Helper()
	type res struct {
		r   *Registry
		err error
	}
	done := make(chan res, 1)
	go func() { r, err := Load(path); done <- res{r, err} }()
	select {
	case r := <-done:
		return r.r, r.err
	case <-time.After(10 * time.Second):
		t.Fatalf("Load(%s) hangs", path)
	}
	return nil, nil
}

// TestRegistryRefusesWhatIsNotAFile: a registry that is a FIFO (it hung `list`), a link to
// /dev/zero (it grew `list` to gigabytes), a file over MaxSize or another user's file
// is refused at once with an error naming the path and the problem; nothing is read.
func TestRegistryRefusesWhatIsNotAFile(t *testing.T) {
	cases := []struct {
		name string
		make func(t *testing.T, p string) error
		want string
	}{
		{"fifo", func(t *testing.T, p string) error { return syscall.Mkfifo(p, 0o600) }, "FIFO"},
		{"dev-zero", func(t *testing.T, p string) error { return os.Symlink("/dev/zero", p) }, "character device"},
		{"directory", func(t *testing.T, p string) error { return os.Mkdir(p, 0o700) }, "a directory"},
		{"too-big", func(t *testing.T, p string) error {
			f, err := os.Create(p)
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(MaxSize + 1) // sparse: no disk used
		}, "larger than"},
		{"other-user", func(t *testing.T, p string) error {
			if os.Geteuid() != 0 {
				t.Skip("giving a file to another user needs root")
			}
			if err := os.WriteFile(p, []byte(`{"version":1,"vaults":[]}`), 0o644); err != nil {
				return err
			}
			return os.Chown(p, 65534, 65534)
		}, "another user"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), FileName)
			if err := c.make(t, path); err != nil {
				t.Fatal(err)
			}
			_, err := loadWithin(t, path)
			if !errors.Is(err, userfile.ErrUnsafe) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Load: %v, want userfile.ErrUnsafe naming %s and saying %q", err, path, c.want)
			}
		})
	}
}

// TestRegistrySymlinkKept: a registry kept elsewhere (a dotfiles repository) and linked in is
// read through the link, and a save replaces the target, atomically beside it, and leaves the
// link a link. A dangling link's target is created.
func TestRegistrySymlinkKept(t *testing.T) {
	base := t.TempDir()
	conf := filepath.Join(base, "config", "vaultui")
	dots := filepath.Join(base, "dotfiles")
	for _, d := range []string{conf, dots} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(conf, FileName)
	target := filepath.Join(dots, "vaultui.json")
	if err := os.Symlink("../../dotfiles/vaultui.json", path); err != nil { // relative, as stow makes them
		t.Fatal(err)
	}
	for round, name := range []string{"first", "second"} {
		r, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Vaults) != round {
			t.Fatalf("round %d: read %d vaults through the link", round, len(r.Vaults))
		}
		if err := r.Add(Entry{Name: name, CipherDir: "/data/" + name}); err != nil {
			t.Fatal(err)
		}
		if err := r.Save(); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("round %d: the registry is no longer a link: %v %v", round, fi.Mode(), err)
		}
		data, err := os.ReadFile(target)
		if err != nil || !strings.Contains(string(data), `"`+name+`"`) {
			t.Fatalf("round %d: the link's target lacks the saved vault: %v\n%s", round, err, data)
		}
	}
	ents, _ := os.ReadDir(dots)
	if len(ents) != 1 {
		t.Errorf("temp file left beside the target: %v", ents)
	}
}

// TestRegistryUnsafeDirectory: a registry directory another user owns, or any that others
// may write in, is refused for reading and for writing (as ssh refuses such a ~/.ssh), and
// nothing is written into it.
func TestRegistryUnsafeDirectory(t *testing.T) {
	cases := []struct {
		name  string
		mode  os.FileMode
		owner int // -1: the user
		want  string
	}{
		{"world-writable", 0o777, -1, "other users may write"},
		{"group-writable", 0o770, -1, "other users may write"},
		{"another user's", 0o777, 65534, "another user"},
		{"another user's, closed", 0o755, 65534, "another user"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.owner >= 0 && os.Geteuid() != 0 {
				t.Skip("giving a directory to another user needs root")
			}
			dir := filepath.Join(t.TempDir(), "vaultui")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, FileName)
			if err := os.WriteFile(path, []byte(`{"version":1,"vaults":[]}`), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, c.mode); err != nil {
				t.Fatal(err)
			}
			if c.owner >= 0 {
				if err := os.Chown(dir, c.owner, c.owner); err != nil {
					t.Fatal(err)
				}
			}
			check := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, userfile.ErrUnsafe) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), c.want) {
					t.Errorf("%s: %v, want userfile.ErrUnsafe naming %s and saying %q", what, err, dir, c.want)
				}
			}
			_, err := Load(path)
			check("Load", err)
			r := &Registry{Path: path, loaded: []byte(`{"version":1,"vaults":[]}`)}
			r.Vaults = []Entry{{Name: "x", CipherDir: "/x"}}
			check("Save", r.Save())
			_, err = Update(path, func(r *Registry) error { return nil })
			check("Update", err)
			ents, _ := os.ReadDir(dir)
			if len(ents) != 1 {
				t.Errorf("files written into the unsafe directory: %v", ents)
			}
		})
	}
}

// TestRegistryDuplicatesFoundWhenLoading: the index that made loading linear still finds a
// repeated name or cipherdir (written as another spelling of the same path) anywhere.
func TestRegistryDuplicatesFoundWhenLoading(t *testing.T) {
	for _, c := range []struct{ second, want string }{
		{`{"name":"a","cipherdir":"/other"}`, `vault name "a"`},
		{`{"name":"b","cipherdir":"/data/a/"}`, `already registered as "a"`},
	} {
		path := filepath.Join(t.TempDir(), FileName)
		body := fmt.Sprintf(`{"version":1,"vaults":[{"name":"a","cipherdir":"/data/a"},{"name":"z","cipherdir":"/z"},%s]}`, c.second)
		os.WriteFile(path, []byte(body), 0o600)
		_, err := Load(path)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "entry 3") {
			t.Errorf("%s: %v, want entry 3 refused: %s", c.second, err, c.want)
		}
	}
}

// BenchmarkLoad20k loads a registry of 20,000 vaults (it took 17 s when each entry
// was compared with all before it).
func BenchmarkLoad20k(b *testing.B) {
	path := filepath.Join(b.TempDir(), FileName)
	r := &Registry{Path: path}
	for i := range 20000 {
		r.Vaults = append(r.Vaults, Entry{Name: fmt.Sprintf("vault-%05d", i),
			CipherDir: fmt.Sprintf("/home/someone/Sync/encrypted/vault-%05d", i), Lock: LockSleep})
	}
	if err := r.Save(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		got, err := Load(path)
		if err != nil || len(got.Vaults) != 20000 {
			b.Fatal(len(got.Vaults), err)
		}
	}
}

// TestResolveConfigNotARegularFile: a directory whose gocryptfs.conf is a FIFO or a dangling
// link is still resolved as a vault, at once, so that loading its config says what is wrong
// instead of "not a vault".
func TestResolveConfigNotARegularFile(t *testing.T) {
	for name, make := range map[string]func(p string) error{
		"fifo": func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"loop": func(p string) error { return os.Symlink(p, p) },
	} {
		dir := t.TempDir()
		if err := make(filepath.Join(dir, crypto.ConfName)); err != nil {
			t.Fatal(err)
		}
		reg := &Registry{}
		if e, err := reg.Resolve(dir); err != nil || e.CipherDir != dir {
			t.Errorf("%s: Resolve = %+v, %v; want the directory as a vault", name, e, err)
		}
	}
}
