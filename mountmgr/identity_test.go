package mountmgr

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/testdeps"
)

// mountedAt reports whether something is mounted at mp (as the kernel lists it).
func mountedAt(base, mp string) bool {
	for _, e := range mountsUnder(base) {
		if e.MountPoint == mp {
			return true
		}
	}
	return false
}

// TestMountSameVaultTwice: one vault, whatever path leads to it, is mounted once; a mount
// point in use, through a symlink, takes no second vault.
func TestMountSameVaultTwice(t *testing.T) {
	base := daemonEnv(t)
	cipherdir, mp, pw := newVault(t, base, crypto.AESGCM)
	other, _, otherPW := newVault(t, base, crypto.AESGCM)
	mp2 := filepath.Join(base, "mnt2")
	os.Mkdir(mp2, 0o700)
	link := filepath.Join(base, "link-to-vault")
	mpLink := filepath.Join(base, "link-to-mnt")
	if err := os.Symlink(cipherdir, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(mp, mpLink); err != nil {
		t.Fatal(err)
	}
	c := connect(t)
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: append([]byte(nil), pw...)}); err != nil {
		t.Fatal(err)
	}
	_, err := c.Mount(ctx(t), MountRequest{CipherDir: link, MountPoint: mp2, Password: append([]byte(nil), pw...)})
	if !errors.Is(err, ErrAlreadyMounted) || !strings.Contains(err.Error(), "already mounted at "+mp) {
		t.Errorf("the vault again through a symlink: %v, want ErrAlreadyMounted naming %s", err, mp)
	}
	_, err = c.Mount(ctx(t), MountRequest{CipherDir: other, MountPoint: mpLink, Password: append([]byte(nil), otherPW...)})
	if !errors.Is(err, ErrAlreadyMounted) {
		t.Errorf("another vault on the mount point through a symlink: %v, want ErrAlreadyMounted", err)
	}
	if mountedAt(base, mp2) {
		t.Fatalf("mounted twice")
	}
	// conflicts --keep and the TUI ask MountedAt: any spelling of the vault is mounted.
	if got := MountedAt(link); got != mp {
		t.Errorf("MountedAt(%s) = %q, want %s", link, got, mp)
	}
	if err := c.UnmountAll(ctx(t)); err != nil {
		t.Fatal(err)
	}
}

// TestMountRefusesGocryptfsMount: a vault gocryptfs has mounted is not mounted again (two
// servers of one vault tear each other's blocks), and MountedAt sees it.
func TestMountRefusesGocryptfsMount(t *testing.T) {
	base := daemonEnv(t)
	testdeps.Need(t, testdeps.Gocryptfs)
	bin, err := exec.LookPath("gocryptfs")
	if err != nil {
		t.Fatal(err)
	}
	cipherdir, mp, pw := newVault(t, base, crypto.AESGCM)
	gmp := filepath.Join(base, "gocryptfs-mnt")
	os.Mkdir(gmp, 0o700)
	passfile := filepath.Join(base, "pw")
	os.WriteFile(passfile, pw, 0o600)
	if out, err := exec.Command(bin, "-q", "-passfile", passfile, cipherdir, gmp).CombinedOutput(); err != nil {
		t.Fatalf("gocryptfs cannot mount the vault: %v: %s", err, out)
	}
	defer detach(gmp)
	c := connect(t)
	link := filepath.Join(base, "link")
	os.Symlink(cipherdir, link)
	for _, dir := range []string{cipherdir, link} {
		_, err = c.Mount(ctx(t), MountRequest{CipherDir: dir, MountPoint: mp, Password: append([]byte(nil), pw...)})
		if !errors.Is(err, ErrAlreadyMounted) || !strings.Contains(err.Error(), gmp) || !strings.Contains(err.Error(), "fuse.gocryptfs") {
			t.Errorf("mount of %s, mounted by gocryptfs: %v, want ErrAlreadyMounted naming %s", dir, err, gmp)
		}
	}
	if mountedAt(base, mp) {
		t.Fatal("mounted beside gocryptfs")
	}
	if got := MountedAt(link); got != gmp {
		t.Errorf("MountedAt = %q, want %s", got, gmp)
	}
}

