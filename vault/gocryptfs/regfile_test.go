package gocryptfs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/atomicfile"
	"github.com/vaultui/vaultui/vault/layout"
)

// TestConfigNotARegularFile: a conf that is a FIFO (which used to block LoadConfig
// forever), a directory, a symbolic link or a link loop is refused at once, as corrupt, with
// an error saying what it is (registry's TestResolveConfigNotARegularFile: the registry still
// treats the directory as a vault, so the user gets that message instead of "not a vault").
func TestConfigNotARegularFile(t *testing.T) {
	good := t.TempDir()
	if _, err := Create(context.Background(), atomicfile.OS{}, good, []byte("pw"), CreateOptions{ScryptLogN: crypto.MinScryptLogN}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		make func(p string) error
		want string
	}{
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o600) }, "FIFO"},
		{"dir", func(p string) error { return os.Mkdir(p, 0o700) }, "a directory"},
		{"symlink", func(p string) error { return os.Symlink(filepath.Join(good, crypto.ConfName), p) }, "symbolic link"},
		{"loop", func(p string) error { return os.Symlink(p, p) }, "symbolic link"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := c.make(filepath.Join(dir, crypto.ConfName)); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { _, err := LoadConfig(dir); done <- err }()
			var err error
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("LoadConfig hangs")
			}
			if !errors.Is(err, layout.ErrCorrupt) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("LoadConfig: %v, want layout.ErrCorrupt saying %q", err, c.want)
			}
		})
	}
	// The same for a directory IV.
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, crypto.DirIVName), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadDirIV(dir); !errors.Is(err, layout.ErrCorrupt) || !strings.Contains(err.Error(), "FIFO") {
		t.Errorf("ReadDirIV of a FIFO: %v", err)
	}
}

// TestLongNameFIFODoesNotHang: a long name's .name file that is a FIFO is refused at once
// (it used to block the reader: fsck, export, the master-key check of passwd).
func TestLongNameFIFODoesNotHang(t *testing.T) {
	dir := t.TempDir()
	mk, err := Create(context.Background(), atomicfile.OS{}, dir, []byte("pw"), CreateOptions{ScryptLogN: crypto.MinScryptLogN})
	if err != nil {
		t.Fatal(err)
	}
	long := "longname.Ej1cG7yLdnl2Re0r0Lhrv2cqCIQmSgq2cpGzQW3ojwQ"
	os.WriteFile(filepath.Join(dir, long), nil, 0o600)
	if err := syscall.Mkfifo(filepath.Join(dir, long+crypto.LongNameSuffix), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := UnlockWithMasterKey(dir, mk); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a key checked on nothing but a broken long name was accepted")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the master-key check hangs on a FIFO .name file")
	}
}
