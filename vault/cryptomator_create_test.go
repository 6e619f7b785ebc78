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
	key, err := Create(context.Background(), dir, []byte("pw"), CreateOptions{Cryptomator: true, ScryptLogN: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(key) != 64 {
		t.Fatalf("master key of %d bytes, want Cryptomator's 64", len(key))
	}
	if !IsCryptomator(dir) {
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
		o.Cryptomator = true
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
	key, err := Create(context.Background(), dir, []byte("old"), CreateOptions{Cryptomator: true, ScryptLogN: 10})
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
	if err := ChangePassword(context.Background(), dir, []byte("wrong"), nil, []byte("new")); !errors.Is(err, ErrWrongPassword) {
		t.Fatalf("wrong old password: %v", err)
	}
	wrongKey := bytes.Repeat([]byte{7}, 64)
	if err := ChangePassword(context.Background(), dir, nil, wrongKey, []byte("new")); !errors.Is(err, ErrWrongPassword) {
		t.Fatalf("wrong key: %v", err)
	}
	if err := ChangePassword(context.Background(), dir, nil, key[:32], []byte("new")); err == nil {
		t.Fatal("a 32-byte key was taken")
	}
	for _, at := range []string{"write", "rename"} {
		if err := changePassword(context.Background(), atomicfile.Failing{At: at, Err: errors.New("disk full")}, dir, []byte("old"), nil, []byte("new"), true); err == nil {
			t.Fatalf("failing %s: no error", at)
		}
		if after, _ := os.ReadFile(mkPath); !bytes.Equal(after, before) || !opens("old") {
			t.Fatalf("failing %s: the masterkey file changed", at)
		}
	}
	if err := ChangePassword(context.Background(), dir, []byte("old"), nil, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if !opens("new") || opens("old") {
		t.Fatal("the new password does not open it, or the old one still does")
	}
	if err := ChangePassword(context.Background(), dir, nil, key, []byte("third")); err != nil {
		t.Fatalf("with the raw key: %v", err)
	}
	if !opens("third") {
		t.Fatal("the password set with the raw key does not open it")
	}
	if info, _ := cryptomator.ReadInfo(dir); info.ScryptLogN != 10 {
		t.Fatalf("scrypt cost %d after passwd, want 10 kept", info.ScryptLogN)
	}
}
