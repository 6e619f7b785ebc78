package vfs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/cryptomator"
	"github.com/vaultui/vaultui/vault/layout"
)

// cipherPath returns the cipherdir path of rel, a plaintext path of short names.
func cipherPath(t *testing.T, v GocryptfsVolume, rel string) string {
	t.Helper()
	dir := v.CipherDir()
	for _, plain := range strings.Split(rel, "/") {
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		iv, err := layout.ReadDirIV(fd)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		stored, _, long, err := v.Names.StoredName(plain, iv)
		if err != nil || long {
			t.Fatalf("stored name of %q: %v (long %v)", plain, err, long)
		}
		dir = filepath.Join(dir, stored)
	}
	return dir
}

// showsWithin polls state until it returns "" (the change shows), for up to showWait,
// and fails the test with the last state otherwise. A state that must never show fails it
// at once.
func showsWithin(t *testing.T, what string, state func() (string, bool)) {
	t.Helper()
	deadline := time.Now().Add(showWait)
	for {
		got, never := state()
		if never {
			t.Fatalf("%s: %s", what, got)
		}
		if got == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not shown after %v: %s", what, showWait, got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// showWait bounds how long a change behind the mount may take to show through it. The
// watcher acts within a tenth of a second or so; three seconds leave room for the race
// detector on a loaded 2-core machine, where a second was seen to fall short now and then.
const showWait = 3 * time.Second

// contentsState reads p whole and says whether it holds want yet. A read that is neither old
// nor want mixes old and new blocks: the kernel held some of the file's pages (old) and read
// the others through the mount (new) before the watcher had it drop them. That is the same
// staleness as old contents, and must end as soon: a mix that lasts fails as "not shown".
func contentsState(p string, old, want []byte) func() (string, bool) {
	return func() (string, bool) {
		b, err := os.ReadFile(p)
		switch {
		case err != nil:
			return err.Error(), false
		case bytes.Equal(b, want):
			return "", false
		case bytes.Equal(b, old):
			return "old contents", false
		}
		return fmt.Sprintf("%d bytes mixing old and new blocks", len(b)), false
	}
}

// inoState says whether p shows inode number ino yet.
func inoState(p string, ino uint64) func() (string, bool) {
	return func() (string, bool) {
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err.Error(), false
		}
		if st.Ino != ino {
			return fmt.Sprintf("inode number %d, want %d", st.Ino, ino), false
		}
		return "", false
	}
}

// listedState says whether directory dir lists name yet (want) or no more (!want).
func listedState(dir, name string, want bool) func() (string, bool) {
	return func() (string, bool) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return err.Error(), false
		}
		listed := slices.ContainsFunc(ents, func(e os.DirEntry) bool { return e.Name() == name })
		if listed != want {
			return fmt.Sprintf("%s listed: %v", name, listed), false
		}
		return "", false
	}
}

// existsState says whether p exists yet (want) or is gone yet (!want); dir: as a directory.
func existsState(p string, want, dir bool) func() (string, bool) {
	return func() (string, bool) {
		fi, err := os.Lstat(p)
		switch {
		case want && err != nil:
			return err.Error(), false
		case want && fi.IsDir() != dir:
			return fmt.Sprintf("mode %v", fi.Mode()), false
		case !want && err == nil:
			return "still there", false
		case !want && !errors.Is(err, os.ErrNotExist):
			return err.Error(), false
		}
		return "", false
	}
}

// behindVault is a vault whose cipherdir the tests of changes behind a mount change: its
// volume, the cipher file that holds the contents of the file at plaintext path rel (which
// need not exist yet, but its directory must), and its block size.
type behindVault struct {
	v    Volume
	path func(t *testing.T, rel string) string
	bs   int
}

// behindVaults are a vault of each format the watch follows; long names Cryptomator's with
// names past its shortening threshold, stored in .c9s folders with contents.c9r inside.
func behindVaults() []struct {
	name string
	make func(t *testing.T) behindVault
	long bool
} {
	return []struct {
		name string
		make func(t *testing.T) behindVault
		long bool
	}{
		{"gocryptfs", gocryptfsBehind, false},
		{"cryptomator", cryptomatorBehind, false},
		{"cryptomator long names", cryptomatorBehind, true},
	}
}

