package mountmgr

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
)

func TestCheckNesting(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(p string) string {
		p = filepath.Join(base, p)
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cipher := mk("vault")
	inside := mk("vault/sub/mnt")
	other := mk("elsewhere")
	// Symlinks that hide the nesting: a link to the cipherdir, and one into it.
	linkToCipher := filepath.Join(base, "link-to-vault")
	linkInside := filepath.Join(base, "link-inside")
	parentOfCipher := filepath.Join(base, "link-parent")
	for _, l := range [][2]string{{cipher, linkToCipher}, {inside, linkInside}, {base, parentOfCipher}} {
		if err := os.Symlink(l[0], l[1]); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		cipher, mnt string
		want        string // "" for accepted
	}{
		{cipher, other, ""},
		{cipher, filepath.Join(base, "vault2"), ""}, // a sibling sharing a name prefix
		{cipher, filepath.Join(base, "missing"), ""},
		{cipher, cipher, "is the vault's cipherdir"},
		{cipher, linkToCipher, "is the vault's cipherdir"},
		{cipher, inside, "is inside the vault's cipherdir"},
		{linkToCipher, linkInside, "is inside the vault's cipherdir"},
		{cipher, base, "cipherdir " + cipher + " is inside mount point"},
		{cipher, parentOfCipher, "is inside mount point"},
		{"/", other, "is inside the vault's cipherdir"},
		// Not made yet: where it would be made decides (edit and add take such paths).
		{cipher, filepath.Join(cipher, "new", "mnt"), "is inside the vault's cipherdir"},
		{linkToCipher, filepath.Join(linkToCipher, "new"), "is inside the vault's cipherdir"},
	} {
		if tc.mnt == filepath.Join(base, "vault2") {
			mk("vault2")
		}
		err := CheckNesting(tc.cipher, tc.mnt)
		if tc.want == "" {
			if err != nil {
				t.Errorf("CheckNesting(%s, %s) = %v, want nil", tc.cipher, tc.mnt, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrNested) || !errors.Is(err, ErrMountpoint) {
			t.Errorf("CheckNesting(%s, %s) = %v, want %q wrapping ErrNested and ErrMountpoint", tc.cipher, tc.mnt, err, tc.want)
		}
		if tc.mnt == linkToCipher && !strings.Contains(err.Error(), "real paths") {
			t.Errorf("error hides the real paths: %v", err)
		}
	}
}

// TestMountNestedRefused: the daemon itself refuses nested places (a client other than the
// CLI, or a race with its pre-check), with ErrMountpoint across the socket, and mounts nothing.
func TestMountNestedRefused(t *testing.T) {
	base := daemonEnv(t)
	cipherdir, _, pw := newVault(t, base, crypto.AESGCM)
	inside := filepath.Join(cipherdir, "mnt")
	if err := os.Mkdir(inside, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(inside, link); err != nil {
		t.Fatal(err)
	}
	c := connect(t)
	for mp, want := range map[string]string{
		inside:    "is inside the vault's cipherdir",
		link:      "is inside the vault's cipherdir",
		cipherdir: "is the vault's cipherdir",
	} {
		_, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: append([]byte(nil), pw...)})
		if !errors.Is(err, ErrMountpoint) || !strings.Contains(err.Error(), want) {
			t.Errorf("mount at %s: %v, want %q (ErrMountpoint)", mp, err, want)
		}
	}
	if left := mountsUnder(base); len(left) != 0 {
		t.Fatalf("mounted anyway: %v", left)
	}
	if st, err := c.Status(ctx(t)); err != nil || len(st) != 0 {
		t.Fatalf("status: %+v, %v", st, err)
	}
}

// TestCheckNestingBindMount: a bind mount of the cipherdir is a second spelling no symlink
// resolution sees; identity does.
func TestCheckNestingBindMount(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("bind mounts need root")
	}
	base := t.TempDir()
	cipher := filepath.Join(base, "vault")
	bind := filepath.Join(base, "bind")
	for _, d := range []string{cipher + "/sub", bind} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := unix.Mount(cipher, bind, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("bind mount: %v", err)
	}
	defer unix.Unmount(bind, unix.MNT_DETACH)
	err := CheckNesting(cipher, filepath.Join(bind, "sub"))
	if !errors.Is(err, ErrNested) || !strings.Contains(err.Error(), "is inside the vault's cipherdir") {
		t.Fatalf("mount point inside a bind mount of the cipherdir: %v, want ErrNested", err)
	}
}
