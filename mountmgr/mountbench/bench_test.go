package mountbench

import (
	"context"
	"os"
	"testing"

	"github.com/vaultui/vaultui/crypto"
)

// TestRunSmall runs the bench on tiny sizes: every figure must come out positive.
func TestRunSmall(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil || os.Geteuid() != 0 {
		t.Skip("needs /dev/fuse and root")
	}
	src := t.TempDir()
	os.WriteFile(src+"/a", []byte("untar me"), 0o644)
	cfg := Config{Dir: t.TempDir(), Size: 4 << 20, RandomReads: 200, Files: 100, Ciphers: []crypto.CipherID{crypto.AESGCM}, UntarFrom: src}
	if _, err := os.Stat("/usr/bin/gocryptfs"); err == nil {
		cfg.Gocryptfs = "/usr/bin/gocryptfs"
	}
	results := Run(context.Background(), cfg, nil)
	if len(results) < 2 {
		t.Fatalf("%d results", len(results))
	}
	for _, r := range results {
		if r.Err != nil {
			t.Errorf("%s: %v", r.Target, r.Err)
			continue
		}
		if r.WriteMBps <= 0 || r.ReadMBps <= 0 || r.RandReadIOPS <= 0 || r.CreatePerSec <= 0 || r.ListPerSec <= 0 || r.UntarSeconds <= 0 {
			t.Errorf("%s: %+v", r.Target, r)
		}
	}
}