func gocryptfsBehind(t *testing.T) behindVault {
	v := volumeOf(realVault(t, "", crypto.AESGCM))
	return behindVault{v: v, path: func(t *testing.T, rel string) string { return cipherPath(t, v, rel) }, bs: crypto.BlockSize}
}

func cryptomatorBehind(t *testing.T) behindVault {
	vol, v := cryptomatorVolume(t)
	return behindVault{v: vol, path: func(t *testing.T, rel string) string { return cmCipherPath(t, v, rel) }, bs: v.Content().Geometry().BlockSize}
}

// cmCipherPath is cipherPath for a Cryptomator vault: the .c9r file, or the contents.c9r of
// the .c9s folder, that holds the contents of the file rel.
func cmCipherPath(t *testing.T, v *cryptomator.Vault, rel string) string {
	t.Helper()
	d := v.Root()
	parts := strings.Split(rel, "/")
	for _, p := range parts[:len(parts)-1] {
		e, err := v.Lookup(d, p)
		if err == nil {
			d, err = v.OpenDir(e)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	enc := v.Names().Encrypt(d.ID, parts[len(parts)-1])
	folder := filepath.Join(v.Dir(), filepath.FromSlash(d.Path))
	if len(enc) > v.ShorteningThreshold() {
		return filepath.Join(folder, cryptomator.Shorten(enc), cryptomator.ContentsFile)
	}
	return filepath.Join(folder, enc)
}

// TestChangesBehindTheMount: a sync tool changes the cipherdir behind a mount in each of its
// ways, and the mount shows each change soon (within a tenth of a second or so; showWait
// bounds it), its caches on. The tool works on cipher names, with a second mount of the vault (all
// caching off) to write the contents it brings. "rsync -t" replaces a file by renaming a new
// one over it, with the old size and modification time; "in place" (rsync --inplace -t)
// rewrites it keeping both: nothing the kernel's attribute refresh compares changes, so
// kernel pages kept across opens (FOPEN_KEEP_CACHE) would stay stale for good. Each runs with
// the mount's own cache times and with an hour (what the kernel shows then can only come from
// being told), in the root and in a subdirectory, on a vault of each format the watch
// follows (a Cryptomator file of a long name has its contents in its entry's folder).
func TestChangesBehindTheMount(t *testing.T) {
	for _, f := range behindVaults() {
		for _, timeout := range []time.Duration{0, time.Hour} {
			for _, sub := range []string{"", "sub"} {
				t.Run(fmt.Sprintf("%s/cache=%v/dir=%q", f.name, timeout, sub), func(t *testing.T) {
					changesBehindTheMount(t, f.make(t), f.long, timeout, sub)
				})
			}
		}
	}
}

// TestDeleteOfForgottenFile: the kernel may forget a file's node (memory pressure, drop_caches)
// while it keeps the listing of the file's directory. A file deleted behind the mount then must
// leave that listing too, although the kernel holds no entry for its name any more. Before, the
// listing showed it until the directory changed again (a watched one's listing is kept until told).
func TestDeleteOfForgottenFile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the kernel forgets a node at will only through /proc/sys/vm/drop_caches, which needs root")
	}
	for _, f := range behindVaults() {
		t.Run(f.name, func(t *testing.T) {
			bv := f.make(t)
			mp, m := mountTest(t, bv.v, Options{watchOwn: true})
			name := "ghost"
			if f.long {
				name = strings.Repeat("long-", 40) + name
			}
			if err := os.WriteFile(filepath.Join(mp, name), []byte("boo"), 0o644); err != nil {
				t.Fatal(err)
			}
			showsWithin(t, "listing", listedState(mp, name, true))
			for deadline := time.Now().Add(showWait); m.root.GetChild(name) != nil; time.Sleep(10 * time.Millisecond) {
				if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("2"), 0); err != nil {
					t.Fatal(err)
				}
				if time.Now().After(deadline) {
					t.Fatal("the kernel keeps the file's node after drop_caches")
				}
			}
			// As a sync tool deletes it: a long name's folder goes with its contents.
			cipher := bv.path(t, name)
			if filepath.Base(cipher) == "contents.c9r" {
				cipher = filepath.Dir(cipher)
			}
			if err := os.RemoveAll(cipher); err != nil {
				t.Fatal(err)
			}
			showsWithin(t, "deleted file listed", listedState(mp, name, false))
		})
	}
}

