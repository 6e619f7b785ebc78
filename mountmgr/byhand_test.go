package mountmgr

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
)

// unmountByHand unmounts mp outside the daemon, as umount(8) or fusermount3 -u would; lazy
// detaches it (umount -l) even while files on it are open.
func unmountByHand(t *testing.T, mp string, lazy bool) {
	t.Helper()
	if err := unmountByHandErr(mp, lazy); err != nil {
		t.Fatal(err)
	}
}

// unmountByHandErr is unmountByHand returning its error: umount(2) as root, else fusermount3.
func unmountByHandErr(mp string, lazy bool) error {
	if os.Geteuid() == 0 {
		flags := 0
		if lazy {
			flags = unix.MNT_DETACH
		}
		if err := unix.Unmount(mp, flags); err != nil {
			return fmt.Errorf("umount %s: %w", mp, err)
		}
		return nil
	}
	args := []string{"-u", mp}
	if lazy {
		args = []string{"-u", "-z", mp}
	}
	if out, err := exec.Command("fusermount3", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("fusermount3 %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// TestMountAgainAfterUnmountByHand: "umount MP && mount MP" (an fstab line, a script) mounts
// the vault again at once. The daemon learns of the unmount a moment after umount returns;
// a mount request in that moment used to fail with "already mounted". After a lazy unmount
// (umount -l, or the daemon's own: detached) with a file still open on the old mount, whose
// server goes on serving it, a second server of the vault is refused with a message that
// says why, until the file is closed: two servers of one vault corrupt the blocks both write.
func TestMountAgainAfterUnmountByHand(t *testing.T) {
	base := daemonEnv(t)
	cipherdir, mp, pw := newVault(t, base, crypto.AESGCM)
	c := connect(t)
	req := MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw}
	if _, err := c.Mount(ctx(t), req); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(mp, "f")
	if err := os.WriteFile(f, []byte("kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		unmountByHand(t, mp, false)
		if _, err := c.Mount(ctx(t), req); err != nil {
			t.Fatalf("mount %d right after umount by hand: %v", i+1, err)
		}
		if b, err := os.ReadFile(f); err != nil || string(b) != "kept" {
			t.Fatalf("reading back after mount %d: %q, %v", i+1, b, err)
		}
	}

	// A lazy unmount, by hand or by the daemon (detached), with a file held open on it.
	for _, byHand := range []bool{true, false} {
		held, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		if byHand {
			unmountByHand(t, mp, true)
		} else if err := c.Unmount(ctx(t), mp, true); err != nil {
			t.Fatal(err)
		}
		_, err = c.Mount(ctx(t), req)
		if !errors.Is(err, ErrAlreadyMounted) || !strings.Contains(err.Error(), "still serves the files opened on it before") {
			t.Errorf("mount while the lazily unmounted server (by hand %v) still serves a file: %v, want ErrAlreadyMounted saying why", byHand, err)
		}
		b := make([]byte, 4)
		if n, err := held.ReadAt(b, 0); n != 4 || string(b) != "kept" {
			t.Errorf("the file held open on the old mount: read %q, %v", b[:n], err)
		}
		held.Close()
		if _, err := c.Mount(ctx(t), req); err != nil {
			t.Fatalf("mount once the last file on the old mount is closed: %v", err)
		}
		if b, err := os.ReadFile(f); err != nil || string(b) != "kept" {
			t.Fatalf("reading back: %q, %v", b, err)
		}
	}
}

// TestMountRacingUnmountByHand: a mount of the vault where it is mounted, while an unmount by
// hand of that mount is on its way ("umount MP & mount MP", xfstests generic/604), waits for
// the old mount to go and then mounts, rather than refusing it as mounted. Without an unmount
// coming, the request is refused after that short wait.
func TestMountRacingUnmountByHand(t *testing.T) {
	base := daemonEnv(t)
	cipherdir, mp, pw := newVault(t, base, crypto.AESGCM)
	c := connect(t)
	req := MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw}
	if _, err := c.Mount(ctx(t), req); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		done := make(chan error, 1)
		go func() {
			time.Sleep(200 * time.Millisecond)
			done <- unmountByHandErr(mp, false)
		}()
		_, err := c.Mount(ctx(t), req)
		if uerr := <-done; uerr != nil {
			t.Fatalf("umount %d: %v", i+1, uerr)
		}
		if err != nil {
			t.Fatalf("mount %d while an umount by hand is on its way: %v", i+1, err)
		}
		if st, err := c.Status(ctx(t)); err != nil || len(st) != 1 || st[0].MountPoint != mp {
			t.Fatalf("status after mount %d: %+v, %v", i+1, st, err)
		}
	}
	start := time.Now()
	if _, err := c.Mount(ctx(t), req); !errors.Is(err, ErrAlreadyMounted) {
		t.Fatalf("mounting again with no unmount coming: %v, want ErrAlreadyMounted", err)
	}
	if waited := time.Since(start); waited > remountWait+2*time.Second {
		t.Errorf("the refusal took %v", waited)
	}
}

// TestMountAgainWhenAnotherMountTookTheIdentity: the kernel hands an unmounted mount's ID and
// its anonymous device number to the next mount made, and xfstests, running gocryptfs beside
// vaultui, mounted that in the moment between an umount by hand and vaultui's next mount: the
// daemon took the other file system for the vault's old mount and refused the mount as already
// there. A mount is known by its ID and device number, and also by its type and source.
func TestMountAgainWhenAnotherMountTookTheIdentity(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: mounts a tmpfs")
	}
	base := daemonEnv(t)
	cipherdir, mp, pw := newVault(t, base, crypto.AESGCM)
	c := connect(t)
	req := MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw}
	if _, err := c.Mount(ctx(t), req); err != nil {
		t.Fatal(err)
	}
	old, err := mountAt(mp)
	if err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	took := false
	for range 20 {
		unmountByHand(t, mp, false)
		if err := unix.Mount("tmpfs", other, "tmpfs", 0, "size=1m"); err != nil {
			t.Skipf("mount a tmpfs: %v", err)
		}
		id, err := mountAt(other)
		if err != nil {
			t.Fatal(err)
		}
		took = id == old
		if _, err := c.Mount(ctx(t), req); err != nil {
			t.Fatalf("mount after umount by hand, with a tmpfs mounted in between (same identity: %v): %v", took, err)
		}
		unix.Unmount(other, 0)
		if took {
			return
		}
		if old, err = mountAt(mp); err != nil {
			t.Fatal(err)
		}
	}
	t.Skip("the kernel never handed the unmounted mount's ID and device number to the tmpfs")
}

// TestInKernelTellsReusedIdentity: a mount found by its ID and device number is the mount
// only if its type and source are the ones it was made with.
func TestInKernelTellsReusedIdentity(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: mounts a tmpfs")
	}
	dir := t.TempDir()
	if err := unix.Mount("vaultui-test-src", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("mount a tmpfs: %v", err)
	}
	defer unix.Unmount(dir, 0)
	id, err := mountAt(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		typ, source string
		want        bool
	}{
		{"tmpfs", "vaultui-test-src", true},
		{"", "", true}, // not listed when it was made: the identity alone
		{FSType, "vaultui-test-src", false},
		{"tmpfs", "/data/vault", false},
	} {
		m := &mount{mnt: id, mntType: c.typ, mntSource: c.source}
		if _, found, err := m.inKernel(); err != nil || found != c.want {
			t.Errorf("made as %q from %q: found %v, %v; want %v", c.typ, c.source, found, err, c.want)
		}
	}
}
