package vault

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/atomicfile"
	"github.com/vaultui/vaultui/vault/cryptomator"
)

// TestCreateCryptomator: CreateOptions.Cryptomator makes a format 8 SIV_GCM vault that opens
// with the password and with the raw 64-byte key Create returns, at the scrypt cost asked.
func TestCreateCryptomator(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cm")
	key, err := Create(context.Background(), dir, []byte("pw"), CreateOptions{Format: "cryptomator", ScryptLogN: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(key) != 64 {
		t.Fatalf("master key of %d bytes, want Cryptomator's 64", len(key))
	}
	if f, err := Identify(dir); err != nil || f.ID != "cryptomator" {
		t.Fatal("not a Cryptomator vault")
	}
	info, err := cryptomator.ReadInfo(dir)
	if err != nil || info.Format != 8 || info.CipherCombo != cryptomator.SIVGCM || info.ScryptLogN != 10 {
		t.Fatalf("info %+v, %v", info, err)
	}
	k, err := cryptomator.MasterkeyFromRaw(key)
	if err != nil {
		t.Fatal(err)
	}
	v, err := cryptomator.OpenWithKey(dir, k)
	if err != nil {
		t.Fatalf("the printed key does not open the vault: %v", err)
	}
	v.Close()
	vol, err := UnlockVolume(context.Background(), dir, []byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	vol.Close()
}

// TestCreateCryptomatorRefusesGocryptfsOptions: the options a Cryptomator vault has no place
// for are refused, before anything is written, and a bad scrypt cost as for gocryptfs.
func TestCreateCryptomatorRefusesGocryptfsOptions(t *testing.T) {
	for _, o := range []CreateOptions{
		{Cipher: crypto.AESGCM}, {Cipher: crypto.AEGIS}, {PlaintextNames: true},
		{DeterministicNames: true}, {LongNameMax: 100}, {ScryptLogN: 40},
	} {
		o.Format = "cryptomator"
		if err := o.Validate(); !errors.Is(err, ErrCreateOptions) {
			t.Errorf("%+v: Validate %v, want ErrCreateOptions", o, err)
		}
		dir := filepath.Join(t.TempDir(), "cm")
		if _, err := Create(context.Background(), dir, []byte("pw"), o); err == nil {
			t.Errorf("%+v: created", o)
		}
		if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%+v: the refused folder was left: %v", o, err)
		}
	}
}

// TestChangePasswordCryptomator: passwd rewrites masterkey.cryptomator, with the old password
// or the raw key; a wrong key or password changes nothing, nor does a failed write.
func TestChangePasswordCryptomator(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cm")
	key, err := Create(context.Background(), dir, []byte("old"), CreateOptions{Format: "cryptomator", ScryptLogN: 10})
	if err != nil {
		t.Fatal(err)
	}
	opens := func(pw string) bool {
		v, err := cryptomator.Open(context.Background(), dir, []byte(pw))
		if err == nil {
			v.Close()
		}
		return err == nil
	}
	mkPath := filepath.Join(dir, cryptomator.MasterkeyFileName)
	before, _ := os.ReadFile(mkPath)
	if _, err := ChangePassword(context.Background(), dir, PasswordChange{OldPassword: []byte("wrong"), NewPassword: []byte("new")}); !errors.Is(err, ErrWrongPassword) {
		t.Fatalf("wrong old password: %v", err)
	}
	wrongKey := bytes.Repeat([]byte{7}, 64)
	if _, err := ChangePassword(context.Background(), dir, PasswordChange{MasterKey: wrongKey, NewPassword: []byte("new")}); !errors.Is(err, ErrWrongPassword) {
		t.Fatalf("wrong key: %v", err)
	}
	if _, err := ChangePassword(context.Background(), dir, PasswordChange{MasterKey: key[:32], NewPassword: []byte("new")}); err == nil {
		t.Fatal("a 32-byte key was taken")
	}
	for _, at := range []string{"write", "rename"} {
		if _, err := changePassword(context.Background(), atomicfile.Failing{At: at, Err: errors.New("disk full")}, dir, PasswordChange{OldPassword: []byte("old"), NewPassword: []byte("new")}); err == nil {
			t.Fatalf("failing %s: no error", at)
		}
		if after, _ := os.ReadFile(mkPath); !bytes.Equal(after, before) || !opens("old") {
			t.Fatalf("failing %s: the masterkey file changed", at)
		}
	}
	if _, err := ChangePassword(context.Background(), dir, PasswordChange{OldPassword: []byte("old"), NewPassword: []byte("new")}); err != nil {
		t.Fatal(err)
	}
	if !opens("new") || opens("old") {
		t.Fatal("the new password does not open it, or the old one still does")
	}
	if _, err := ChangePassword(context.Background(), dir, PasswordChange{MasterKey: key, NewPassword: []byte("third")}); err != nil {
		t.Fatalf("with the raw key: %v", err)
	}
	if !opens("third") {
		t.Fatal("the password set with the raw key does not open it")
	}
	if info, _ := cryptomator.ReadInfo(dir); info.ScryptLogN != cryptomator.DefaultScryptLogN {
		t.Fatalf("scrypt cost %d after passwd, want 2^10 raised to the default", info.ScryptLogN)
	}
}
