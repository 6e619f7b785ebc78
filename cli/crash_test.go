package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/crashtest"
	"github.com/vaultui/vaultui/internal/testdeps"
	"github.com/vaultui/vaultui/vault"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

// TestPasswdCrash kills "vaultui passwd" on entry to each system call that changes files
// (internal/crashtest) and after it ends: the vault must then open with the old password or
// the new one, never neither, and fsck must find nothing.
func TestPasswdCrash(t *testing.T) {
	testdeps.Need(t, testdeps.Strace)
	work := t.TempDir()
	bin := crashBinary(t, work)
	oldPw, newPw := "first password", "second password"
	for name, pw := range map[string]string{"old": oldPw, "new": newPw} {
		if err := os.WriteFile(filepath.Join(work, name), []byte(pw+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	template := filepath.Join(work, "template")
	if _, err := vault.Create(context.Background(), template, []byte(oldPw), vault.CreateOptions{Cipher: crypto.AESGCM, ScryptLogN: 10}); err != nil {
		t.Fatal(err)
	}
	runs := 0
	censusDir := filepath.Join(work, "v1")
	// run changes the password of a copy of the template under strace, killed at p (nil: not
	// killed), and returns the copy and the tracer.
	run := func(p *crashtest.Point) (string, *crashtest.Tracer, error) {
		runs++
		dir := filepath.Join(work, fmt.Sprintf("v%d", runs))
		if out, err := exec.Command("cp", "-a", template, dir).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v: %s", err, out)
		}
		cmd := exec.Command(bin, "passwd", "--passfile", filepath.Join(work, "old"), "--new-passfile", filepath.Join(work, "new"), dir)
		// One P: the goroutine doing the work then keeps to one thread, and strace counts calls
		// per thread (see crashtest).
		cmd.Env = crashEnv(work)
		paths := []string{dir, filepath.Join(dir, crypto.ConfName), filepath.Join(dir, crypto.ConfName+".tmp")}
		if p != nil { // the census's paths are in its own copy
			q := *p
			q.Path = strings.Replace(q.Path, censusDir, dir, 1)
			p = &q
		}
		w, tr := crashtest.Command(cmd, crashtest.FileCalls, paths, p, work)
		out, err := w.CombinedOutput()
		if err != nil && p == nil {
			t.Fatalf("passwd: %v: %s", err, out)
		}
		return dir, tr, err
	}
	// check requires that exactly one of the passwords opens dir, and that fsck is clean.
	check := func(what, dir string) (newOpens bool) {
		var opens []string
		for _, pw := range []string{oldPw, newPw} {
			v, err := gocryptfs.Unlock(context.Background(), dir, []byte(pw))
			if err != nil {
				continue
			}
			opens = append(opens, pw)
			problems, err := vault.FsckVolume(t.Context(), v.Volume(), nil)
			if err != nil || len(problems) > 0 {
				t.Errorf("%s: fsck: %v %v", what, err, problems)
			}
			v.Close()
		}
		if len(opens) != 1 {
			t.Errorf("%s: the vault opens with %q, want exactly one of the old and new passwords", what, opens)
			return false
		}
		return opens[0] == newPw
	}
	dir, tr, _ := run(nil)
	if !check("after passwd", dir) {
		t.Fatal("passwd did not change the password")
	}
	census, err := tr.Calls()
	if err != nil {
		t.Fatal(err)
	}
	missed := crashtest.Changing(census, func(s string) string { return strings.ReplaceAll(s, dir, "VAULT") })
	for _, p := range crashtest.PathPoints(census) {
		d, tr, _ := run(&p)
		call, _, killed := tr.Killed()
		if !killed {
			continue
		}
		delete(missed, strings.ReplaceAll(call.Text(), d, "VAULT"))
		check(fmt.Sprintf("killed at %s %s", p, call.Line), d)
		t.Logf("passwd: killed at %s: %s", p, call.Line)
	}
	for l := range missed {
		t.Errorf("no run was killed at %s", l)
	}
	t.Logf("passwd: %d runs", runs)
}

// crashBinary returns a "vaultui" in work that runs the real Main (testscript.Main does when
// the binary is called so), for runs under strace.
func crashBinary(t *testing.T, work string) string {
	t.Helper()
	bin := filepath.Join(work, "bin", "vaultui")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(os.Args[0], bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// crashEnv is the environment of a command run under strace: its own directories in work,
// and one P, so the goroutine doing the work keeps to one thread (strace counts calls per
// thread, see crashtest).
func crashEnv(work string) []string {
	return append(os.Environ(), "GOMAXPROCS=1", "HOME="+work, "XDG_CONFIG_HOME="+filepath.Join(work, "config"),
		"XDG_RUNTIME_DIR="+filepath.Join(work, "run"), "XDG_STATE_HOME="+filepath.Join(work, "state"))
}