// TestUnmountAfterParentRenamed: a mount point whose parent directory was renamed is
// unmounted where it is now, by --all and by its new path; status follows it.
func TestUnmountAfterParentRenamed(t *testing.T) {
	base := daemonEnv(t)
	c := connect(t)
	for _, all := range []bool{true, false} {
		cipherdir, _, pw := newVault(t, base, crypto.AESGCM)
		parent, _ := os.MkdirTemp(base, "parent")
		mp := filepath.Join(parent, "mnt")
		os.Mkdir(mp, 0o700)
		if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw}); err != nil {
			t.Fatal(err)
		}
		moved := parent + "-renamed"
		if err := os.Rename(parent, moved); err != nil {
			t.Fatal(err)
		}
		if all {
			err := c.UnmountAll(ctx(t))
			if err != nil {
				t.Errorf("unmount --all after the parent was renamed: %v", err)
			}
		} else if err := c.Unmount(ctx(t), filepath.Join(moved, "mnt"), false); err != nil {
			t.Errorf("unmount by the new path: %v", err)
		}
		if left := mountsUnder(base); len(left) != 0 {
			t.Fatalf("left mounted: %+v", left)
		}
	}
}

// TestStaleAfterParentRenamed: a daemon killed after its mount point's parent was renamed
// leaves a dead mount at the new path; the next daemon finds it by its identity in the ledger
// and cleans it up.
func TestStaleAfterParentRenamed(t *testing.T) {
	base := daemonEnv(t)
	cipherdir, _, pw := newVault(t, base, crypto.AESGCM)
	parent := filepath.Join(base, "parent")
	mp := filepath.Join(parent, "mnt")
	os.MkdirAll(mp, 0o700)
	c := connect(t)
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw}); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(parent, parent+"-renamed"); err != nil {
		t.Fatal(err)
	}
	pid := daemonPID(t)
	syscall.Kill(pid, syscall.SIGKILL)
	waitGone(t, pid)
	c.Close()
	newMP := filepath.Join(parent+"-renamed", "mnt")
	if !mountedAt(base, newMP) {
		t.Fatalf("no dead mount at %s to clean up: %+v", newMP, mountsUnder(base))
	}
	c2 := connect(t) // a new daemon, which cleans up at start
	report, err := c2.Stale(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(report) != 1 || report[0].MountPoint != newMP || !report[0].Cleaned {
		t.Errorf("stale report %+v, want %s cleaned", report, newMP)
	}
	if left := mountsUnder(base); len(left) != 0 {
		t.Fatalf("the dead mount is still there: %+v", left)
	}
}

// TestUnmountAllSymlinkRepointed: a vault mounted through a symlink that now points
// elsewhere is unmounted where it was mounted, and nothing else is touched.
func TestUnmountAllSymlinkRepointed(t *testing.T) {
	base := daemonEnv(t)
	cipherdir, mp, pw := newVault(t, base, crypto.AESGCM)
	elsewhere := filepath.Join(base, "elsewhere")
	os.Mkdir(elsewhere, 0o700)
	link := filepath.Join(base, "link")
	os.Symlink(mp, link)
	c := connect(t)
	info, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: link, Password: pw})
	if err != nil {
		t.Fatal(err)
	}
	if info.MountPoint != mp {
		t.Errorf("mounted at %s, reported %s: want where the kernel put it", mp, info.MountPoint)
	}
	os.Remove(link)
	os.Symlink(elsewhere, link)
	if err := c.UnmountAll(ctx(t)); err != nil {
		t.Errorf("unmount --all: %v", err)
	}
	if left := mountsUnder(base); len(left) != 0 {
		t.Fatalf("left mounted: %+v", left)
	}
}

