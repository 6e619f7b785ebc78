package vault

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/layout"
)

// A vault with a flipped byte in block 1 of one file and a damaged name: a plain export stops
// at the first damage and leaves no zero-filled copy of it behind; a forced one goes on,
// writes the file with block 1 as zeros and the rest intact, writes the entry whose name
// does not decrypt under its bad name, and reports both.
func TestExportForce(t *testing.T) {
	_, v := unlockFixture(t, "gcm-default")
	clean := filepath.Join(t.TempDir(), "clean")
	if err := ExportVolume(context.Background(), v.Volume(), clean, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	cipher := map[string]string{}
	if err := WalkVolume(context.Background(), v.Volume(), func(n Node) error {
		cipher[n.Path] = n.CipherPath
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(v.Dir, cipher["size-8192.bin"]), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	off := int64(crypto.HeaderLen + v.Content.CipherBlockSize() + 50)
	b := []byte{0}
	f.ReadAt(b, off)
	b[0] ^= 1
	f.WriteAt(b, off)
	f.Close()
	plain := filepath.Join(t.TempDir(), "plain")
	err = ExportVolume(context.Background(), v.Volume(), plain, ExportOptions{})
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "size-8192.bin: content") {
		t.Fatalf("export of a damaged vault: %v, want ErrCorrupt naming the damaged file", err)
	}
	if _, err := os.Stat(filepath.Join(plain, "size-8192.bin")); err == nil {
		t.Error("a plain export left a zero-filled copy of the damaged file")
	}

	cp := cipher["run.sh"]
	damaged := "A" + cp[1:]
	if damaged == cp {
		damaged = "B" + cp[1:]
	}
	if err := os.Rename(filepath.Join(v.Dir, cp), filepath.Join(v.Dir, damaged)); err != nil {
		t.Fatal(err)
	}

	forced := filepath.Join(t.TempDir(), "forced")
	var report []Problem
	err = ExportVolume(context.Background(), v.Volume(), forced, ExportOptions{Force: true, Damaged: func(p Problem) { report = append(report, p) }})
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("forced export: %v, want ErrCorrupt counting the damage", err)
	}
	want, _ := os.ReadFile(filepath.Join(clean, "size-8192.bin"))
	clear(want[crypto.BlockSize : 2*crypto.BlockSize])
	if got, err := os.ReadFile(filepath.Join(forced, "size-8192.bin")); err != nil || !bytes.Equal(got, want) {
		t.Errorf("forced export of the damaged file: %v, not the file with block 1 zeroed", err)
	}
	runSh, _ := os.ReadFile(filepath.Join(clean, "run.sh"))
	if got, err := os.ReadFile(filepath.Join(forced, damaged+layout.BadNameSuffix)); err != nil || !bytes.Equal(got, runSh) {
		t.Errorf("the bad name was not exported under %q: %v", damaged+layout.BadNameSuffix, err)
	}
	if got, _ := os.ReadFile(filepath.Join(forced, "a", "top-of-a.txt")); len(got) == 0 {
		t.Error("the forced export stopped early")
	}
	var kinds []string
	for _, p := range report {
		kinds = append(kinds, p.Kind+" "+p.Path)
	}
	if len(report) != 2 || !strings.Contains(strings.Join(kinds, ","), "content size-8192.bin") ||
		!strings.Contains(strings.Join(kinds, ","), "name "+damaged+layout.BadNameSuffix) {
		t.Errorf("report %q, want the damaged block and the bad name", kinds)
	}
}
