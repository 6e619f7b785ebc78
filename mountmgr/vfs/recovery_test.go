package vfs

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/gocryptfs"
	"github.com/vaultui/vaultui/vault/layout"
)

// A vault with a flipped byte in block 1 of one file and a damaged name, mounted in recovery
// mode (ForceDecode, BadNames "*"): the bad block reads as zeros, every other byte as
// written, the damaged range is logged by cipher path and offset (no plaintext name in the
// log), and the entry whose name does not decrypt shows as a bad name that can be read.
// Mounted normally, the same read fails with EIO and the entry is hidden.
func TestForceDecode(t *testing.T) {
	vlt := realVault(t, "", crypto.AESGCM)
	v := volumeOf(vlt)
	mp, m := mountTest(t, v, Options{})
	data := make([]byte, 3*crypto.BlockSize+100)
	rand.Read(data)
	if err := os.WriteFile(filepath.Join(mp, "secret-plan.txt"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mp, "named-badly.txt"), []byte("still here"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unmount(m); err != nil {
		t.Fatal(err)
	}
	_, stored := cipherName(t, vlt, "secret-plan.txt")
	flipByte(t, filepath.Join(v.Dir, stored), crypto.HeaderLen+int64(v.Content.CipherBlockSize())+40)
	_, badStored := cipherName(t, vlt, "named-badly.txt")
	// A changed name decrypts to a valid name about once in 290 tries (names carry no tag):
	// damage it in a way that does not.
	iv, err := gocryptfs.ReadDirIV(v.Dir)
	if err != nil {
		t.Fatal(err)
	}
	damaged := ""
	for _, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZ" {
		d := string(c) + badStored[1:]
		if _, err := vlt.Names.DecryptName(d, iv); d != badStored && err != nil {
			damaged = d
			break
		}
	}
	if err := os.Rename(filepath.Join(v.Dir, badStored), filepath.Join(v.Dir, damaged)); err != nil {
		t.Fatal(err)
	}

	// Normal mount: EIO, the damaged name hidden.
	mp, m = mountTest(t, v, Options{ReadOnly: true})
	if _, err := os.ReadFile(filepath.Join(mp, "secret-plan.txt")); !errors.Is(err, syscall.EIO) {
		t.Fatalf("normal mount: read of a damaged file: %v, want EIO", err)
	}
	if ents, _ := os.ReadDir(mp); len(ents) != 1 {
		t.Fatalf("normal mount lists %v, want only the file whose name decrypts", ents)
	}
	if err := unmount(m); err != nil {
		t.Fatal(err)
	}

	if _, err := Mount(t.TempDir(), v, Options{ForceDecode: true}); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("forced decoding of a writable mount: %v, want refused", err)
	}

	var logMu sync.Mutex
	var logged strings.Builder
	var reported []string
	lg := logWriterFunc(func(p []byte) {
		logMu.Lock()
		logged.Write(p)
		logMu.Unlock()
	})
	mp, _ = mountTest(t, v, Options{ReadOnly: true, ForceDecode: true, BadNames: []string{"*"}, Logger: lg,
		AuthFailed: func(cp string, block uint64) {
			logMu.Lock()
			reported = append(reported, fmt.Sprintf("%s %d", cp, block))
			logMu.Unlock()
		}})
	got, err := os.ReadFile(filepath.Join(mp, "secret-plan.txt"))
	if err != nil {
		t.Fatalf("forcedecode read: %v", err)
	}
	want := bytes.Clone(data)
	clear(want[crypto.BlockSize : 2*crypto.BlockSize])
	if !bytes.Equal(got, want) {
		t.Fatalf("forcedecode read: %d bytes, not the file with block 1 zeroed", len(got))
	}
	cbs := int64(v.Content.CipherBlockSize())
	logMu.Lock()
	line := fmt.Sprintf(`"/%s": block 1 (cipher bytes %d-%d, plaintext bytes 4096-8191) fails authentication; read as zeros`,
		stored, crypto.HeaderLen+cbs, crypto.HeaderLen+2*cbs-1)
	if !strings.Contains(logged.String(), line) {
		t.Errorf("log lacks %q:\n%s", line, logged.String())
	}
	if len(reported) == 0 || reported[0] != "/"+stored+" 1" {
		t.Errorf("reported %v, want block 1 of /%s", reported, stored)
	}
	logMu.Unlock()

	// Looked up before any listing (a path from before a remount), then listed.
	badShown := damaged + layout.BadNameSuffix
	if b, err := os.ReadFile(filepath.Join(mp, badShown)); err != nil || string(b) != "still here" {
		t.Fatalf("reading the bad name before listing: %q, %v", b, err)
	}
	ents, err := os.ReadDir(mp)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) != 2 || names[0] != badShown && names[1] != badShown {
		t.Fatalf("forcedecode lists %q, want the damaged name as %q", names, badShown)
	}
	if b, err := os.ReadFile(filepath.Join(mp, badShown)); err != nil || string(b) != "still here" {
		t.Fatalf("reading the bad name: %q, %v", b, err)
	}
	logMu.Lock()
	defer logMu.Unlock()
	for _, plain := range []string{"secret-plan", "named-badly", "still here"} {
		if strings.Contains(logged.String(), plain) {
			t.Errorf("the log holds plaintext %q:\n%s", plain, logged.String())
		}
	}
}

func flipByte(t *testing.T, p string, off int64) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x20
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}
