package vault

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/atomicfile"
	"github.com/vaultui/vaultui/vault/cryptomator"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

var testPassword = []byte("correct horse battery staple")

func createTest(t *testing.T, opts CreateOptions) (string, []byte) {
	t.Helper()
	if opts.ScryptLogN == 0 {
		opts.ScryptLogN = 10 // cheap for tests
	}
	dir := filepath.Join(t.TempDir(), "cipher")
	mk, err := Create(context.Background(), dir, testPassword, opts)
	if err != nil {
		t.Fatal(err)
	}
	return dir, mk
}

func TestCreateFlagsMatchGocryptfs(t *testing.T) {
	// What gocryptfs -init wrote for the fixtures with the same options.
	for name, opts := range map[string]CreateOptions{
		"gcm-default":    {},
		"xchacha":        {Cipher: crypto.XChaCha},
		"aessiv":         {Cipher: crypto.AESSIV},
		"aegis256x2":     {Cipher: crypto.AEGIS},
		"plaintextnames": {PlaintextNames: true},
		"deterministic":  {DeterministicNames: true},
		"longnamemax":    {LongNameMax: 62},
	} {
		f := loadFixture(t, name)
		want, err := gocryptfs.LoadConfig(f.dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := opts.gocryptfsOptions().Flags(); !slices.Equal(got, want.FeatureFlags) {
			t.Errorf("%s: flags %v, gocryptfs wrote %v", name, got, want.FeatureFlags)
		}
		dir, mk := createTest(t, opts)
		c, err := gocryptfs.LoadConfig(dir)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(c.FeatureFlags, want.FeatureFlags) || c.LongNameMax != want.LongNameMax || c.Version != 2 {
			t.Errorf("%s: config %+v", name, c)
		}
		if c.Creator != DefaultCreator || c.ScryptObject.N != 1024 || len(c.ScryptObject.Salt) != 32 {
			t.Errorf("%s: creator/scrypt %+v", name, c)
		}
		fi, err := os.Stat(filepath.Join(dir, crypto.ConfName))
		if err != nil || fi.Mode().Perm() != 0o400 {
			t.Errorf("%s: config mode %v %v", name, fi.Mode(), err)
		}
		// The cipherdir holds exactly what gocryptfs -init writes.
		ents, _ := os.ReadDir(dir)
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		wantNames := []string{crypto.ConfName, crypto.DirIVName}
		if opts.PlaintextNames || opts.DeterministicNames {
			wantNames = wantNames[:1]
		}
		if !slices.Equal(names, wantNames) {
			t.Errorf("%s: cipherdir holds %v, want %v", name, names, wantNames)
		}
		if slices.Contains(names, crypto.DirIVName) {
			fi, _ := os.Stat(filepath.Join(dir, crypto.DirIVName))
			if fi.Size() != 16 || fi.Mode().Perm() != 0o440 {
				t.Errorf("%s: diriv %v %d", name, fi.Mode(), fi.Size())
			}
		}
		v, err := gocryptfs.Unlock(context.Background(), dir, testPassword)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if v.Content.Cipher() != c.Cipher() || (v.Names == nil) != opts.PlaintextNames {
			t.Errorf("%s: unlocked %s names=%v", name, v.Content.Cipher(), v.Names != nil)
		}
		v.Close()
		if _, err := gocryptfs.UnlockWithMasterKey(dir, mk); !errors.Is(err, ErrKeyUnverifiable) {
			t.Errorf("%s: master key on an empty vault: %v, want ErrKeyUnverifiable", name, err)
		}
		v2, err := gocryptfs.OpenWithMasterKey(dir, mk)
		if err != nil {
			t.Fatal(err)
		}
		v2.Close()
	}
}

func TestCreateRefusals(t *testing.T) {
	base := t.TempDir()
	full := filepath.Join(base, "full")
	os.Mkdir(full, 0o755)
	os.WriteFile(filepath.Join(full, "x"), nil, 0o644)
	if _, err := Create(context.Background(), full, testPassword, CreateOptions{ScryptLogN: 10}); !errors.Is(err, ErrNotEmpty) {
		t.Errorf("non-empty dir: %v", err)
	}
	if ents, _ := os.ReadDir(full); len(ents) != 1 {
		t.Errorf("non-empty dir was written to: %v", ents)
	}
	bad := []CreateOptions{
		{Cipher: "rot13"},
		{PlaintextNames: true, DeterministicNames: true},
		{LongNameMax: 20},
		{LongNameMax: 300},
		{PlaintextNames: true, LongNameMax: 100},
		{ScryptLogN: 5},
	}
	for i, o := range bad {
		dir := filepath.Join(base, "bad", string(rune('a'+i)))
		os.MkdirAll(filepath.Dir(dir), 0o755)
		verr := o.Validate()
		if verr == nil {
			t.Errorf("Validate accepted %+v", o)
		}
		if _, err := Create(context.Background(), dir, testPassword, o); err == nil || err.Error() != verr.Error() {
			t.Errorf("options %+v: Create says %v, Validate %v", o, err, verr)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("options %+v left %s behind", o, dir)
		}
	}
	if _, err := Create(context.Background(), filepath.Join(base, "nopw"), nil, CreateOptions{ScryptLogN: 10}); err == nil {
		t.Error("empty password accepted")
	}
	// Folders it made above the vault go too when it fails, and stay when it works.
	deep := filepath.Join(base, "deep", "er", "v")
	if _, err := create(context.Background(), atomicfile.Failing{At: "write", Err: errors.New("injected crash")}, deep, testPassword, CreateOptions{ScryptLogN: 10}); err == nil {
		t.Fatal("injected failure ignored")
	}
	if _, err := os.Stat(filepath.Join(base, "deep")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed Create left the folders it made above %s", deep)
	}
	if key, err := Create(context.Background(), deep, testPassword, CreateOptions{ScryptLogN: 10}); err != nil {
		t.Errorf("Create below missing folders: %v", err)
	} else {
		crypto.Wipe(key)
	}
	// A failure while writing the config leaves nothing behind.
	crash := atomicfile.Failing{At: "write", Err: errors.New("injected crash")}
	dir := filepath.Join(base, "crash")
	if _, err := create(context.Background(), crash, dir, testPassword, CreateOptions{ScryptLogN: 10}); err == nil {
		t.Fatal("injected failure ignored")
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("failed Create left %s behind", dir)
	}
	empty := filepath.Join(base, "empty")
	os.Mkdir(empty, 0o755)
	if _, err := create(context.Background(), crash, empty, testPassword, CreateOptions{ScryptLogN: 10}); err == nil {
		t.Fatal("injected failure ignored")
	}
	if ents, _ := os.ReadDir(empty); len(ents) != 0 {
		t.Errorf("failed Create left %v in an existing dir", ents)
	}
}

func TestUnlockErrors(t *testing.T) {
	f := loadFixture(t, "gcm-default")
	if _, err := gocryptfs.Unlock(context.Background(), f.dir, []byte("wrong")); !errors.Is(err, ErrWrongPassword) || !strings.Contains(err.Error(), f.dir) {
		t.Errorf("wrong password: %v", err)
	}
	if _, err := gocryptfs.Unlock(context.Background(), t.TempDir(), f.password); !errors.Is(err, ErrNotFound) {
		t.Errorf("no vault: %v", err)
	}
	if _, err := gocryptfs.UnlockWithMasterKey(f.dir, make([]byte, 16)); err == nil {
		t.Error("16-byte master key accepted")
	}
	v, err := gocryptfs.Unlock(context.Background(), f.dir, f.password)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	iv, err := v.DirIV("")
	if err != nil || len(iv) != 16 {
		t.Fatalf("root IV: %v", err)
	}
	if _, err := v.DirIV("does-not-exist"); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "gocryptfs.diriv") {
		t.Errorf("missing diriv: %v", err)
	}
	short := filepath.Join(t.TempDir())
	os.WriteFile(filepath.Join(short, crypto.DirIVName), []byte("short"), 0o440)
	if _, err := v.DirIV(short); !errors.Is(err, ErrCorrupt) {
		t.Errorf("short diriv: %v", err)
	}
	os.Remove(filepath.Join(short, crypto.DirIVName))
	os.WriteFile(filepath.Join(short, crypto.DirIVName), bytes.Repeat([]byte{1}, 17), 0o440)
	if _, err := v.DirIV(short); !errors.Is(err, ErrCorrupt) {
		t.Errorf("long diriv: %v", err)
	}
	d := loadFixture(t, "deterministic")
	dv, err := gocryptfs.Unlock(context.Background(), d.dir, d.password)
	if err != nil {
		t.Fatal(err)
	}
	if iv, err := dv.DirIV("anything"); err != nil || !bytes.Equal(iv, make([]byte, 16)) {
		t.Errorf("deterministic IV: %x %v", iv, err)
	}
}

