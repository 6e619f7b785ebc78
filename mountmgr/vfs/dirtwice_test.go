package vfs

import (
	"context"
	"log"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vaultui/vaultui/vault/cryptomator"
	"github.com/vaultui/vaultui/vault/cryptomator/cmfixture"
)

// dirFileOf returns the path of the dir.c9r of the directory at plaintext path p of the
// Cryptomator vault v in dir.
func dirFileOf(t *testing.T, v *cryptomator.Vault, dir, p string) string {
	t.Helper()
	d := v.Root()
	parts := strings.Split(p, "/")
	for i, name := range parts {
		ents, err := v.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		var e *cryptomator.Entry
		for j := range ents {
			if ents[j].Name == name {
				e = &ents[j]
			}
		}
		if e == nil {
			t.Fatalf("%s: no %s", path.Join(parts[:i]...), name)
		}
		if i == len(parts)-1 {
			return filepath.Join(dir, filepath.FromSlash(e.Parent.Path), e.Stored, cryptomator.DirFile)
		}
		if d, err = v.OpenDir(*e); err != nil {
			t.Fatal(err)
		}
	}
	return ""
}

// A dir.c9r naming an ancestor's ID or another folder's (nothing authenticates one) makes
// no loop through the mount: a find ends, reporting the directory reached twice as an I/O
// error, and the log names its cipher path.
func TestCryptomatorDirReachedTwiceMounted(t *testing.T) {
	dir := cmfixture.Folder(t)
	pw, err := cmfixture.Password()
	if err != nil {
		t.Fatal(err)
	}
	v, err := cryptomator.Open(context.Background(), dir, pw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() }) // after the unmount, which mountTest registers later
	for _, ft := range [][2]string{{"sub/deeper/deepest", "sub"}, {"empty-dir", "sizes"}} {
		id, err := os.ReadFile(dirFileOf(t, v, dir, ft[1]))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dirFileOf(t, v, dir, ft[0]), id, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var logged lockedBuffer
	mp, _ := mountTest(t, CryptomatorVolume{v}, Options{ReadOnly: true, Logger: log.New(&logged, "", 0)})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "find", mp).CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("find through the mount did not end: %d bytes of output", len(out))
	}
	// The loop is refused as an I/O error (the kernel alone would say ELOOP, with the node
	// linked under its descendant all the same), and find goes on with the rest. The
	// folder shown as both empty-dir and sizes is one node; the kernel shows it under one
	// name at a time.
	text := string(out)
	if !strings.Contains(text, "‘"+filepath.Join(mp, "sub/deeper/deepest")+"’: Input/output error") {
		t.Errorf("find did not report sub/deeper/deepest as an I/O error:\n%s", text)
	}
	if !strings.Contains(text, "/0000001.bin\n") || !strings.Contains(text, filepath.Join(mp, "sub", "deeper", "-dash-first")) {
		t.Errorf("find did not go on past the directories reached twice:\n%s", text)
	}
	lg := logText(&logged)
	if !strings.Contains(lg, "reached twice") || !strings.Contains(lg, ".c9r") || strings.Contains(lg, "deepest") {
		t.Errorf("the log should name the directory reached twice by its cipher path only:\n%s", lg)
	}
}

func logText(l *lockedBuffer) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