// TestLedgerForgetsUnmounted: a mount leaves the ledger when it is unmounted, by the user or
// by the daemon's shutdown. A line kept after that named a mount ID and device number the
// kernel hands to the next FUSE file system, and a later daemon "cleaned up" another
// program's dead mount that happened to get them (seen in CI: a crash test's mount).
func TestLedgerForgetsUnmounted(t *testing.T) {
	base := daemonEnv(t)
	cipherdir, mp, pw := newVault(t, base, crypto.AESGCM)
	ledger := ledgerPath(SocketDir())
	c := connect(t)
	mount := func() {
		t.Helper()
		if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw}); err != nil {
			t.Fatal(err)
		}
		if owned, err := readLedger(ledger); err != nil || len(owned) != 1 {
			t.Fatalf("ledger while mounted = %v, %v; want the mount", owned, err)
		}
	}
	mount()
	if err := c.Unmount(ctx(t), mp, false); err != nil {
		t.Fatal(err)
	}
	if owned, err := readLedger(ledger); err != nil || len(owned) != 0 {
		t.Errorf("ledger after unmount = %v, %v; want empty", owned, err)
	}
	mount()
	pid := daemonPID(t)
	syscall.Kill(pid, syscall.SIGTERM)
	waitGone(t, pid)
	c.Close()
	if owned, err := readLedger(ledger); err != nil || len(owned) != 0 {
		t.Errorf("ledger after the daemon's shutdown = %v, %v; want empty", owned, err)
	}
}

// TestSharedStorageMountedOnce: shared storage is for other machines using the vault at the
// same time; this daemon still mounts one vault once, with the option or without, and says
// which mounts have it.
func TestSharedStorageMountedOnce(t *testing.T) {
	base := daemonEnv(t)
	cipherdir, mp, pw := newVault(t, base, crypto.AESGCM)
	mp2 := filepath.Join(base, "mnt2")
	os.Mkdir(mp2, 0o700)
	c := connect(t)
	info, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: append([]byte(nil), pw...), SharedStorage: true})
	if err != nil {
		t.Fatal(err)
	}
	if !info.SharedStorage {
		t.Errorf("mount info %+v: SharedStorage not set", info)
	}
	if err := os.WriteFile(filepath.Join(mp, "f"), []byte("shared"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, shared := range []bool{true, false} {
		_, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp2, Password: append([]byte(nil), pw...), SharedStorage: shared})
		if !errors.Is(err, ErrAlreadyMounted) {
			t.Errorf("second mount (shared storage %v): %v, want ErrAlreadyMounted", shared, err)
		}
	}
	if mountedAt(base, mp2) {
		t.Fatal("mounted twice")
	}
	st, err := c.Status(ctx(t))
	if err != nil || len(st) != 1 || !st[0].SharedStorage {
		t.Errorf("status: %+v %v", st, err)
	}
	if err := c.UnmountAll(ctx(t)); err != nil {
		t.Fatal(err)
	}
	// Without the option, as before: the second mount is refused the same way.
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: append([]byte(nil), pw...)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp2, Password: append([]byte(nil), pw...)}); !errors.Is(err, ErrAlreadyMounted) {
		t.Errorf("second mount without shared storage: %v, want ErrAlreadyMounted", err)
	}
	if err := c.UnmountAll(ctx(t)); err != nil {
		t.Fatal(err)
	}
}

// TestMountedAtUnderDev: a vault whose folder lies under /dev (in the tmpfs at /dev/shm) is
// found mounted as any other, so fsck and export go through the daemon instead of asking for
// the password: a mount's source is told by what it is, not by its path's prefix.
func TestMountedAtUnderDev(t *testing.T) {
	daemonEnv(t)
	shm, err := os.MkdirTemp("/dev/shm", "vaultui-test-")
	if err != nil {
		t.Skipf("no /dev/shm to make a vault in: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	cipherdir, mp, pw, _ := newVaultKey(t, shm)
	c := connect(t)
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw}); err != nil {
		t.Fatal(err)
	}
	defer c.UnmountAll(ctx(t))
	if got := MountedAt(cipherdir); got != mp {
		t.Errorf("MountedAt(%s) = %q, want %s", cipherdir, got, mp)
	}
}