func TestChangePassword(t *testing.T) {
	dir, mk := createTest(t, CreateOptions{})
	newPw := []byte("new password")
	if _, err := ChangePassword(context.Background(), dir, PasswordChange{OldPassword: []byte("wrong"), NewPassword: newPw}); !errors.Is(err, ErrWrongPassword) {
		t.Fatalf("wrong old password: %v", err)
	}
	if _, err := ChangePassword(context.Background(), dir, PasswordChange{OldPassword: testPassword, NewPassword: newPw}); err != nil {
		t.Fatal(err)
	}
	if _, err := gocryptfs.Unlock(context.Background(), dir, testPassword); !errors.Is(err, ErrWrongPassword) {
		t.Errorf("old password still works: %v", err)
	}
	v, err := gocryptfs.Unlock(context.Background(), dir, newPw)
	if err != nil {
		t.Fatal(err)
	}
	v.Close()
	// With the master key instead of the old password: the vault is empty, so the key cannot
	// be checked; only ChangePasswordUnverified (after the user confirmed) reseals.
	before, _ := os.ReadFile(filepath.Join(dir, crypto.ConfName))
	if _, err := ChangePassword(context.Background(), dir, PasswordChange{MasterKey: mk, NewPassword: testPassword}); !errors.Is(err, ErrKeyUnverifiable) {
		t.Fatalf("unverifiable master key: %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, crypto.ConfName)); !bytes.Equal(before, after) {
		t.Fatal("config changed with an unverified key")
	}
	if _, err := ChangePassword(context.Background(), dir, PasswordChange{MasterKey: mk, NewPassword: testPassword, Unverified: true}); err != nil {
		t.Fatal(err)
	}
	if v, err := gocryptfs.Unlock(context.Background(), dir, testPassword); err != nil {
		t.Fatal(err)
	} else {
		v.Close()
	}
	// The config, its backup and the root's diriv; nothing else.
	ents, _ := os.ReadDir(dir)
	if len(ents) != 3 {
		t.Errorf("passwd left extra files: %v", ents)
	}
}

// TestChangePasswordCrash fails the backup's or the config's write in the middle and, with
// the file complete and synced, its rename: the old config must be intact, the old password
// must still work, and no temporary file is left.
func TestChangePasswordCrash(t *testing.T) {
	dir, _ := createTest(t, CreateOptions{})
	conf := filepath.Join(dir, crypto.ConfName)
	before, _ := os.ReadFile(conf)
	for _, stage := range []string{"write", "rename"} {
		for _, tmp := range []string{conf + ".bak.tmp", conf + ".tmp"} {
			what := stage + " of " + filepath.Base(tmp)
			crash := atomicfile.Failing{At: stage, Err: errors.New("injected crash at " + what), Tmp: tmp}
			_, err := changePassword(context.Background(), crash, dir, PasswordChange{OldPassword: testPassword, NewPassword: []byte("new"), ScryptLogN: 10})
			if err == nil || !strings.Contains(err.Error(), "injected crash") {
				t.Fatalf("%s: %v", what, err)
			}
			if after, _ := os.ReadFile(conf); !bytes.Equal(before, after) {
				t.Fatalf("%s: config changed", what)
			}
			if v, err := gocryptfs.Unlock(context.Background(), dir, testPassword); err != nil {
				t.Fatalf("%s: old password: %v", what, err)
			} else {
				v.Close()
			}
			if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: temporary file left behind", what)
			}
		}
	}
	// A temporary file left by a real crash does not block the next change.
	os.WriteFile(conf+".tmp", []byte("half"), 0o400)
	if _, err := ChangePassword(context.Background(), dir, PasswordChange{OldPassword: testPassword, NewPassword: []byte("new"), ScryptLogN: 10}); err != nil {
		t.Fatal(err)
	}
}