func changesBehindTheMount(t *testing.T, bv behindVault, long bool, timeout time.Duration, sub string) {
	v := bv.v
	mp, _ := mountTest(t, v, Options{cacheTimeout: timeout, watchOwn: true})
	tool, _ := mountTest(t, v, Options{SharedStorage: true})
	nm := func(name string) string {
		if long {
			return strings.Repeat("long-", 40) + name
		}
		return name
	}
	in := func(root, name string) string { return filepath.Join(root, sub, nm(name)) }
	rel := func(name string) string { return filepath.Join(sub, nm(name)) }
	if sub != "" {
		if err := os.Mkdir(filepath.Join(mp, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	size := 5*bv.bs + 100
	old := bytes.Repeat([]byte("old "), size/4)
	next := bytes.Repeat([]byte("NEW "), size/4)
	// cached writes name through the mount and reads it back, so the kernel holds its entry,
	// attributes and pages, and returns its cipher file's modification time.
	cached := func(name string) time.Time {
		t.Helper()
		if err := os.WriteFile(in(mp, name), old, 0o644); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(in(mp, name)); err != nil || !bytes.Equal(b, old) {
			t.Fatalf("read back %s: %v", name, err)
		}
		fi, err := os.Stat(bv.path(t, rel(name)))
		if err != nil {
			t.Fatal(err)
		}
		return fi.ModTime()
	}
	absent := func(name string) {
		t.Helper()
		if _, err := os.Lstat(in(mp, name)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s before it exists: %v", name, err)
		}
	}

	// inPlace rewrites name behind the mount with next, keeping its size and modification time.
	inPlace := func(name string, mtime time.Time) {
		t.Helper()
		f, err := os.OpenFile(in(tool, name), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.WriteAt(next, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(bv.path(t, rel(name)), mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("rsync -t", func(t *testing.T) {
		mtime := cached("rsynced")
		if err := os.WriteFile(in(tool, ".rsynced.tmp"), next, 0o644); err != nil {
			t.Fatal(err)
		}
		tmp := bv.path(t, rel(".rsynced.tmp"))
		if err := os.Chtimes(tmp, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		var st unix.Stat_t
		if err := unix.Stat(tmp, &st); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, bv.path(t, rel("rsynced"))); err != nil {
			t.Fatal(err)
		}
		// Its inode number first: a read would bring the new file in by itself (an open of
		// a node whose name now holds another file fails with ESTALE, and the kernel looks
		// the name up again: node.openEntry).
		showsWithin(t, "replaced file's inode number", inoState(in(mp, "rsynced"), st.Ino))
		showsWithin(t, "replaced file", contentsState(in(mp, "rsynced"), old, next))
	})
	t.Run("in place", func(t *testing.T) {
		mtime := cached("inplace")
		inPlace("inplace", mtime)
		showsWithin(t, "rewritten file", contentsState(in(mp, "inplace"), old, next))
	})
	// A handle open for writing through the mount, as a file is just after close(2) until
	// the kernel's RELEASE (sent in the background) arrives: changes made behind the mount
	// in the meantime are someone else's all the same.
	t.Run("in place while open for writing", func(t *testing.T) {
		mtime := cached("openw")
		f, err := os.OpenFile(in(mp, "openw"), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteAt(old[:10], 0); err != nil {
			t.Fatal(err)
		}
		// The write moved the modification time: the kernel drops its pages when it sees
		// that. Let it see it, and read the file again.
		if b, err := os.ReadFile(in(mp, "openw")); err != nil || !bytes.Equal(b, old) {
			t.Fatalf("read back after the write: %v", err)
		}
		if mtime, err = cipherMtime(bv.path(t, rel("openw"))); err != nil {
			t.Fatal(err)
		}
		inPlace("openw", mtime)
		showsWithin(t, "file rewritten while open for writing", contentsState(in(mp, "openw"), old, next))
	})
	// Rewritten behind the mount, then changed through it before the watcher saw the
	// rewrite: the file's change time is then the mount's own, but the kernel's pages are
	// still the old ones (a change of mode leaves the modification time, by which the kernel
	// would drop them itself).
	t.Run("in place then chmod", func(t *testing.T) {
		mtime := cached("chmodded")
		inPlace("chmodded", mtime)
		if err := os.Chmod(in(mp, "chmodded"), 0o600); err != nil {
			t.Fatal(err)
		}
		showsWithin(t, "file rewritten then chmodded", contentsState(in(mp, "chmodded"), old, next))
	})
	t.Run("create", func(t *testing.T) {
		absent("created")
		showsWithin(t, "listing", listedState(filepath.Join(mp, sub), nm("created"), false))
		if err := os.WriteFile(in(tool, "created"), next, 0o644); err != nil {
			t.Fatal(err)
		}
		showsWithin(t, "new file", contentsState(in(mp, "created"), nil, next))
		showsWithin(t, "new file listed", listedState(filepath.Join(mp, sub), nm("created"), true))
	})
	t.Run("delete", func(t *testing.T) {
		cached("deleted")
		showsWithin(t, "listing", listedState(filepath.Join(mp, sub), nm("deleted"), true))
		if err := os.Remove(bv.path(t, rel("deleted"))); err != nil {
			t.Fatal(err)
		}
		showsWithin(t, "deleted file", existsState(in(mp, "deleted"), false, false))
		showsWithin(t, "deleted file listed", listedState(filepath.Join(mp, sub), nm("deleted"), false))
	})
	t.Run("rename", func(t *testing.T) {
		cached("from")
		absent("to")
		if err := os.Rename(in(tool, "from"), in(tool, "to")); err != nil {
			t.Fatal(err)
		}
		showsWithin(t, "old name", existsState(in(mp, "from"), false, false))
		showsWithin(t, "new name", contentsState(in(mp, "to"), nil, old))
	})
	t.Run("mkdir", func(t *testing.T) {
		absent("dir")
		if err := os.Mkdir(in(tool, "dir"), 0o755); err != nil {
			t.Fatal(err)
		}
		showsWithin(t, "new directory", existsState(in(mp, "dir"), true, true))
	})
	t.Run("rmdir", func(t *testing.T) {
		if err := os.Mkdir(in(mp, "gone"), 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := os.ReadDir(in(mp, "gone")); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(in(tool, "gone")); err != nil {
			t.Fatal(err)
		}
		showsWithin(t, "removed directory", existsState(in(mp, "gone"), false, true))
	})
}

// TestChangesByAnotherProcess: the watch as it runs outside tests, where only the mount's
// own events are dropped (by process ID; the other tests count the test's own changes as
// someone else's, watchOwn). Another process replaces a file by renaming a new one over it
// (rsync -t), rewrites one in place keeping its size and modification time (rsync --inplace
// -t), and (where a name is a file, not a folder) makes one and deletes one; with an hour's
// cache times, the mount shows each only if the kernel was told. The new contents are written
// through a second mount, under other names, which is the process's own doing and raises
// nothing.
func TestChangesByAnotherProcess(t *testing.T) {
	for _, f := range behindVaults() {
		t.Run(f.name, func(t *testing.T) {
			bv := f.make(t)
			name := func(n string) string {
				if f.long {
					return strings.Repeat("long-", 40) + n
				}
				return n
			}
			mp, _ := mountTest(t, bv.v, Options{cacheTimeout: time.Hour})
			tool, _ := mountTest(t, bv.v, Options{SharedStorage: true})
			old := bytes.Repeat([]byte("old "), bv.bs)
			next := bytes.Repeat([]byte("NEW "), bv.bs)
			for _, n := range []string{"renamed", "inplace", "deleted"} {
				if err := os.WriteFile(filepath.Join(mp, name(n)), old, 0o644); err != nil {
					t.Fatal(err)
				}
				if _, err := os.ReadFile(filepath.Join(mp, name(n))); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := os.Lstat(filepath.Join(mp, name("made"))); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("made before it is: %v", err)
			}
			for _, n := range []string{"new1", "new2", "new3"} {
				if err := os.WriteFile(filepath.Join(tool, name(n)), next, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p := func(n string) string { return bv.path(t, name(n)) }
			mtime, err := cipherMtime(p("inplace"))
			if err != nil {
				t.Fatal(err)
			}
			script := fmt.Sprintf(`set -e; mv "$1" "$2"; cat "$3" > "$4"; touch -m -d @%d.%09d "$4"`, mtime.Unix(), mtime.Nanosecond())
			args := []string{p("new1"), p("renamed"), p("new2"), p("inplace")}
			if !f.long {
				script += `; mv "$5" "$6"; rm "$7"`
				args = append(args, p("new3"), p("made"), p("deleted"))
			}
			if out, err := exec.Command("sh", append([]string{"-c", script, "sh"}, args...)...).CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			showsWithin(t, "replaced by a rename", contentsState(filepath.Join(mp, name("renamed")), old, next))
			showsWithin(t, "rewritten in place", contentsState(filepath.Join(mp, name("inplace")), old, next))
			if !f.long {
				showsWithin(t, "made", existsState(filepath.Join(mp, name("made")), true, false))
				showsWithin(t, "deleted", existsState(filepath.Join(mp, name("deleted")), false, false))
			}
		})
	}
}

// TestOwnChangesNotNotified: the mount's own changes raise fanotify events in the cipherdir
// too, and cost no notification: the kernel knows them already. Files are created, written,
// read, changed and removed through the mount (440 changes); then another process makes a
// file behind it, twice (the second once the first was notified, so that every earlier event
// has been acted on), and those two are all the watch tells the kernel. On each format the watch
// follows; Cryptomator's files of long names (in .c9s folders, watched too) as well.
func TestOwnChangesNotNotified(t *testing.T) {
	for _, f := range behindVaults() {
		t.Run(f.name, func(t *testing.T) { ownChangesNotNotified(t, f.make(t), f.long) })
	}
}

func ownChangesNotNotified(t *testing.T, bv behindVault, long bool) {
	reqs := &requestLog{}
	_, xattrs := bv.v.(GocryptfsVolume)
	prefix := ""
	if long {
		prefix = strings.Repeat("long-", 40)
	}
	mp, _ := mountTest(t, bv.v, Options{Debug: true, Logger: log.New(reqs, "", 0)})
	for _, dir := range []string{mp, filepath.Join(mp, "d")} {
		if dir != mp {
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 20 {
			p := filepath.Join(dir, fmt.Sprint(prefix, "f", i))
			if err := os.WriteFile(p, bytes.Repeat([]byte{byte(i)}, 3*bv.bs), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := os.ReadFile(p); err != nil {
				t.Fatal(err)
			}
			ops := []error{
				os.Chmod(p, 0o600),
				os.Chtimes(p, time.Unix(1e9, 0), time.Unix(1e9, 0)),
				os.Truncate(p, 100),
			}
			if xattrs {
				ops = append(ops, unix.Setxattr(p, "user.note", []byte("v"), 0), unix.Removexattr(p, "user.note"))
			}
			ops = append(ops,
				os.Rename(p, p+".renamed"),
				os.Symlink("target", p+".link"),
				os.Mkdir(p+".dir", 0o700),
			)
			switch {
			case i%2 == 0:
				ops = append(ops, os.Remove(p+".renamed"), os.Remove(p+".link"), os.Remove(p+".dir"))
			case xattrs:
				ops = append(ops, unix.Setxattr(p+".renamed", "user.last", []byte("v"), 0))
			default:
				ops = append(ops, os.Chmod(p+".renamed", 0o640))
			}
			if err := errors.Join(ops...); err != nil {
				t.Fatal(err)
			}
		}
	}
	notified := func(name string) bool {
		reqs.mu.Lock()
		defer reqs.mu.Unlock()
		for _, l := range reqs.lines {
			if strings.Contains(l, "NOTIFY_INVAL_ENTRY") && strings.Contains(l, name) {
				return true
			}
		}
		return false
	}
	for _, sentinel := range []string{"sentinel1", "sentinel2"} {
		if out, err := exec.Command("touch", bv.path(t, sentinel)).CombinedOutput(); err != nil {
			t.Fatalf("touch: %v %s", err, out)
		}
		for deadline := time.Now().Add(10 * time.Second); !notified(sentinel); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s behind the mount never notified", sentinel)
			}
		}
	}
	reqs.mu.Lock()
	defer reqs.mu.Unlock()
	// Each sentinel costs its name and its directory's attributes (the second sentinel's
	// may be on its way still).
	entries, inodes := 0, -2
	for _, l := range reqs.lines {
		switch {
		case strings.Contains(l, "Response"):
			continue
		case strings.Contains(l, "NOTIFY_INVAL_ENTRY") && !strings.Contains(l, "sentinel"):
			entries++
		case strings.Contains(l, "NOTIFY_INVAL_INODE"):
			inodes++
		default:
			continue
		}
		t.Log(strings.TrimSpace(l))
	}
	// Apart from the watch, a directory's attributes are told once after the first read of
	// a file in it that reaches the mount (noteRead): one each for the two directories, if
	// the kernel dropped a page it had.
	if entries > 0 || inodes > 2 {
		t.Errorf("the mount's own changes cost %d entry and %d inode notifications", entries, max(inodes, 0))
	}
}

// TestPastTheWatchLimit: where no watch can be added (here past a limit of one, the root's),
// the kernel caches entries and attributes for cacheTimeout only, so a change behind the
// mount still shows within about that; in the watched root, at once. (Polled for half a
// second more than the timeout: the kernel counts it from when it cached the entry.)
func TestPastTheWatchLimit(t *testing.T) {
	v := volumeOf(realVault(t, "", crypto.AESGCM))
	mp, m := mountTest(t, v, Options{maxWatches: 1, watchOwn: true})
	if err := os.Mkdir(filepath.Join(mp, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"f", "sub/f"} {
		if err := os.WriteFile(filepath.Join(mp, name), []byte("contents"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !m.root.watched() || m.root.GetChild("sub").Operations().(*node).watched() {
		t.Fatal("the root should be watched and sub not")
	}
	for _, name := range []string{"f", "sub/f"} {
		if _, err := os.Stat(filepath.Join(mp, name)); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(cipherPath(t, v, name)); err != nil {
			t.Fatal(err)
		}
	}
	showsWithin(t, "deleted in the watched root", existsState(filepath.Join(mp, "f"), false, false))
	deadline := time.Now().Add(cacheTimeout + cacheTimeout/2)
	for _, err := os.Stat(filepath.Join(mp, "sub/f")); err == nil; _, err = os.Stat(filepath.Join(mp, "sub/f")) {
		if time.Now().After(deadline) {
			t.Fatal("deleted in an unwatched directory: still there")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// cipherMtime returns the modification time of the cipher file p.
func cipherMtime(p string) (time.Time, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return time.Time{}, err
	}
	return fi.ModTime(), nil
}

// fanotifyGroups counts this process's fanotify descriptors.
func fanotifyGroups(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if l, _ := os.Readlink("/proc/self/fd/" + e.Name()); strings.Contains(l, "fanotify") {
			n++
		}
	}
	return n
}

// TestOneFanotifyGroup: every mount of the process watches through one fanotify group
// (fanotifyHub): the user's 128 groups are shared with every other program. Each mount
// still sees the changes behind it. Two mounts of one cipherdir watch the same directories,
// which the hub marks once: unmounting one leaves the other's marks in place.
func TestOneFanotifyGroup(t *testing.T) {
	v1 := volumeOf(realVault(t, "", crypto.AESGCM))
	v2 := volumeOf(realVault(t, "", crypto.AESGCM))
	mp1, _ := mountTest(t, v1, Options{watchOwn: true})
	mp2, _ := mountTest(t, v2, Options{watchOwn: true})
	mp3 := t.TempDir()
	m3, err := Mount(mp3, v2, Options{Logger: testLogger(t), watchOwn: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := fanotifyGroups(t); n != 1 {
		t.Errorf("%d fanotify groups for three mounts, want 1", n)
	}
	deletedBehind := func(what, mp string, v GocryptfsVolume, name string) {
		t.Helper()
		p := filepath.Join(mp, name)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(p); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(cipherPath(t, v, name)); err != nil {
			t.Fatal(err)
		}
		showsWithin(t, what, existsState(p, false, false))
	}
	deletedBehind("deleted behind the first mount", mp1, v1, "f")
	deletedBehind("deleted behind the second mount", mp2, v2, "f")
	deletedBehind("deleted behind the third mount", mp3, v2, "g")
	if err := unmount(m3); err != nil {
		t.Fatal(err)
	}
	deletedBehind("deleted behind the second mount, the third one gone", mp2, v2, "h")
}

// TestParseEvents: the records of a read, as Linux lays them out: someone else's change of an
// entry, one of a directory itself (named "." or by a record without a name), the process's
// own (dropped unless asked for), a lost-events notice, and a record cut short (ignored,
// with what follows it).
func TestParseEvents(t *testing.T) {
	const self = 42
	record := func(pid int32, mask uint64, infoType byte, handle []byte, name string) []byte {
		info := []byte{infoType, 0, 0, 0}
		info = binary.NativeEndian.AppendUint32(info, 7) // fsid
		info = binary.NativeEndian.AppendUint32(info, 8)
		info = binary.NativeEndian.AppendUint32(info, uint32(len(handle)))
		info = binary.NativeEndian.AppendUint32(info, 1) // handle type
		info = append(append(info, handle...), name...)
		if name != "" {
			info = append(info, 0)
		}
		for len(info)%4 != 0 {
			info = append(info, 0)
		}
		binary.NativeEndian.PutUint16(info[2:], uint16(len(info)))
		m := unix.FanotifyEventMetadata{Event_len: uint32(24 + len(info)), Vers: 3, Metadata_len: 24, Mask: mask, Fd: -1, Pid: pid}
		b := unsafe.Slice((*byte)(unsafe.Pointer(&m)), 24)
		return append(slices.Clone(b), info...)
	}
	dir := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	key := handleKey([2]int32{7, 8}, 1, dir)
	var b []byte
	b = append(b, record(0, unix.FAN_CREATE, unix.FAN_EVENT_INFO_TYPE_DFID_NAME, dir, "new")...)
	b = append(b, record(99, unix.FAN_ATTRIB|unix.FAN_ONDIR, unix.FAN_EVENT_INFO_TYPE_DFID_NAME, dir, ".")...)
	b = append(b, record(0, unix.FAN_ATTRIB|unix.FAN_ONDIR, unix.FAN_EVENT_INFO_TYPE_DFID, dir, "")...)
	b = append(b, record(self, unix.FAN_MODIFY, unix.FAN_EVENT_INFO_TYPE_DFID_NAME, dir, "mine")...)
	overflow := unix.FanotifyEventMetadata{Event_len: 24, Vers: 3, Metadata_len: 24, Mask: unix.FAN_Q_OVERFLOW, Fd: -1}
	b = append(b, unsafe.Slice((*byte)(unsafe.Pointer(&overflow)), 24)...)
	cut := record(0, unix.FAN_DELETE, unix.FAN_EVENT_INFO_TYPE_DFID_NAME, dir, "cut")
	b = append(b, cut[:len(cut)-4]...)

	want := []event{
		{key, "new", unix.FAN_CREATE, false},
		{key, ".", unix.FAN_ATTRIB | unix.FAN_ONDIR, false},
		{key, ".", unix.FAN_ATTRIB | unix.FAN_ONDIR, false},
		{"", "", contentEvents, false},
	}
	if got := parseEvents(b, self, false, nil); !slices.Equal(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	want = slices.Insert(want, 3, event{key, "mine", unix.FAN_MODIFY, true})
	if got := parseEvents(b, self, true, nil); !slices.Equal(got, want) {
		t.Errorf("keeping its own: got %+v\nwant %+v", got, want)
	}
}
