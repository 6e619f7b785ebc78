package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/vault"
	"github.com/vaultui/vaultui/vault/cryptomator"
)

// cmEnv runs vaultui commands in a fresh home, as the CLI does.
func cmEnv(t *testing.T) (work string, run func(args ...string) (string, string, error)) {
	work = t.TempDir()
	t.Setenv("HOME", filepath.Join(work, "home"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(work, "config"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(work, "cache"))
	return work, func(args ...string) (string, string, error) {
		t.Helper()
		var out, errOut bytes.Buffer
		e := &env{ctx: t.Context(), stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, speed: app.NewSpeed(), app: app.New(app.Options{}), commands: commands}
		err := dispatch(e, args)
		return out.String(), errOut.String(), err
	}
}

func writeFile(t *testing.T, p, s string) string {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestInitCryptomator: "init --format cryptomator" creates a format 8 vault, registers it
// (listed as Cryptomator), prints its raw 64-byte key, said plainly, and "passwd --masterkey"
// takes that key back; the flags of gocryptfs vaults are refused with nothing written.
func TestInitCryptomator(t *testing.T) {
	work, run := cmEnv(t)
	pw := writeFile(t, filepath.Join(work, "pw"), "secret\n")
	dir := filepath.Join(work, "cm.vault")

	for _, bad := range [][]string{
		{"--cipher", "gcm"}, {"--plaintextnames"}, {"--deterministic-names"}, {"--reverse"},
		{"--longnamemax", "100"}, {"--scryptn", "40"}, {"--format", "veracrypt"},
	} {
		args := append(append([]string{"init", "--format", "cryptomator", "--passfile", pw}, bad...), dir)
		_, _, err := run(args...)
		if err == nil || exitCode(err) != exitUsage {
			t.Errorf("init %v: %v (exit %d), want a usage error", bad, err, exitCode(err))
		}
		if _, serr := os.Lstat(dir); !errors.Is(serr, os.ErrNotExist) {
			t.Errorf("init %v left %s", bad, dir)
		}
	}

	out, errOut, err := run("init", "--format", "cryptomator", "--scryptn", "10", "--passfile", pw, dir)
	if err != nil {
		t.Fatalf("init: %v\n%s", err, errOut)
	}
	for _, s := range []string{`Created Cryptomator vault "cm" in`, "vault format 8, SIV_GCM",
		"raw 64-byte key in hex; not Cryptomator's recovery key words", "masterkey.cryptomator is damaged"} {
		if !strings.Contains(out, s) {
			t.Errorf("init output lacks %q:\n%s", s, out)
		}
	}
	hexKey := strings.Join(regexp.MustCompile(`(?m)^    ([0-9a-f-]+)$`).FindAllString(out, -1), "")
	key, err := vault.ParseMasterKey(hexKey)
	if err != nil || len(key) != 64 {
		t.Fatalf("printed key %q: %d bytes, %v", hexKey, len(key), err)
	}
	if info, err := cryptomator.ReadInfo(dir); err != nil || info.Format != 8 || info.ScryptLogN != 10 {
		t.Fatalf("info %+v, %v", info, err)
	}
	list, _, err := run("list")
	if err != nil || !strings.Contains(list, "cm") || !strings.Contains(list, "Cryptomator") {
		t.Fatalf("list (%v):\n%s", err, list)
	}

	newPw := writeFile(t, filepath.Join(work, "new"), "changed\n")
	keyFile := writeFile(t, filepath.Join(work, "key"), hexKey+"\n")
	if _, errOut, err := run("passwd", "--masterkey", keyFile, "--new-passfile", newPw, "cm"); err != nil {
		t.Fatalf("passwd --masterkey: %v\n%s", err, errOut)
	}
	v, err := cryptomator.Open(context.Background(), dir, []byte("changed"))
	if err != nil {
		t.Fatalf("the new password does not open the vault: %v", err)
	}
	v.Close()
	if _, errOut, err := run("passwd", "--passfile", newPw, "--new-passfile", pw, "cm"); err != nil {
		t.Fatalf("passwd: %v\n%s", err, errOut)
	}
	if v, err = cryptomator.Open(context.Background(), dir, []byte("secret")); err != nil {
		t.Fatalf("the password set back does not open the vault: %v", err)
	}
	v.Close()
}