// TestChangePasswordBackupAndCost: passwd keeps the key file as it was in a .bak beside it,
// which the old password opens (as gocryptfs -passwd keeps one), of both formats; and it
// reseals at the vault's cost raised to the format's default, so a cost someone edited down
// in the file is not carried over, unless a cost is asked for.
func TestChangePasswordBackupAndCost(t *testing.T) {
	for _, cm := range []bool{false, true} {
		t.Run(fmt.Sprint("cryptomator=", cm), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "v")
			if _, err := Create(context.Background(), dir, []byte("old"), CreateOptions{ScryptLogN: 10, Format: formatIf(cm)}); err != nil {
				t.Fatal(err)
			}
			keyFile, def := filepath.Join(dir, crypto.ConfName), crypto.DefaultScryptLogN
			if cm {
				keyFile, def = filepath.Join(dir, cryptomator.MasterkeyFileName), cryptomator.DefaultScryptLogN
			}
			cost := func() int {
				i, err := ReadInfo(dir)
				if err != nil {
					t.Fatal(err)
				}
				return i.ScryptLogN
			}
			old, _ := os.ReadFile(keyFile)
			backup, err := ChangePassword(context.Background(), dir, PasswordChange{OldPassword: []byte("old"), NewPassword: []byte("new")})
			if err != nil {
				t.Fatal(err)
			}
			if backup != keyFile+".bak" {
				t.Errorf("backup at %s, want %s.bak", backup, keyFile)
			}
			if kept, _ := os.ReadFile(backup); !bytes.Equal(kept, old) {
				t.Error("the backup is not the old key file")
			}
			if got := cost(); got != def {
				t.Errorf("cost 2^%d after passwd of a 2^10 vault, want the default 2^%d", got, def)
			}
			if _, err := ChangePassword(context.Background(), dir, PasswordChange{OldPassword: []byte("new"), NewPassword: []byte("newer"), ScryptLogN: 11}); err != nil {
				t.Fatal(err)
			}
			if got := cost(); got != 11 {
				t.Errorf("cost 2^%d after passwd --scryptn 11", got)
			}
			// The vault still works, and fsck sees no stranger in the backup.
			v, err := UnlockVolume(context.Background(), dir, []byte("newer"))
			if err != nil {
				t.Fatal(err)
			}
			v.Close()
		})
	}
}

