package vfs

// Conformance tests for the classes a POSIX file system test suite (pjdfstest) and a hostile
// cipherdir find: deep trees, long names, modes, setuid clearing, symlink times, a full disk,
// entries on another device, and a directory swapped for a symlink.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/testdeps"
	"github.com/vaultui/vaultui/vault"
	"github.com/vaultui/vaultui/vault/format"
	"github.com/vaultui/vaultui/vault/gocryptfs"
	"github.com/vaultui/vaultui/vault/layout"
)

// realVault creates a vault with a gocryptfs.conf in dir (a temp dir when ""), so the offline
// tools (fsck, export) can check what the mount wrote, and returns it unlocked.
func realVault(t testing.TB, dir string, c crypto.CipherID) *gocryptfs.Vault {
	t.Helper()
	if dir == "" {
		dir = filepath.Join(t.TempDir(), "cipher")
	}
	pw := []byte("test password")
	if _, err := vault.Create(context.Background(), dir, pw, vault.CreateOptions{Cipher: c, ScryptLogN: 10}); err != nil {
		t.Fatal(err)
	}
	v, err := gocryptfs.Unlock(context.Background(), dir, pw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	return v
}

func volumeOf(v *gocryptfs.Vault) GocryptfsVolume {
	return GocryptfsVolume{Dir: v.Dir, Content: v.Content, Names: v.Names, PerDirIV: v.Config.Has(gocryptfs.FlagDirIV), XattrNames: v.XattrNames}
}

// facadeOf is v (made by realVault) unlocked again through package vault, whose Volume
// lists and settles conflicts.
func facadeOf(t testing.TB, v *gocryptfs.Vault) vault.Volume {
	t.Helper()
	vol, err := vault.UnlockVolume(context.Background(), v.Dir, []byte("test password"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(vol.Close)
	return vol
}

// fsckClean fails the test unless the offline fsck finds nothing.
func fsckClean(t testing.TB, v *gocryptfs.Vault) {
	t.Helper()
	problems, err := vault.FsckVolume(context.Background(), v.Volume(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("fsck: %s", p)
	}
}

func needRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (other uids, tmpfs and bind mounts)")
	}
}

// cipherDepth returns the length of the longest cipher path below dir, found by descending
// with descriptors (string paths would fail beyond PATH_MAX, which is the point).
func cipherDepth(t testing.TB, dirfd int) int {
	names, err := unix.Open("/proc/self/fd/"+fmt.Sprint(dirfd), unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(names)
	buf := make([]byte, 8192)
	n, _ := unix.ReadDirent(names, buf)
	_, _, ents := unix.ParseDirent(buf[:n], -1, nil)
	best := 0
	for _, e := range ents {
		cfd, err := unix.Openat(dirfd, e, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
		if err != nil {
			best = max(best, len(e)+1)
			continue
		}
		best = max(best, len(e)+1+cipherDepth(t, cfd))
		unix.Close(cfd)
	}
	return best
}

// A tree whose plaintext paths are legal but whose cipher paths exceed PATH_MAX can be made,
// used, checked offline and removed.
func TestDeepTree(t *testing.T) {
	v := realVault(t, "", crypto.AEGIS)
	mp, _ := mountTest(t, volumeOf(v), Options{})
	seg := strings.Repeat("d", 127)
	p := mp
	for i := 0; i < 25; i++ {
		p = filepath.Join(p, fmt.Sprintf("%s%02d", seg[:125], i))
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatalf("mkdir at depth %d (%d plaintext bytes): %v", i, len(p)-len(mp), err)
		}
	}
	data := bytes.Repeat([]byte("deep "), 3000)
	f := filepath.Join(p, "file")
	if err := os.WriteFile(f, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(f, filepath.Join(p, "renamed")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(p, "renamed"), filepath.Join(p, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("renamed", filepath.Join(p, "sym")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(p, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(p, "renamed"), 0o640); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(filepath.Join(p, "renamed"), now, now); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(p, "sym")); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("reading through the symlink: %v", err)
	}
	if err := os.Truncate(filepath.Join(p, "link"), 100); err != nil {
		t.Fatal(err)
	}

	root, err := unix.Open(v.Dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(root)
	if d := cipherDepth(t, root); d <= 4096 {
		t.Fatalf("the cipher tree is only %d bytes deep; the test must go beyond PATH_MAX", d)
	}
	fsckClean(t, v)
	out := filepath.Join(t.TempDir(), "export")
	if err := vault.ExportVolume(context.Background(), v.Volume(), out, vault.ExportOptions{}); err != nil {
		t.Fatalf("export: %v", err)
	}
	if err := os.RemoveAll(filepath.Join(mp, seg[:125]+"00")); err != nil {
		t.Fatalf("rm -rf: %v", err)
	}
	if ents, _ := os.ReadDir(v.Dir); len(ents) != 2 { // gocryptfs.conf, gocryptfs.diriv
		t.Fatalf("cipherdir holds %d entries after rm -rf, want 2", len(ents))
	}
}

// Names over 255 bytes are ENAMETOOLONG in every operation; 255 bytes work.
func TestNameTooLong(t *testing.T) {
	for _, long := range []bool{false, true} {
		t.Run(fmt.Sprintf("encrypted=%v", long), func(t *testing.T) {
			mp, _ := mountTest(t, testVolume(t, crypto.AESGCM, long), Options{})
			ok, bad := strings.Repeat("n", 255), strings.Repeat("n", 256)
			ops := map[string]func(name string) error{
				"create":  func(n string) error { return os.WriteFile(filepath.Join(mp, n), nil, 0o644) },
				"mkdir":   func(n string) error { return os.Mkdir(filepath.Join(mp, n), 0o755) },
				"symlink": func(n string) error { return os.Symlink("x", filepath.Join(mp, n)) },
				"mknod":   func(n string) error { return unix.Mkfifo(filepath.Join(mp, n), 0o644) },
				"link": func(n string) error {
					os.WriteFile(filepath.Join(mp, "src"), nil, 0o644)
					return os.Link(filepath.Join(mp, "src"), filepath.Join(mp, n))
				},
				"rename": func(n string) error {
					os.WriteFile(filepath.Join(mp, "src2"), nil, 0o644)
					return os.Rename(filepath.Join(mp, "src2"), filepath.Join(mp, n))
				},
			}
			for op, do := range ops {
				if err := do(bad); !errors.Is(err, syscall.ENAMETOOLONG) {
					t.Errorf("%s with a 256-byte name: %v, want ENAMETOOLONG", op, err)
				}
				if err := do(ok); err != nil {
					t.Errorf("%s with a 255-byte name: %v", op, err)
				}
				os.RemoveAll(filepath.Join(mp, ok))
			}
			if _, err := os.Lstat(filepath.Join(mp, bad)); !errors.Is(err, syscall.ENAMETOOLONG) {
				t.Errorf("lstat of a 256-byte name: %v, want ENAMETOOLONG", err)
			}
		})
	}
}

// Modes are reported as created: mode 0 stays 0, and only the caller's umask applies.
func TestCreateModes(t *testing.T) {
	mp, _ := mountTest(t, testVolume(t, crypto.AESGCM, true), Options{})
	fd, err := unix.Open(filepath.Join(mp, "zero"), unix.O_CREAT|unix.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(fd)
	if err := unix.Mkdir(filepath.Join(mp, "zerodir"), 0); err != nil {
		t.Fatal(err)
	}
	// The caller (a shell) has umask 0; this test process, the server, keeps its own.
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	// The shell changes into the mount itself: a child that does it between fork and exec
	// can deadlock against this process, which serves the mount (the same below).
	sh := exec.Command("sh", "-c", `cd "$1" && umask 0 && : > f && mkdir d && mkfifo p && mkdir -m 1777 sticky`, "sh", mp)
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for name, want := range map[string]os.FileMode{
		"zero": 0, "zerodir": os.ModeDir, "f": 0o666, "d": os.ModeDir | 0o777,
		"p": os.ModeNamedPipe | 0o666, "sticky": os.ModeDir | os.ModeSticky | 0o777,
	} {
		st, err := os.Lstat(filepath.Join(mp, name))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode() != want {
			t.Errorf("%s: mode %v, want %v", name, st.Mode(), want)
		}
	}
	// An empty directory with mode 0 can still be removed, as on a local file system.
	if err := os.Remove(filepath.Join(mp, "zerodir")); err != nil {
		t.Errorf("rmdir of a mode-0 directory: %v", err)
	}
}

// A write by a user other than root drops setuid (and setgid on a group-executable file), in
// every way the kernel can send it: a plain write, O_TRUNC, truncate.
func TestSetuidCleared(t *testing.T) {
	needRoot(t)
	mp, _ := mountTest(t, testVolume(t, crypto.AESGCM, true), Options{AllowOther: true})
	// The other user must reach the mount point through the test's private temp dirs.
	for d := filepath.Dir(mp); d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	for _, c := range []struct{ name, cmd string }{
		{"write", "echo x >> f"},
		{"otrunc", ": > f"},
		{"truncate", "truncate -s 1 f"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := filepath.Join(mp, "f")
			os.Remove(f)
			if err := os.WriteFile(f, []byte("hello"), 0o777); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(f, 65534, 65534); err != nil {
				t.Fatal(err)
			}
			setSuid := func() {
				t.Helper()
				if err := syscall.Chmod(f, 0o6777); err != nil {
					t.Fatal(err)
				}
				if st, _ := os.Stat(f); st.Mode()&(os.ModeSetuid|os.ModeSetgid) != os.ModeSetuid|os.ModeSetgid {
					t.Fatalf("chmod 6777 gave %v", st.Mode())
				}
			}
			setSuid()
			cmd := exec.Command("sh", "-c", `cd "$1" && `+c.cmd, "sh", mp)
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65533, Gid: 65533}}
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s as uid 65533: %v: %s", c.cmd, err, out)
			}
			st, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
				t.Errorf("after %q by another user the mode is %v; setuid/setgid must be cleared", c.cmd, st.Mode())
			}
			// Root (CAP_FSETID) keeps them.
			setSuid()
			if err := os.WriteFile(f, []byte("root"), 0o777); err != nil {
				t.Fatal(err)
			}
			if st, _ := os.Stat(f); st.Mode()&os.ModeSetuid == 0 {
				t.Errorf("a write by root cleared setuid: %v", st.Mode())
			}
		})
	}
}

// Times of a symlink itself can be set and read back without touching its target.
func TestSymlinkTimes(t *testing.T) {
	mp, _ := mountTest(t, testVolume(t, crypto.AESGCM, true), Options{})
	target := filepath.Join(mp, "target")
	os.WriteFile(target, nil, 0o644)
	link := filepath.Join(mp, "link")
	if err := os.Symlink("target", link); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(target)
	ts := []unix.Timespec{{Sec: 1000000, Nsec: 5}, {Sec: 2000000, Nsec: 7}}
	if err := unix.UtimesNanoAt(unix.AT_FDCWD, link, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(link, &st); err != nil {
		t.Fatal(err)
	}
	if st.Atim != ts[0] || st.Mtim != ts[1] {
		t.Errorf("symlink times: atime %v mtime %v, want %v %v", st.Atim, st.Mtim, ts[0], ts[1])
	}
	if after, _ := os.Stat(target); !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("setting the link's times changed the target's: %v -> %v", before.ModTime(), after.ModTime())
	}
	if got, err := os.Readlink(link); err != nil || got != "target" {
		t.Errorf("readlink = %q, %v", got, err)
	}
}

// Writing until the disk is full, from several writers, then appending to and rewriting files
// that existed before, leaves every file readable and fsck clean: a write that cannot be
// stored fails with ENOSPC and changes nothing.
func TestDiskFull(t *testing.T) {
	needRoot(t)
	testdeps.Need(t, testdeps.FUSE)
	for _, c := range []crypto.CipherID{crypto.AEGIS, crypto.AESGCM} {
		t.Run(string(c), func(t *testing.T) {
			tmpfs := t.TempDir()
			if err := unix.Mount("tmpfs", tmpfs, "tmpfs", 0, "size=6m"); err != nil {
				t.Skipf("cannot mount a small tmpfs: %v", err)
			}
			t.Cleanup(func() { unix.Unmount(tmpfs, unix.MNT_DETACH) })
			v := realVault(t, filepath.Join(tmpfs, "cipher"), c)
			mp, _ := mountTest(t, volumeOf(v), Options{})

			// Files that exist before the disk fills, with a partial last block each.
			old := map[string][]byte{}
			for i := 0; i < 4; i++ {
				name := fmt.Sprintf("old%d", i)
				old[name] = bytes.Repeat([]byte{byte('a' + i)}, 5000+i*1000)
				if err := os.WriteFile(filepath.Join(mp, name), old[name], 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// Several writers fill the disk with odd-sized writes.
			var wg sync.WaitGroup
			for w := 0; w < 3; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					f, err := os.Create(filepath.Join(mp, fmt.Sprintf("fill%d", w)))
					if err != nil {
						return
					}
					defer f.Close()
					buf := bytes.Repeat([]byte{byte('0' + w)}, 12345+w*1111)
					for {
						if _, err := f.Write(buf); err != nil {
							if !errors.Is(err, syscall.ENOSPC) {
								t.Errorf("writer %d: %v, want ENOSPC", w, err)
							}
							return
						}
					}
				}(w)
			}
			wg.Wait()
			// Now append to and rewrite the old files on the full disk.
			for name, want := range old {
				f, err := os.OpenFile(filepath.Join(mp, name), os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					t.Fatal(err)
				}
				extra := bytes.Repeat([]byte("Z"), 70000)
				n, err := f.Write(extra)
				if err != nil && !errors.Is(err, syscall.ENOSPC) {
					t.Errorf("%s: append: %v, want success or ENOSPC", name, err)
				}
				f.Close()
				old[name] = append(want, extra[:n]...)
			}
			// And rewrite each from the start with more than it holds: whole blocks of old
			// content would be replaced, so the disk must refuse it before any changes.
			for name, want := range old {
				f, err := os.OpenFile(filepath.Join(mp, name), os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				over := bytes.Repeat([]byte("R"), len(want)+200000)
				if _, err := f.WriteAt(over, 0); err == nil {
					old[name] = over
				} else if !errors.Is(err, syscall.ENOSPC) {
					t.Errorf("%s: rewrite: %v, want success or ENOSPC", name, err)
				}
				f.Close()
			}
			// Writes past the end leave holes (gocryptfs format): into the old files, and into
			// new empty ones, which need their header as well as the block written.
			sparse := func(name string, want []byte, off int) {
				f, err := os.OpenFile(filepath.Join(mp, name), os.O_WRONLY|os.O_CREATE, 0o644)
				if err != nil {
					if !errors.Is(err, syscall.ENOSPC) {
						t.Errorf("%s: create: %v", name, err)
					}
					return
				}
				defer f.Close()
				data := bytes.Repeat([]byte("S"), 9000)
				if _, err := f.WriteAt(data, int64(off)); err == nil {
					want = append(append(want, make([]byte, off-len(want))...), data...)
				} else if !errors.Is(err, syscall.ENOSPC) {
					t.Errorf("%s: write past the end: %v, want success or ENOSPC", name, err)
				}
				old[name] = want
			}
			for name, want := range old {
				sparse(name, want, len(want)+3*4096+100)
			}
			for i := 0; i < 3; i++ {
				sparse(fmt.Sprintf("sparse%d", i), nil, 1<<20+77)
			}
			// Every file reads back in full: the old ones as they were (plus what was accepted),
			// the fillers with no block that fails authentication.
			check := func(when string) {
				ents, err := os.ReadDir(mp)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range ents {
					got, err := os.ReadFile(filepath.Join(mp, e.Name()))
					if err != nil {
						t.Errorf("%s: %s: %v", when, e.Name(), err)
						continue
					}
					if want, ok := old[e.Name()]; ok && !bytes.Equal(got, want) {
						t.Errorf("%s: %s: %d bytes, want %d as written", when, e.Name(), len(got), len(want))
					}
				}
			}
			check("on the full disk")
			fsckClean(t, v)
			// Free space and make sure the mount works normally again.
			for w := 0; w < 3; w++ {
				os.Remove(filepath.Join(mp, fmt.Sprintf("fill%d", w)))
			}
			if err := os.WriteFile(filepath.Join(mp, "after"), []byte("space again"), 0o644); err != nil {
				t.Fatal(err)
			}
			check("after freeing space")
			fsckClean(t, v)
		})
	}
}

// Entries on another file system inside the cipherdir (a bind mount) never share a node with
// entries of the root file system, even when their raw inode numbers are equal.
func TestOtherDevice(t *testing.T) {
	needRoot(t)
	testdeps.Need(t, testdeps.FUSE)
	base := t.TempDir()
	cipher := filepath.Join(base, "cipher")
	os.Mkdir(cipher, 0o755)
	if err := unix.Mount("tmpfs", cipher, "tmpfs", 0, "size=8m"); err != nil {
		t.Skipf("cannot mount tmpfs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(cipher, unix.MNT_DETACH) })
	v := realVault(t, cipher, crypto.AESGCM)
	vol := volumeOf(v)
	mp, _ := mountTest(t, vol, Options{})
	if err := os.Mkdir(filepath.Join(mp, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Mount a second tmpfs over sub's cipher directory, with sub's IV in it.
	var subCipher string
	ents, _ := os.ReadDir(cipher)
	for _, e := range ents {
		if e.IsDir() {
			subCipher = filepath.Join(cipher, e.Name())
		}
	}
	iv, err := os.ReadFile(filepath.Join(subCipher, crypto.DirIVName))
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", subCipher, "tmpfs", 0, "size=8m"); err != nil {
		t.Skipf("cannot mount tmpfs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(subCipher, unix.MNT_DETACH) })
	if err := os.WriteFile(filepath.Join(subCipher, crypto.DirIVName), iv, 0o440); err != nil {
		t.Fatal(err)
	}
	time.Sleep(dirCacheTTL + 100*time.Millisecond) // the mount may hold sub's old descriptor
	// Make files on both sides until two share a raw inode number.
	raw := map[uint64]string{}
	var a, b string
	for i := 0; i < 300 && a == ""; i++ {
		for _, dir := range []string{"", "sub"} {
			name := filepath.Join(dir, fmt.Sprintf("f%d", i))
			if err := os.WriteFile(filepath.Join(mp, name), []byte(name), 0o644); err != nil {
				t.Fatal(err)
			}
			ino := rawIno(t, v, name)
			if other, ok := raw[ino]; ok && filepath.Dir(other) != filepath.Dir(name) {
				a, b = other, name
			}
			raw[ino] = name
		}
	}
	if a == "" {
		t.Skip("the two tmpfs never gave equal inode numbers; nothing to tell apart")
	}
	sa, _ := os.Stat(filepath.Join(mp, a))
	sb, _ := os.Stat(filepath.Join(mp, b))
	if sa.Sys().(*syscall.Stat_t).Ino == sb.Sys().(*syscall.Stat_t).Ino {
		t.Fatalf("%s and %s (raw inode numbers equal on two devices) share inode number %d in the mount", a, b, sa.Sys().(*syscall.Stat_t).Ino)
	}
	for _, name := range []string{a, b} {
		if got, err := os.ReadFile(filepath.Join(mp, name)); err != nil || string(got) != name {
			t.Errorf("%s reads %q, %v", name, got, err)
		}
	}
}

// rawIno returns the cipher file's own inode number for plaintext path name.
func rawIno(t testing.TB, v *gocryptfs.Vault, name string) uint64 {
	t.Helper()
	dir := v.Dir
	for _, part := range strings.Split(name, "/") {
		iv, err := gocryptfs.ReadDirIV(dir)
		if err != nil {
			t.Fatal(err)
		}
		stored, _, _, err := v.Names.StoredName(part, iv)
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(dir, stored)
	}
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// Someone who can write the cipherdir swaps a directory for a symlink to elsewhere: the mount
// never follows it.
func TestSymlinkSwap(t *testing.T) {
	v := testVolume(t, crypto.AESGCM, true)
	mp, _ := mountTest(t, v, Options{})
	if err := os.Mkdir(filepath.Join(mp, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	var cdir string
	ents, _ := os.ReadDir(v.CipherDir())
	for _, e := range ents {
		if e.IsDir() {
			cdir = filepath.Join(v.CipherDir(), e.Name())
		}
	}
	outside := t.TempDir()
	// The attacker moves the real directory away and puts a symlink to a copy elsewhere.
	iv, _ := os.ReadFile(filepath.Join(cdir, crypto.DirIVName))
	os.WriteFile(filepath.Join(outside, crypto.DirIVName), iv, 0o440)
	if err := os.Rename(cdir, cdir+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, cdir); err != nil {
		t.Fatal(err)
	}
	time.Sleep(dirCacheTTL + 100*time.Millisecond)
	os.WriteFile(filepath.Join(mp, "d", "planted"), []byte("x"), 0o644)
	os.Mkdir(filepath.Join(mp, "d", "planted-dir"), 0o755)
	if ents, _ := os.ReadDir(outside); len(ents) != 1 {
		t.Fatalf("the mount followed a symlink in the cipherdir: %d entries appeared outside it", len(ents)-1)
	}
}

// Extended attributes: stored encrypted under user.gocryptfs.*, with the create/replace flags,
// listing, removal and size queries of a local file system; through the *xattrat calls and
// through /proc paths (kernels before 6.13).
func TestXattrs(t *testing.T) {
	t.Run("xattrat", func(t *testing.T) {
		if !probeXattrAt(unix.AT_FDCWD) {
			t.Skip("this kernel has no getxattrat (Linux 6.13); the /proc paths are tested below")
		}
		testXattrs(t)
	})
	t.Run("proc paths", func(t *testing.T) {
		xattrAtDisabled.Store(true)
		defer xattrAtDisabled.Store(false)
		testXattrs(t)
	})
}

// The probe finds the *xattrat calls where the kernel has them, or every mount would quietly
// take the slower path.
func TestXattrAtProbe(t *testing.T) {
	var u unix.Utsname
	unix.Uname(&u)
	var major, minor int
	fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &major, &minor)
	if major < 6 || major == 6 && minor < 13 {
		t.Skipf("kernel %d.%d has no getxattrat (Linux 6.13)", major, minor)
	}
	if !probeXattrAt(unix.AT_FDCWD) {
		t.Fatalf("kernel %d.%d: probeXattrAt found no getxattrat", major, minor)
	}
}

func testXattrs(t *testing.T) {
	v := realVault(t, "", crypto.AEGIS)
	mp, _ := mountTest(t, volumeOf(v), Options{})
	f := filepath.Join(mp, "f")
	os.WriteFile(f, []byte("data"), 0o644)
	os.Mkdir(filepath.Join(mp, "d"), 0o755)
	// A symlink's attributes are its own: the mount must not follow the cipher symlink. (Its
	// target is an encrypted string, so following it fails with ENOENT. A security.* name,
	// because the kernel itself answers user.* on symlinks with ENODATA.)
	link := filepath.Join(mp, "link")
	os.Symlink("f", link)
	if _, err := unix.Lgetxattr(link, "security.vaultui-test", make([]byte, 64)); !errors.Is(err, unix.ENODATA) {
		t.Errorf("lgetxattr of a symlink: %v, want ENODATA", err)
	}
	if _, err := unix.Llistxattr(link, make([]byte, 64)); err != nil {
		t.Errorf("llistxattr of a symlink: %v", err)
	}
	// (Removing answers EPERM: the stored name is a user.* one, which symlinks cannot have.)
	if err := unix.Lremovexattr(link, "security.vaultui-test"); !errors.Is(err, unix.ENODATA) && !errors.Is(err, unix.EPERM) {
		t.Errorf("lremovexattr of a symlink: %v, want ENODATA or EPERM", err)
	}
	if err := unix.Setxattr(f, "user.mark", []byte("target"), 0); err != nil {
		t.Fatal(err)
	}
	if sz, err := unix.Getxattr(link, "user.mark", make([]byte, 64)); err != nil || sz != 6 {
		t.Errorf("getxattr through a symlink: %d, %v; want the target's 6 bytes", sz, err)
	}
	unix.Removexattr(f, "user.mark")
	for _, p := range []string{f, filepath.Join(mp, "d"), mp} {
		if err := unix.Setxattr(p, "user.tag", []byte("red"), unix.XATTR_CREATE); err != nil {
			t.Fatalf("%s: setxattr: %v", p, err)
		}
		if err := unix.Setxattr(p, "user.tag", []byte("blue"), unix.XATTR_CREATE); !errors.Is(err, unix.EEXIST) {
			t.Errorf("%s: XATTR_CREATE over an existing attribute: %v, want EEXIST", p, err)
		}
		if err := unix.Setxattr(p, "user.other", []byte("x"), unix.XATTR_REPLACE); !errors.Is(err, unix.ENODATA) {
			t.Errorf("%s: XATTR_REPLACE of a missing attribute: %v, want ENODATA", p, err)
		}
		if err := unix.Setxattr(p, "user.empty", nil, 0); err != nil {
			t.Fatal(err)
		}
		big := bytes.Repeat([]byte("v"), 3000) // ext4 holds one block of attributes per inode
		if err := unix.Setxattr(p, "user.big", big, 0); err != nil {
			t.Fatal(err)
		}
		if sz, err := unix.Getxattr(p, "user.tag", nil); err != nil || sz != 3 {
			t.Errorf("%s: size query = %d, %v; want 3", p, sz, err)
		}
		buf := make([]byte, 70000)
		if sz, err := unix.Getxattr(p, "user.big", buf); err != nil || !bytes.Equal(buf[:sz], big) {
			t.Errorf("%s: user.big reads %d bytes, %v", p, sz, err)
		}
		if _, err := unix.Getxattr(p, "user.tag", make([]byte, 1)); !errors.Is(err, unix.ERANGE) {
			t.Errorf("%s: a short buffer: %v, want ERANGE", p, err)
		}
		// A value larger than the first read asks for (see xattrEntry.read): its size, an
		// exact buffer, and one too short by a byte.
		if sz, err := unix.Getxattr(p, "user.big", nil); err != nil || sz != len(big) {
			t.Errorf("%s: size query of user.big = %d, %v; want %d", p, sz, err, len(big))
		}
		if sz, err := unix.Getxattr(p, "user.big", buf[:len(big)]); err != nil || !bytes.Equal(buf[:sz], big) {
			t.Errorf("%s: user.big into a buffer of its size: %d bytes, %v", p, sz, err)
		}
		if _, err := unix.Getxattr(p, "user.big", make([]byte, len(big)-1)); !errors.Is(err, unix.ERANGE) {
			t.Errorf("%s: user.big into a buffer a byte short: %v, want ERANGE", p, err)
		}
		sz, err := unix.Listxattr(p, buf)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(buf[:sz]); got != "user.tag\x00user.empty\x00user.big\x00" && !sameSet(got, "user.tag\x00user.empty\x00user.big\x00") {
			t.Errorf("%s: list = %q", p, got)
		}
		if err := unix.Removexattr(p, "user.tag"); err != nil {
			t.Fatal(err)
		}
		if _, err := unix.Getxattr(p, "user.tag", buf); !errors.Is(err, unix.ENODATA) {
			t.Errorf("%s: a removed attribute: %v, want ENODATA", p, err)
		}
	}
	if _, err := unix.Getxattr(f, "security.capability", make([]byte, 64)); !errors.Is(err, unix.EOPNOTSUPP) {
		t.Errorf("security.capability: %v, want EOPNOTSUPP (as gocryptfs without -suid)", err)
	}
	// On disk only encrypted names and values.
	var cipherFile string
	ents, _ := os.ReadDir(v.Dir)
	for _, e := range ents {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), "gocryptfs.") {
			cipherFile = filepath.Join(v.Dir, e.Name())
		}
	}
	buf := make([]byte, 4096)
	sz, _ := unix.Llistxattr(cipherFile, buf)
	for _, name := range strings.Split(strings.TrimRight(string(buf[:sz]), "\x00"), "\x00") {
		if !strings.HasPrefix(name, crypto.XattrPrefix) || strings.Contains(name, "empty") {
			t.Errorf("cipher file holds attribute %q", name)
		}
	}
	// Renaming keeps attributes (they belong to the inode).
	os.Rename(f, f+"2")
	if sz, err := unix.Getxattr(f+"2", "user.empty", buf); err != nil || sz != 0 {
		t.Errorf("after rename: %d, %v", sz, err)
	}

	// fsck checks them, export restores the user.* ones.
	fsckClean(t, v)
	out := filepath.Join(t.TempDir(), "export")
	if err := vault.ExportVolume(context.Background(), v.Volume(), out, vault.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	if sz, err := unix.Lgetxattr(filepath.Join(out, "f2"), "user.big", buf); err != nil || sz != 3000 {
		t.Errorf("exported user.big: %d bytes, %v", sz, err)
	}
	if sz, err := unix.Lgetxattr(filepath.Join(out, "d"), "user.empty", buf); err != nil || sz != 0 {
		t.Errorf("exported directory's user.empty: %d, %v", sz, err)
	}
	// A value that no longer authenticates is a problem fsck names (the file was renamed,
	// so its cipher name changed).
	ents, _ = os.ReadDir(v.Dir)
	for _, e := range ents {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), "gocryptfs.") {
			cipherFile = filepath.Join(v.Dir, e.Name())
		}
	}
	sz, _ = unix.Llistxattr(cipherFile, buf)
	var stored string
	vb := make([]byte, 4096)
	vn := 0
	for _, name := range strings.Split(strings.TrimRight(string(buf[:sz]), "\x00"), "\x00") {
		if vn, _ = unix.Lgetxattr(cipherFile, name, vb); vn > 0 {
			stored = name
			break
		}
	}
	vb[vn-1] ^= 1
	if err := unix.Lsetxattr(cipherFile, stored, vb[:vn], 0); err != nil {
		t.Fatal(err)
	}
	problems, _ := vault.FsckVolume(context.Background(), v.Volume(), nil)
	if len(problems) != 1 || problems[0].Kind != gocryptfs.KindXattr {
		t.Errorf("fsck after a flipped attribute byte: %v; want one %q problem", problems, gocryptfs.KindXattr)
	}
}

func sameSet(a, b string) bool {
	as, bs := strings.Split(a, "\x00"), strings.Split(b, "\x00")
	if len(as) != len(bs) {
		return false
	}
	m := map[string]bool{}
	for _, x := range as {
		m[x] = true
	}
	for _, x := range bs {
		if !m[x] {
			return false
		}
	}
	return true
}

// With extended attributes on, writes still cost no GETXATTR round trip (the kernel asks
// for security.capability before each write unless the mount has HANDLE_KILLPRIV_V2).
func TestWritesSendNoGetxattr(t *testing.T) {
	v := realVault(t, "", crypto.AESGCM)
	var trace bytes.Buffer
	var mu sync.Mutex
	lg := logWriterFunc(func(p []byte) {
		mu.Lock()
		trace.Write(p)
		mu.Unlock()
	})
	mp, _ := mountTest(t, volumeOf(v), Options{Debug: true, Logger: lg})
	fh, err := os.Create(filepath.Join(mp, "big"))
	if err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte("w"), 128<<10)
	for i := 0; i < 64; i++ {
		if _, err := fh.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	fh.Close()
	mu.Lock()
	defer mu.Unlock()
	writes := strings.Count(trace.String(), "WRITE")
	getx := strings.Count(trace.String(), "GETXATTR")
	if writes < 8 {
		t.Fatalf("the trace shows %d WRITE requests; is Debug tracing on?", writes)
	}
	if getx > 1 {
		t.Errorf("%d GETXATTR requests for %d writes: the kernel asks for security.capability per write", getx, writes)
	}
}

// logWriterFunc is a logger whose lines go to fn.
func logWriterFunc(fn func([]byte)) *log.Logger {
	return log.New(writerFunc(fn), "", 0)
}

type writerFunc func([]byte)

func (w writerFunc) Write(p []byte) (int, error) { w(p); return len(p), nil }

// cipherName returns the on-disk name of plaintext path name (its last component) and the
// cipher directory holding it.
func cipherName(t testing.TB, v *gocryptfs.Vault, name string) (dir, stored string) {
	t.Helper()
	dir = v.Dir
	parts := strings.Split(name, "/")
	for i, part := range parts {
		iv, err := gocryptfs.ReadDirIV(dir)
		if err != nil {
			t.Fatal(err)
		}
		if stored, _, _, err = v.Names.StoredName(part, iv); err != nil {
			t.Fatal(err)
		}
		if i < len(parts)-1 {
			dir = filepath.Join(dir, stored)
		}
	}
	return dir, stored
}

// Conflict copies made the way sync tools make them show up beside their originals, can be
// read, written, renamed and settled, and fsck calls them (and foreign files) notes.
func TestConflictCopies(t *testing.T) {
	v := realVault(t, "", crypto.AESGCM)
	vol := volumeOf(v)
	mp, m := mountTest(t, vol, Options{})
	longName := strings.Repeat("long", 50) + ".txt"
	for name, data := range map[string]string{"report.odt": "original", "notes": "notes v1", longName: "long v1", "other": "other version"} {
		if err := os.WriteFile(filepath.Join(mp, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(mp, "d"), 0o755)
	os.WriteFile(filepath.Join(mp, "d", "x.txt"), []byte("x v1"), 0o644)
	if err := unmount(m); err != nil {
		t.Fatal(err)
	}
	// The sync tools at work, on the cipherdir.
	root := v.Dir
	_, report := cipherName(t, v, "report.odt")
	_, other := cipherName(t, v, "other")
	_, notes := cipherName(t, v, "notes")
	_, long := cipherName(t, v, longName)
	ddir, x := cipherName(t, v, "d/x.txt")
	copyFile := func(from, to string) {
		t.Helper()
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Rename(filepath.Join(root, other), filepath.Join(root, report+".sync-conflict-20261130-101010-ABCDEF7"))
	copyFile(filepath.Join(root, notes), filepath.Join(root, notes+" (Ann's conflicted copy 2026-11-30)"))
	hash := strings.TrimPrefix(long, crypto.LongNamePrefix)
	copyFile(filepath.Join(root, long), filepath.Join(root, "gocryptfs.longname.sync-conflict-20261201-090000-ZZZZZZZ."+hash))
	copyFile(filepath.Join(ddir, x), filepath.Join(ddir, x+"-LAPTOP"))
	copyFile(filepath.Join(root, crypto.DirIVName), filepath.Join(root, "gocryptfs.sync-conflict-20261130-101010-ABCDEF7.diriv"))
	os.WriteFile(filepath.Join(root, "desktop.ini"), []byte("[.ShellClassInfo]"), 0o644)
	os.WriteFile(filepath.Join(root, "Icon\r"), nil, 0o644)

	m2, err := Mount(mp, vol, Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	*m = *m2
	// Looked up before its directory is listed (the kernel has nothing cached after a mount).
	if b, err := os.ReadFile(filepath.Join(mp, "d", "x (conflict OneDrive LAPTOP).txt")); err != nil || string(b) != "x v1" {
		t.Fatalf("the OneDrive copy reads %q, %v", b, err)
	}
	want := map[string]string{
		"report.odt": "original", "report (conflict 2026-11-30 Syncthing).odt": "other version",
		"notes": "notes v1", "notes (conflict 2026-11-30 Dropbox)": "notes v1",
		longName: "long v1", strings.TrimSuffix(longName, ".txt") + " (conflict 2026-12-01 Syncthing).txt": "long v1",
	}
	ents, err := os.ReadDir(mp)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range ents {
		seen[e.Name()] = true
	}
	for name, data := range want {
		if !seen[name] {
			t.Errorf("listing lacks %q (has %v)", name, seen)
			continue
		}
		if b, err := os.ReadFile(filepath.Join(mp, name)); err != nil || string(b) != data {
			t.Errorf("%s reads %q, %v; want %q", name, b, err, data)
		}
	}
	if len(ents) != len(want)+1 { // + d
		t.Errorf("listing has %d entries, want %d: %v", len(ents), len(want)+1, seen)
	}
	// Writing to a copy writes the copy; renaming it to a normal name settles it.
	copyName := filepath.Join(mp, "report (conflict 2026-11-30 Syncthing).odt")
	f, err := os.OpenFile(copyName, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(" + edit")
	f.Close()
	if err := os.Rename(copyName, filepath.Join(mp, "report-mine.odt")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(mp, "report-mine.odt")); string(b) != "other version + edit" {
		t.Errorf("the settled copy reads %q", b)
	}

	// Offline: notes, not damage; listed by Volume.Conflicts; settled by Volume.Settle.
	problems, err := vault.FsckVolume(context.Background(), v.Volume(), nil)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, p := range problems {
		kinds[p.Kind]++
		if p.Damage() {
			t.Errorf("fsck: damage: %s", p)
		}
	}
	if kinds[format.KindConflict] != 4 || kinds[format.KindForeign] != 2 {
		t.Errorf("fsck notes: %v; want 4 conflict (3 copies, 1 diriv copy) and 2 foreign", kinds)
	}
	list, err := facadeOf(t, v).Conflicts(context.Background())
	if err != nil || len(list) != 4 || list[0].Kind != vault.ConflictFolderMadeTwice {
		t.Fatalf("Conflicts = %+v, %v; want the root made twice and 3 copies", list, err)
	}
	if err := unmount(m); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := facadeOf(t, v).Settle(ctx, "notes (conflict 2026-11-30 Dropbox)", vault.KeepOriginal); err != nil {
		t.Fatal(err)
	}
	if _, err := facadeOf(t, v).Settle(ctx, "d/x (conflict OneDrive LAPTOP).txt", vault.KeepBoth); err != nil {
		t.Fatal(err)
	}
	if _, err := facadeOf(t, v).Settle(ctx, strings.TrimSuffix(longName, ".txt")+" (conflict 2026-12-01 Syncthing).txt", vault.KeepCopy); err != nil {
		t.Fatal(err)
	}
	if _, err := facadeOf(t, v).Settle(ctx, "notes", vault.KeepBoth); !errors.Is(err, vault.ErrNoConflict) {
		t.Errorf("settling a normal file: %v, want ErrNoConflict", err)
	}
	if _, err := facadeOf(t, v).Settle(ctx, "/", vault.KeepBoth); err != nil {
		t.Fatal(err)
	}
	if list, _ := facadeOf(t, v).Conflicts(ctx); len(list) != 0 {
		t.Errorf("after settling, Conflicts = %+v", list)
	}
	out := filepath.Join(t.TempDir(), "export")
	if err := vault.ExportVolume(ctx, v.Volume(), out, vault.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"notes": "notes v1", "d/x (conflict OneDrive LAPTOP).txt": "x v1", "d/x.txt": "x v1", longName: "long v1", "report-mine.odt": "other version + edit"} {
		if b, err := os.ReadFile(filepath.Join(out, name)); err != nil || string(b) != data {
			t.Errorf("exported %s: %q, %v; want %q", name, b, err, data)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "notes (conflict 2026-11-30 Dropbox)")); !os.IsNotExist(err) {
		t.Errorf("the deleted copy was exported: %v", err)
	}
}

// A directory made on two machines: the sync tool keeps one gocryptfs.diriv and renames the
// other, and the entries made under the losing IV would vanish. They show as conflict copies.
func TestDirIVConflict(t *testing.T) {
	v := realVault(t, "", crypto.AESGCM)
	vol := volumeOf(v)
	mp, m := mountTest(t, vol, Options{})
	os.Mkdir(filepath.Join(mp, "shared"), 0o755)
	os.WriteFile(filepath.Join(mp, "shared", "a.txt"), []byte("made on A"), 0o644)
	if err := unmount(m); err != nil {
		t.Fatal(err)
	}
	_, sharedC := cipherName(t, v, "shared")
	dir := filepath.Join(v.Dir, sharedC)
	_, aC := cipherName(t, v, "shared/a.txt")
	os.Rename(filepath.Join(dir, crypto.DirIVName), filepath.Join(dir, "gocryptfs.sync-conflict-20261130-101010-ABCDEF7.diriv"))
	// The other machine's IV: one that a.txt's stored name does not decrypt under, so that
	// whatever the vault's random key this test takes the common path. Under about one IV in
	// 256 it decrypts by chance (names carry no authentication), to garbage:
	// TestDirIVConflictNameDecryptsUnderBothIVs takes that path.
	other := make([]byte, 16)
	for other[0] = 1; ; other[0]++ {
		if _, err := v.Names.DecryptName(aC, other); err != nil {
			break
		}
	}
	if err := os.WriteFile(filepath.Join(dir, crypto.DirIVName), other, 0o440); err != nil {
		t.Fatal(err)
	}
	m2, err := Mount(mp, vol, Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	*m = *m2
	os.WriteFile(filepath.Join(mp, "shared", "b.txt"), []byte("made on B"), 0o644)
	shown := filepath.Join(mp, "shared", "a (conflict 2026-11-30 Syncthing).txt")
	if b, err := os.ReadFile(shown); err != nil || string(b) != "made on A" {
		t.Fatalf("the entry under the other IV: %q, %v", b, err)
	}
	problems, _ := vault.FsckVolume(context.Background(), v.Volume(), nil)
	for _, p := range problems {
		if p.Damage() {
			t.Errorf("fsck: %s", p)
		}
	}
	if list, _ := facadeOf(t, v).Conflicts(context.Background()); len(list) != 2 || list[0].Kind != vault.ConflictFolderMadeTwice || list[0].Entries != 1 ||
		list[1].Kind != vault.ConflictMadeInSecondFolder || list[1].Of != "shared/a.txt" {
		t.Errorf("Conflicts = %+v; want the folder made twice and shared/a.txt made in it", list)
	}
	// Renaming it re-encrypts its name under the directory's IV: settled.
	if err := os.Rename(shown, filepath.Join(mp, "shared", "a.txt")); err != nil {
		t.Fatal(err)
	}
	// The diriv copy stays, with nothing under it, until it is settled.
	if list, _ := facadeOf(t, v).Conflicts(context.Background()); len(list) != 1 || list[0].Entries != 0 {
		t.Errorf("after the rename, Conflicts = %+v", list)
	}
	if b, err := os.ReadFile(filepath.Join(mp, "shared", "a.txt")); err != nil || string(b) != "made on A" {
		t.Errorf("a.txt: %q, %v", b, err)
	}
}

// Names carry no authentication: a name made under the other machine's IV still decrypts
// under the folder's own IV about once in 256 (its padding happens to check), to bytes no one
// named a file. The mount places it as vault's walk does, by the IV that gives a readable
// name: it shows under its real name with the conflict marker, and opens, renames and goes
// away under that name, never under the garbage one.
func TestDirIVConflictNameDecryptsUnderBothIVs(t *testing.T) {
	v := realVault(t, "", crypto.AESGCM)
	mp, name, garbage, _ := folderMadeTwiceByChance(t, v, Options{})
	shared := filepath.Join(mp, "shared")
	shown := strings.TrimSuffix(name, ".txt") + " (conflict 2026-11-30 Syncthing).txt"
	listed, err := os.ReadDir(shared)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range listed {
		names = append(names, e.Name())
	}
	if !slices.Contains(names, shown) || slices.Contains(names, garbage) {
		t.Errorf("listing %q; want %q, and not the garbage %q", names, shown, garbage)
	}
	if b, err := os.ReadFile(filepath.Join(shared, shown)); err != nil || string(b) != "made on A" {
		t.Fatalf("%s: %q, %v", shown, b, err)
	}
	// The garbage name is no name for it: nothing reaches the entry through it.
	if _, err := os.Lstat(filepath.Join(shared, garbage)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lstat of the garbage name %q: %v; want ENOENT", garbage, err)
	}
	list, err := facadeOf(t, v).Conflicts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var of []string
	for _, c := range list {
		if c.Kind == vault.ConflictMadeInSecondFolder {
			if _, err := os.Stat(filepath.Join(mp, c.Path)); err != nil {
				t.Errorf("Conflicts lists %q, which the mount does not have: %v", c.Path, err)
			}
			of = append(of, c.Of)
		}
	}
	slices.Sort(of)
	if want := []string{"shared/a.txt", "shared/" + name}; !slices.Equal(of, want) {
		t.Errorf("Conflicts lists entries made in the second folder of %q; want %q", of, want)
	}
	// Settled as "vaultui conflicts" does through a mount: renamed to its own name, under the
	// folder's IV.
	if err := os.Rename(filepath.Join(shared, shown), filepath.Join(shared, name)); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(shared, name)); err != nil || string(b) != "made on A" {
		t.Errorf("%s after the rename: %q, %v", name, b, err)
	}
	if err := os.Remove(filepath.Join(shared, name)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(shared, name)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s after removing it: %v", name, err)
	}
}

// A change behind the mount to an entry whose name decrypts by chance under the folder's IV
// reaches the kernel for the name it shows under, not for the garbage one. The entry is
// rewritten in place keeping its size and modification time (rsync --inplace -t), so only
// being told drops the pages the kernel keeps.
func TestDirIVConflictNameDecryptsUnderBothIVsChangedBehind(t *testing.T) {
	v := realVault(t, "", crypto.AESGCM)
	mp, name, _, cipher := folderMadeTwiceByChance(t, v, Options{cacheTimeout: time.Hour, watchOwn: true})
	tool, _ := mountTest(t, volumeOf(v), Options{SharedStorage: true})
	shown := filepath.Join("shared", strings.TrimSuffix(name, ".txt")+" (conflict 2026-11-30 Syncthing).txt")
	old, next := []byte("made on A"), []byte("MADE ON B")
	if b, err := os.ReadFile(filepath.Join(mp, shown)); err != nil || !bytes.Equal(b, old) {
		t.Fatalf("%s: %q, %v", shown, b, err)
	}
	fi, err := os.Stat(cipher)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(tool, shown), os.O_WRONLY, 0)
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
	if err := os.Chtimes(cipher, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	showsWithin(t, "rewritten entry", contentsState(filepath.Join(mp, shown), old, next))
}

// folderMadeTwiceByChance makes folder shared of v on two computers, as a sync tool leaves it:
// the other computer's gocryptfs.diriv kept, this one's as a conflict copy, and in it
// "a.txt" and name ("made on A" in it), made under this one's IV, whose stored name decrypts
// under the other's to garbage (not UTF-8). It mounts v with opts (and returns where), and
// returns name's cipher file.
func folderMadeTwiceByChance(t *testing.T, v *gocryptfs.Vault, opts Options) (mp, name, garbage, cipher string) {
	t.Helper()
	vol := volumeOf(v)
	mp, m := mountTest(t, vol, Options{})
	shared := filepath.Join(mp, "shared")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	_, sharedC := cipherName(t, v, "shared")
	dir := filepath.Join(v.Dir, sharedC)
	made, err := os.ReadFile(filepath.Join(dir, crypto.DirIVName)) // this computer's IV
	if err != nil {
		t.Fatal(err)
	}
	kept := make([]byte, crypto.DirIVLen) // the other computer's, which the sync tool keeps
	kept[0] = 1
	// A name whose encryption under made decrypts under kept to bytes that are not UTF-8
	// (about one name in 256).
	for i := 0; i < 100000 && name == ""; i++ {
		p := fmt.Sprintf("f%d.txt", i)
		enc, err := v.Names.EncryptName(p, made)
		if err != nil {
			t.Fatal(err)
		}
		if g, err := v.Names.DecryptName(enc, kept); err == nil && !utf8.ValidString(g) {
			name, garbage, cipher = p, g, filepath.Join(dir, enc)
		}
	}
	if name == "" {
		t.Fatal("no name decrypts under the other IV")
	}
	for n, data := range map[string]string{name: "made on A", "a.txt": "also made on A"} {
		if err := os.WriteFile(filepath.Join(shared, n), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := unmount(m); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, crypto.DirIVName), filepath.Join(dir, "gocryptfs.sync-conflict-20261130-101010-ABCDEF7.diriv")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, crypto.DirIVName), kept, 0o440); err != nil {
		t.Fatal(err)
	}
	opts.Logger = testLogger(t)
	m2, err := Mount(mp, vol, opts)
	if err != nil {
		t.Fatal(err)
	}
	*m = *m2 // unmounted by mountTest's cleanup
	return mp, name, garbage, cipher
}

// Without allow_other the mount has no default_permissions, so the kernel leaves permission
// checks to the server, access(2) included (go-fuse answers ACCESS from the attributes): a
// mount served by an ordinary user must answer access(W_OK) on a read-only file with EACCES,
// as the user's own file system would. The mount runs in a child process as nobody (mounting
// through fusermount3), since root passes every check.
func TestAccessWithoutAllowOther(t *testing.T) {
	if dir := os.Getenv("VAULTUI_TEST_ACCESS_CHILD"); dir != "" {
		accessChild(dir)
		return
	}
	needRoot(t)
	testdeps.Need(t, testdeps.FUSE)
	if _, err := os.Stat("/usr/bin/fusermount3"); err != nil {
		testdeps.Unusable(t, testdeps.FUSE, "no /usr/bin/fusermount3 for a mount by an ordinary user")
	}
	dir, err := os.MkdirTemp("", "vaultui-access")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	os.Chown(dir, 65534, 65534)
	// The test binary sits in a private build directory: nobody runs a copy.
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "vfs.test")
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	// /dev/fuse is root's alone here: in a private mount namespace, a device node open to
	// everyone is bound over it, so the machine's own stays as it is.
	for _, tool := range []string{"unshare", "setpriv", "mknod"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s(1) to run the mount as an ordinary user", tool)
		}
	}
	script := `set -e; mknod "$D/fuse" c 10 229; chmod 666 "$D/fuse"; mount --bind "$D/fuse" /dev/fuse;
		exec setpriv --reuid 65534 --regid 65534 --clear-groups env VAULTUI_TEST_ACCESS_CHILD="$D" "$D/vfs.test" -test.run '^TestAccessWithoutAllowOther$' -test.v`
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c", script)
	cmd.Env = append(os.Environ(), "D="+dir)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if strings.Contains(string(out), "SKIP:") {
		testdeps.Unusable(t, testdeps.FUSE, "the child could not mount as nobody: "+string(out))
	}
	if err != nil || !strings.Contains(string(out), "ACCESS OK") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// accessChild runs as nobody: it mounts a fresh vault in dir and checks access(2).
func accessChild(dir string) {
	fail := func(f string, a ...any) { fmt.Printf("FAIL: "+f+"\n", a...); os.Exit(1) }
	key := make([]byte, 32)
	enc, _ := crypto.NewContentEnc(crypto.AESGCM, key, true)
	cipher, mp := filepath.Join(dir, "c"), filepath.Join(dir, "m")
	os.Mkdir(cipher, 0o700)
	os.Mkdir(mp, 0o700)
	m, err := Mount(mp, GocryptfsVolume{Dir: cipher, Content: enc}, Options{})
	if err != nil {
		fmt.Printf("SKIP: mount as nobody: %v\n", err)
		return
	}
	defer unmount(m)
	ro, rw := filepath.Join(mp, "ro"), filepath.Join(mp, "rw")
	os.WriteFile(ro, []byte("x"), 0o444)
	os.WriteFile(rw, []byte("x"), 0o644)
	if err := unix.Access(ro, unix.W_OK); !errors.Is(err, unix.EACCES) {
		fail("access(W_OK) of a 0444 file: %v, want EACCES", err)
	}
	if err := unix.Access(rw, unix.W_OK); err != nil {
		fail("access(W_OK) of a 0644 file: %v", err)
	}
	if err := unix.Access(ro, unix.R_OK); err != nil {
		fail("access(R_OK) of a 0444 file: %v", err)
	}
	fmt.Println("ACCESS OK")
}

// chmod by name (as "tar x" does after closing each file) changes files, directories and
// fifos, including in the cipherdir, and refuses symlinks as Linux file systems do.
func TestChmodByName(t *testing.T) {
	v := realVault(t, "", crypto.AEGIS)
	mp, _ := mountTest(t, volumeOf(v), Options{})
	f, d, fifo, link := filepath.Join(mp, "f"), filepath.Join(mp, "d"), filepath.Join(mp, "fifo"), filepath.Join(mp, "link")
	os.WriteFile(f, []byte("x"), 0o644)
	os.Mkdir(d, 0o755)
	unix.Mkfifo(fifo, 0o644)
	os.Symlink("f", link)
	for p, mode := range map[string]uint32{f: 0o600, d: 0o700, fifo: 0o640} {
		if err := unix.Fchmodat(unix.AT_FDCWD, p, mode, 0); err != nil {
			t.Fatalf("chmod %s: %v", p, err)
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil || st.Mode&0o7777 != mode {
			t.Errorf("%s: mode %o after chmod %o (%v)", p, st.Mode&0o7777, mode, err)
		}
	}
	if err := unix.Fchmodat(unix.AT_FDCWD, link, 0o600, unix.AT_SYMLINK_NOFOLLOW); !errors.Is(err, unix.EOPNOTSUPP) {
		t.Errorf("chmod of the symlink itself: %v, want EOPNOTSUPP", err)
	}
	var st unix.Stat_t
	if unix.Stat(f, &st); st.Mode&0o7777 != 0o600 {
		t.Errorf("the symlink's target changed to %o", st.Mode&0o7777)
	}
	// The cipher file carries the mode.
	dir, stored := cipherName(t, v, "f")
	info, err := os.Lstat(filepath.Join(dir, stored))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("cipher file mode %o, want 600", info.Mode().Perm())
	}
}

// TestDirIVConflictLongName: an entry with a long name (its encrypted name in a .name file
// beside it) made under the other machine's IV is renamed to its own name through the mount,
// as settling does; its old .name file goes with it, leaving nothing behind in the folder.
func TestDirIVConflictLongName(t *testing.T) {
	v := realVault(t, "", crypto.AESGCM)
	vol := volumeOf(v)
	mp, m := mountTest(t, vol, Options{})
	long := strings.Repeat("long name ", 20) + ".txt"
	if err := os.Mkdir(filepath.Join(mp, "shared"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mp, "shared", long), []byte("made on A"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unmount(m); err != nil {
		t.Fatal(err)
	}
	_, sharedC := cipherName(t, v, "shared")
	dir := filepath.Join(v.Dir, sharedC)
	_, stored := cipherName(t, v, "shared/"+long)
	if !crypto.IsLongName(stored) {
		t.Fatalf("%q is stored as %q, not as a long name", long, stored)
	}
	if err := os.Rename(filepath.Join(dir, crypto.DirIVName), filepath.Join(dir, "gocryptfs.sync-conflict-20261130-101010-ABCDEF7.diriv")); err != nil {
		t.Fatal(err)
	}
	dirfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dirfd)
	other := make([]byte, 16) // an IV the long name does not decrypt under
	for other[0] = 1; ; other[0]++ {
		if _, err := layout.EntryUnderIV(dirfd, stored, other, v.Names); err != nil {
			break
		}
	}
	if err := os.WriteFile(filepath.Join(dir, crypto.DirIVName), other, 0o440); err != nil {
		t.Fatal(err)
	}
	m2, err := Mount(mp, vol, Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	*m = *m2
	shown := filepath.Join(mp, "shared", strings.TrimSuffix(long, ".txt")+" (conflict 2026-11-30 Syncthing).txt")
	if err := os.Rename(shown, filepath.Join(mp, "shared", long)); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(mp, "shared", long)); err != nil || string(b) != "made on A" {
		t.Fatalf("after the rename: %q, %v", b, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, stored+crypto.LongNameSuffix)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the old .name file %s is left behind (%v)", stored+crypto.LongNameSuffix, err)
	}
}

// In a setgid directory, new entries take the directory's group and new directories its
// setgid bit too, whoever makes them, as on a local file system (xfstests generic/314).
func TestSetgidDirectory(t *testing.T) {
	needRoot(t)
	mp, _ := mountTest(t, testVolume(t, crypto.AESGCM, true), Options{AllowOther: true})
	for d := filepath.Dir(mp); d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	sg := filepath.Join(mp, "sg")
	if err := os.Mkdir(sg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(sg, 65533, 12345); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Chmod(sg, 0o2775); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", `umask 022; mkdir "$1/user dir" && : > "$1/user file"`, "sh", sg)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65533, Gid: 65533}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("as uid 65533: %v: %s", err, out)
	}
	if err := os.Mkdir(filepath.Join(sg, "root dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		uid    uint32
		setgid bool
	}{
		{"user dir", 65533, true},
		{"user file", 65533, false},
		{"root dir", 0, true},
	} {
		var st syscall.Stat_t
		if err := syscall.Lstat(filepath.Join(sg, c.name), &st); err != nil {
			t.Fatal(err)
		}
		if st.Gid != 12345 || st.Uid != c.uid {
			t.Errorf("%s: owner %d:%d, want %d:12345 (the directory's group)", c.name, st.Uid, st.Gid, c.uid)
		}
		if got := st.Mode&syscall.S_ISGID != 0; got != c.setgid {
			t.Errorf("%s: mode %o, setgid %v, want %v", c.name, st.Mode, got, c.setgid)
		}
	}
}
