package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/vault"
	"github.com/vaultui/vaultui/vault/cryptomator/cmfixture"
)

// A Cryptomator vault is added and listed as one, described by info, exported and checked
// offline through the same Walker as a gocryptfs vault, and mounted through the daemon.
func TestCryptomatorVault(t *testing.T) {
	ctx := context.Background()
	a, _ := registryApp(t, true)
	dir := cmfixture.Folder(t)
	ad, err := a.Add(ctx, NewEntry{CipherDir: dir, Name: "cm"})
	if err != nil {
		t.Fatal(err)
	}
	if ad.Format.ID != "cryptomator" || ad.Label() != "Cryptomator" {
		t.Fatalf("added as %q (%s)", ad.Format.ID, ad.Label())
	}
	list, err := a.List()
	if err != nil || len(list) != 1 || list[0].Err != nil || list[0].Format.ID != "cryptomator" {
		t.Fatalf("list %+v, %v", list, err)
	}
	info, err := Info(ad.Entry)
	if err != nil {
		t.Fatal(err)
	}
	facts := map[string]string{}
	for _, f := range Describe(info) {
		facts[f.Label] = f.Value
	}
	if strings.Contains(facts["Not supported"]+facts["Not supported yet"], "mounting") {
		t.Errorf("info says mounting is not supported: %q", facts["Not supported"]+facts["Not supported yet"])
	}
	if facts["Format"] != "Cryptomator vault format 8, SIV_GCM" || !strings.Contains(facts["Opens in"], "Cryptomator") ||
		!strings.HasPrefix(facts["Scrypt"], "N=2^15 r=8 p=1") {
		t.Fatalf("facts %q", facts)
	}

	pw, err := cmfixture.Password()
	if err != nil {
		t.Fatal(err)
	}
	w, _, err := a.OpenWalker(ctx, VaultOf(ad.Entry), pw)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	out := filepath.Join(t.TempDir(), "out")
	if err := w.Export(ctx, out, vault.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cmfixture.CheckTree(out); err != nil {
		t.Fatal(err)
	}
	if problems, err := w.Fsck(ctx, nil); err != nil || len(problems) != 0 {
		t.Fatalf("fsck: %v, %v", problems, err)
	}

	k := &fakeKeyring{entries: map[string]string{}, labels: map[string]string{}}
	d := &fakeDaemon{password: "pw"}
	// Mounting goes to the daemon as for a gocryptfs vault (mountmgr/vfs serves both formats).
	_, err = newTestApp(k, d).Mount(ctx, MountRequest{Vault: VaultOf(ad.Entry), MountPoint: filepath.Join(t.TempDir(), "mnt"), Password: []byte("pw")})
	if err != nil || d.tries != 1 {
		t.Fatalf("mount: %v after %d tries", err, d.tries)
	}
	if _, err := os.Stat(filepath.Join(dir, "gocryptfs.conf")); err == nil {
		t.Fatal("a gocryptfs.conf appeared in the Cryptomator vault")
	}
}

// A Cryptomator vault's conflict copies are listed as a gocryptfs vault's are, and settled
// each way: keep both gives the copy its shown name, keep the copy replaces the original,
// keep the original deletes the copy; a copy that does not authenticate is left as it is.
func TestCryptomatorConflictsSettled(t *testing.T) {
	ctx := context.Background()
	for _, keep := range []vault.Keep{vault.KeepBoth, vault.KeepCopy, vault.KeepOriginal, -1} {
		t.Run(fmt.Sprint(keep), func(t *testing.T) {
			a, _ := registryApp(t, true)
			dir := cmfixture.Folder(t)
			// The cipher file of a 1-byte file ("one" or sizes/0000001.bin: either will do).
			var one string
			filepath.WalkDir(filepath.Join(dir, "d"), func(p string, d os.DirEntry, err error) error {
				if info, ierr := os.Lstat(p); one == "" && ierr == nil && info.Mode().IsRegular() && info.Size() == cmfixture.Geometry.CipherSize(1) {
					one = p
				}
				return nil
			})
			copyPath, err := cmfixture.CopyAsConflict(one, ".sync-conflict-20261130-101010-ABCDEF7")
			if err != nil {
				t.Fatal(err)
			}
			tampered := keep == -1
			if tampered {
				b, _ := os.ReadFile(copyPath)
				b[len(b)-1] ^= 1
				if err := os.WriteFile(copyPath, b, 0o600); err != nil {
					t.Fatal(err)
				}
				keep = vault.KeepBoth
			}
			pw, err := cmfixture.Password()
			if err != nil {
				t.Fatal(err)
			}
			c, _, err := a.OpenConflicts(ctx, Vault{CipherDir: dir}, pw)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			list, err := c.List(ctx)
			if err != nil || len(list) != 1 || list[0].Tool != "Syncthing" || list[0].Size != 1 || list[0].Kind != vault.ConflictCopyOfEntry {
				t.Fatalf("conflicts %+v, %v", list, err)
			}
			_, err = c.Settle(ctx, list[0].Path, keep)
			if tampered {
				if !errors.Is(err, vault.ErrCorrupt) {
					t.Fatalf("settling a tampered copy: %v", err)
				}
				if _, err := os.Stat(copyPath); err != nil {
					t.Fatalf("the tampered copy after a refused settle: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("settle %s: %v", keep, err)
			}
			if _, err := os.Lstat(copyPath); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the copy's cipher file after settling: %v", err)
			}
			if _, err := os.Stat(one); err != nil {
				t.Fatalf("the original after settling: %v", err)
			}
			if left, err := c.List(ctx); err != nil || len(left) != 0 {
				t.Fatalf("conflicts after settling: %+v, %v", left, err)
			}
			vol, err := vault.UnlockVolume(context.Background(), dir, pw)
			if err != nil {
				t.Fatal(err)
			}
			defer vol.Close()
			var names []string
			err = vault.WalkVolume(ctx, vol, func(n vault.Node) error {
				if n.Path == list[0].Path || n.Path == list[0].Of {
					names = append(names, n.Path)
				}
				return nil
			}, func(p vault.Problem) { t.Errorf("after settling: %v", p) })
			want := 1
			if keep == vault.KeepBoth {
				want = 2
			}
			if err != nil || len(names) != want {
				t.Fatalf("after settling %s: %v (%v), want %d entries", keep, names, err, want)
			}
		})
	}
}

// A Cryptomator vault mounts for shared storage as a gocryptfs vault does: the request
// reaches the daemon with the option, and the mount says it has it.
func TestCryptomatorSharedStorage(t *testing.T) {
	ctx := context.Background()
	a, _ := registryApp(t, true)
	dir := cmfixture.Folder(t)
	ad, err := a.Add(ctx, NewEntry{CipherDir: dir, Name: "cm"})
	if err != nil {
		t.Fatal(err)
	}
	d := &fakeDaemon{password: "pw"}
	m, err := newTestApp(&fakeKeyring{entries: map[string]string{}, labels: map[string]string{}}, d).Mount(ctx,
		MountRequest{Vault: VaultOf(ad.Entry), MountPoint: filepath.Join(t.TempDir(), "mnt"), Password: []byte("pw"), SharedStorage: true})
	if err != nil || d.tries != 1 || !m.SharedStorage {
		t.Fatalf("mount --sharedstorage: %v after %d tries, %+v", err, d.tries, m)
	}
}