func TestWrongMasterKey(t *testing.T) {
	for _, name := range []string{"gcm-default", "plaintextnames", "deterministic"} {
		f := loadFixture(t, name)
		wrong := bytes.Repeat([]byte{0x42}, 32)
		if _, err := gocryptfs.UnlockWithMasterKey(f.dir, wrong); !errors.Is(err, ErrWrongPassword) {
			t.Errorf("%s: wrong master key: %v", name, err)
		}
		before, _ := os.ReadFile(filepath.Join(f.dir, crypto.ConfName))
		if _, err := ChangePassword(context.Background(), f.dir, PasswordChange{MasterKey: wrong, NewPassword: []byte("new")}); !errors.Is(err, ErrWrongPassword) {
			t.Errorf("%s: passwd with a wrong master key: %v", name, err)
		}
		after, _ := os.ReadFile(filepath.Join(f.dir, crypto.ConfName))
		if !bytes.Equal(before, after) {
			t.Errorf("%s: config changed", name)
		}
		// The right key (opened from the password) is accepted.
		c, _ := gocryptfs.LoadConfig(f.dir)
		mk, err := c.OpenMasterKey(context.Background(), f.dir, f.password)
		if err != nil {
			t.Fatal(err)
		}
		v, err := gocryptfs.UnlockWithMasterKey(f.dir, mk)
		if err != nil {
			t.Fatalf("%s: right master key: %v", name, err)
		}
		v.Close()
	}
}

