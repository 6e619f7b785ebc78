package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/vaulttest"
	"github.com/vaultui/vaultui/vault"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

// TestConvertAsksPlainly: convert counts "1 file", nests no parentheses in its plan, and
// takes y or YES, answered on the terminal, for yes ("Type yes to go on: y" was refused).
func TestConvertAsksPlainly(t *testing.T) {
	work := t.TempDir()
	t.Setenv("HOME", filepath.Join(work, "home"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(work, "config"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(work, "cache"))
	pw := filepath.Join(work, "pw")
	if err := os.WriteFile(pw, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(tty string, args ...string) (string, error) {
		t.Helper()
		var out bytes.Buffer
		e := &env{ctx: t.Context(), stdin: strings.NewReader(""), stdout: &out, stderr: io.Discard, tty: tty,
			app: app.New(app.Options{}), commands: commands}
		err := dispatch(e, args)
		return out.String(), err
	}
	for _, answer := range []string{"y", "YES"} {
		dir := filepath.Join(work, "v-"+answer)
		if out, err := run("", "init", "--cipher", "gcm", "--scryptn", "10", "--passfile", pw, dir); err != nil {
			t.Fatalf("init: %v\n%s", err, out)
		}
		src := filepath.Join(work, "src-"+answer)
		if err := os.MkdirAll(src, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, "one.txt"), []byte("one file"), 0o600); err != nil {
			t.Fatal(err)
		}
		v, err := gocryptfs.Unlock(context.Background(), dir, []byte("secret"))
		if err != nil {
			t.Fatal(err)
		}
		err = vaulttest.Import(context.Background(), v, src)
		v.Close()
		if err != nil {
			t.Fatal(err)
		}

		m, tty := openPTY(t)
		fmt.Fprintf(m, "%s\n", answer)
		out, err := run(tty, "convert", "--to", "aegis", "--passfile", pw, dir)
		if err != nil {
			t.Fatalf("answered %q: %v\n%s", answer, err, out)
		}
		if i, err := vault.ReadInfo(dir); err != nil || i.Cipher != crypto.AEGIS {
			t.Fatalf("answered %q: the vault is %+v, %v", answer, i, err)
		}
		if !strings.Contains(out, " in 1 file. ") {
			t.Errorf("the plan does not count 1 file:\n%s", out)
		}
		for _, line := range strings.Split(out, "\n") {
			depth := 0
			for _, r := range line {
				switch r {
				case '(':
					if depth++; depth > 1 {
						t.Errorf("nested parentheses: %s", line)
					}
				case ')':
					depth--
				}
			}
		}
	}
}
