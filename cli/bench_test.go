package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchGocryptfsChoice: --gocryptfs, then $GOCRYPTFS, pick the binary; one named that
// does not exist or is no executable is a usage error before anything is mounted.
func TestBenchGocryptfsChoice(t *testing.T) {
	dir := t.TempDir()
	exe, plain := filepath.Join(dir, "gocryptfs"), filepath.Join(dir, "notes.txt")
	os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(plain, []byte("x"), 0o644)

	t.Setenv("GOCRYPTFS", "")
	if got, err := gocryptfsBinary(exe, false); err != nil || got != exe {
		t.Errorf("--gocryptfs %s: %q, %v", exe, got, err)
	}
	t.Setenv("GOCRYPTFS", exe)
	if got, err := gocryptfsBinary("", false); err != nil || got != exe {
		t.Errorf("$GOCRYPTFS: %q, %v", got, err)
	}
	if got, err := gocryptfsBinary("", true); err != nil || got != "" {
		t.Errorf("--no-gocryptfs: %q, %v", got, err)
	}
	for _, tc := range []struct {
		flag, env, want string
		skip            bool
	}{
		{flag: filepath.Join(dir, "missing"), want: "--gocryptfs"},
		{env: filepath.Join(dir, "missing"), want: "$GOCRYPTFS"},
		{flag: plain, want: "not an executable"},
		{flag: dir, want: "not an executable"},
		{flag: exe, skip: true, want: "contradict"},
	} {
		t.Setenv("GOCRYPTFS", tc.env)
		if _, err := gocryptfsBinary(tc.flag, tc.skip); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v", tc, err)
		}
	}

	// Through the command line: exit code 2 and the path named, nothing run.
	t.Setenv("GOCRYPTFS", "")
	var out, errb bytes.Buffer
	missing := filepath.Join(dir, "missing")
	if code := Main([]string{"bench", "--gocryptfs", missing, "--dir", t.TempDir()}, strings.NewReader(""), &out, &errb); code != exitUsage {
		t.Errorf("exit %d, want %d; %s", code, exitUsage, errb.String())
	}
	if !strings.Contains(errb.String(), missing) || out.Len() != 0 {
		t.Errorf("stdout %q, stderr %q", out.String(), errb.String())
	}
}
