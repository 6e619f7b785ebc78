package mountmgr

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/crypto"
)

// A mounted vault's paths map both ways through the daemon, by mount point or cipherdir,
// without the password: each cipher path names the real cipher file, long names included,
// a leaf that does not exist maps too, and a bad path is an error of its own. Once the vault
// is unmounted, the daemon says so.
func TestMapPaths(t *testing.T) {
	base := daemonEnv(t)
	cipherdir, mp, pw := newVault(t, base, crypto.AESGCM)
	c := connect(t)
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw}); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("a long name ", 20)
	if err := os.MkdirAll(filepath.Join(mp, "docs", long), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mp, "docs", long, "plan.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	plain := []string{"docs", "docs/" + long, "/docs/" + long + "/plan.txt", "docs/not yet"}
	enc, err := c.MapPaths(ctx(t), mp, true, plain)
	if err != nil || len(enc) != len(plain) {
		t.Fatalf("encrypt: %v %+v", err, enc)
	}
	var cipher []string
	for i, r := range enc {
		if r.Error != "" {
			t.Fatalf("encrypt %q: %s", plain[i], r.Error)
		}
		_, err := os.Lstat(filepath.Join(cipherdir, r.Path))
		if exists := err == nil; exists != (i < 3) {
			t.Errorf("%q -> %q: exists in the cipherdir: %v", plain[i], r.Path, err)
		}
		cipher = append(cipher, r.Path)
	}
	if !strings.Contains(cipher[1], crypto.LongNamePrefix) {
		t.Errorf("long name maps to %q", cipher[1])
	}
	dec, err := c.MapPaths(ctx(t), cipherdir, false, append(cipher, "", "docs"))
	if err != nil || len(dec) != len(cipher)+2 {
		t.Fatalf("decrypt: %v %+v", err, dec)
	}
	for i := range cipher {
		if want := strings.TrimPrefix(plain[i], "/"); dec[i].Path != want || dec[i].Error != "" {
			t.Errorf("decrypt %q = %+v, want %q", cipher[i], dec[i], want)
		}
	}
	if dec[4].Error == "" || dec[5].Error == "" {
		t.Errorf("bad paths mapped: %+v", dec[4:])
	}
	if err := c.Unmount(ctx(t), mp, false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.MapPaths(ctx(t), mp, false, cipher); !errors.Is(err, ErrNotMounted) {
		t.Fatalf("after unmount: %v, want ErrNotMounted", err)
	}
}

// A recovery mount is read-only whatever the request says, and says it is for recovery.
func TestForceDecodeMount(t *testing.T) {
	base := daemonEnv(t)
	cipherdir, mp, pw := newVault(t, base, crypto.AESGCM)
	c := connect(t)
	info, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw, ForceDecode: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Unmount(ctx(t), mp, false)
	if !info.ForceDecode || !info.ReadOnly {
		t.Errorf("mount info %+v: want ForceDecode and ReadOnly", info)
	}
	if err := os.WriteFile(filepath.Join(mp, "x"), nil, 0o644); err == nil {
		t.Error("a recovery mount took a write")
	}
}