func TestCheckNewCipherDir(t *testing.T) {
	dir := t.TempDir()
	if err := CheckNewCipherDir(dir); err != nil {
		t.Errorf("empty dir: %v", err)
	}
	if err := CheckNewCipherDir(filepath.Join(dir, "new")); err != nil {
		t.Errorf("new dir in existing parent: %v", err)
	}
	// Missing folders above it are made, as for the mount point (issue 39: the wizard's folder
	// step refused "~/Sync/work.enc" without ~/Sync, which its mount point step would make).
	if err := CheckNewCipherDir(filepath.Join(dir, "no", "such")); err != nil {
		t.Errorf("missing parent: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CheckNewCipherDir(filepath.Join(dir, "f", "below", "v")); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("a file above it: %v", err)
	}
	if err := CheckNewCipherDir(dir); !errors.Is(err, ErrNotEmpty) {
		t.Errorf("non-empty dir: got %v, want ErrNotEmpty", err)
	}
	if err := CheckNewCipherDir(filepath.Join(dir, "f")); err == nil {
		t.Error("a regular file was accepted as a new cipherdir")
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Error("CheckNewCipherDir created a directory")
	}
}

// TestCreateOptionRulesLiveOnce: the rules about which options go together are Validate's
// alone; no front end words one of them again (they get Validate's error through
// app.CheckCreate).
func TestCreateOptionRulesLiveOnce(t *testing.T) {
	for _, o := range []CreateOptions{{PlaintextNames: true, DeterministicNames: true}, {PlaintextNames: true, LongNameMax: 100}} {
		if err := o.Validate(); !errors.Is(err, ErrCreateOptions) {
			t.Errorf("%+v: %v, want ErrCreateOptions", o, err)
		}
	}
	if err := (CreateOptions{}).Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	phrases := []string{"plaintext names and deterministic names exclude each other", "only apply to encrypted names", "cannot be combined with --deterministic-names", "needs encrypted names"}
	found := map[string][]string{}
	filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Error(err)
			return nil
		}
		for _, ph := range phrases {
			if n := strings.Count(string(b), ph); n > 0 {
				found[ph] = append(found[ph], fmt.Sprintf("%s (%d)", p, n))
			}
		}
		return nil
	})
	for _, ph := range phrases {
		if ph == "cannot be combined with --deterministic-names" {
			if len(found[ph]) != 0 {
				t.Errorf("%q is worded again in %v", ph, found[ph])
			}
			continue
		}
		if want := []string{filepath.Join("..", "vault", "create.go") + " (1)"}; !reflect.DeepEqual(found[ph], want) {
			t.Errorf("%q is in %v, want only %v", ph, found[ph], want)
		}
	}
}

// formatIf is the Cryptomator format's ID if cm, else the default format's.
func formatIf(cm bool) string {
	if cm {
		return "cryptomator"
	}
	return ""
}
