package gocryptfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/atomicfile"
	"github.com/vaultui/vaultui/vault/format"
)

var testPassword = []byte("correct horse battery staple")

// createTest makes a vault with opts (at a cheap scrypt cost unless they say) in a new
// folder and returns the folder and the master key.
func createTest(t *testing.T, opts CreateOptions) (string, []byte) {
	t.Helper()
	if opts.ScryptLogN == 0 {
		opts.ScryptLogN = 10
	}
	dir := t.TempDir()
	mk, err := Create(context.Background(), atomicfile.OS{}, dir, testPassword, opts)
	if err != nil {
		t.Fatal(err)
	}
	return dir, mk
}

// TestMasterKeyEvidence: a master key is accepted only on real evidence. One decrypting name
// used to be enough (a wrong key passes that about once in 255 tries); now a content block
// or eight names must decrypt, and too little to check is said, not accepted.
func TestMasterKeyEvidence(t *testing.T) {
	wrong := bytes.Repeat([]byte{0x42}, crypto.MasterKeyLen)
	fill := func(t *testing.T, mk []byte, dir string, files int, content []byte) {
		v, err := OpenWithMasterKey(dir, mk)
		if err != nil {
			t.Fatal(err)
		}
		defer v.Close()
		for i := range files {
			writePlainFile(t, v, fmt.Sprintf("file %d", i), content)
		}
	}
	for _, c := range []struct {
		name      string
		opts      CreateOptions
		files     int
		content   []byte
		right     error // want for the right key
		wrongWant error
	}{
		{"one empty file", CreateOptions{}, 1, nil, format.ErrKeyUnverifiable, nil},
		{"seven empty files", CreateOptions{}, 7, nil, format.ErrKeyUnverifiable, nil},
		{"twenty empty files", CreateOptions{}, 20, nil, nil, format.ErrWrongPassword},
		{"one file with content", CreateOptions{}, 1, []byte("hello"), nil, format.ErrWrongPassword},
		{"plaintext names, content", CreateOptions{PlaintextNames: true}, 1, []byte("hello"), nil, format.ErrWrongPassword},
		{"plaintext names, empty", CreateOptions{PlaintextNames: true}, 3, nil, format.ErrKeyUnverifiable, format.ErrKeyUnverifiable},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, mk := createTest(t, c.opts)
			fill(t, mk, dir, c.files, c.content)
			v, err := UnlockWithMasterKey(dir, mk)
			if !errors.Is(err, c.right) || (c.right == nil && err != nil) {
				t.Errorf("right key: %v, want %v", err, c.right)
			}
			if v != nil {
				v.Close()
			}
			if c.wrongWant == nil {
				// Too few names to decide: a wrong key is refused or unverifiable, never accepted.
				if _, err := UnlockWithMasterKey(dir, wrong); err == nil {
					t.Error("wrong key accepted")
				}
				return
			}
			if _, err := UnlockWithMasterKey(dir, wrong); !errors.Is(err, c.wrongWant) {
				t.Errorf("wrong key: %v, want %v", err, c.wrongWant)
			}
		})
	}
}

// TestMasterKeyLuckyName: under a wrong key about one name in 255 passes the padding check.
// When that is the only name and the file's content fails authentication, the key is wrong:
// the authenticated block outweighs the name. (This happened at random, once in 255 runs of
// TestMasterKeyEvidence's "one file with content", and said "cannot be verified", which
// invites the user to go on with a wrong key.)
func TestMasterKeyLuckyName(t *testing.T) {
	dir, mk := createTest(t, CreateOptions{})
	wrong := bytes.Repeat([]byte{0x42}, crypto.MasterKeyLen)
	right, err := OpenWithMasterKey(dir, mk)
	if err != nil {
		t.Fatal(err)
	}
	defer right.Close()
	w, err := OpenWithMasterKey(dir, wrong)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// Content by the right key, the name by the wrong one: so the name "decrypts" under the
	// wrong key, as a lucky name would.
	// (Under the right key that name fails, which refuses it: see TestMasterKeyNamesOutweighBlocks.)
	writeFileNamedBy(t, right, w, "lucky", []byte("hello"))
	if _, err := UnlockWithMasterKey(dir, wrong); !errors.Is(err, format.ErrWrongPassword) {
		t.Errorf("wrong key with one lucky name: %v, want %v", err, format.ErrWrongPassword)
	}
}

// TestMasterKeyStrangerFile: a file not named as the vault names files (here one copied in
// from another vault under a plain name) is no evidence either way, so its content failing to
// authenticate does not make the right key wrong.
func TestMasterKeyStrangerFile(t *testing.T) {
	dir, mk := createTest(t, CreateOptions{})
	v, err := OpenWithMasterKey(dir, mk)
	if err != nil {
		t.Fatal(err)
	}
	writePlainFile(t, v, "empty", nil)
	v.Close()
	h, err := crypto.NewFileHeader()
	if err != nil {
		t.Fatal(err)
	}
	other := append(h.Bytes(), bytes.Repeat([]byte{0xa5}, 200)...)
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), other, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := UnlockWithMasterKey(dir, mk); !errors.Is(err, format.ErrKeyUnverifiable) {
		t.Errorf("right key, one empty file and a stranger: %v, want %v", err, format.ErrKeyUnverifiable)
	}
	wrong := bytes.Repeat([]byte{0x42}, crypto.MasterKeyLen)
	if _, err := UnlockWithMasterKey(dir, wrong); err == nil {
		t.Error("wrong key accepted")
	}
}

// writePlainFile writes one file through v's keys at the root of the vault.
func writePlainFile(t *testing.T, v *Vault, name string, content []byte) {
	t.Helper()
	writeFileNamedBy(t, v, v, name, content)
}

// writeFileNamedBy writes one file at the root of the vault with v's content key and the
// name encrypted by namer's name key.
func writeFileNamedBy(t *testing.T, v, namer *Vault, name string, content []byte) {
	t.Helper()
	var cname string
	if namer.Names == nil {
		cname = name
	} else {
		iv, err := v.DirIV("")
		if err != nil {
			t.Fatal(err)
		}
		if cname, err = namer.Names.EncryptName(name, iv); err != nil {
			t.Fatal(err)
		}
	}
	var data []byte
	if len(content) > 0 {
		h, err := crypto.NewFileHeader()
		if err != nil {
			t.Fatal(err)
		}
		data = append(h.Bytes(), v.Content.EncryptBlocks(nil, content, 0, h.ID[:])...)
	}
	if err := os.WriteFile(filepath.Join(v.Dir, cname), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// writeCipherFile writes a cipher file at the root of v's vault and returns its path: the
// header, then blocks, each either encrypted from plain or, where plain is nil, a hole (a full
// block of zero bytes, as gocryptfs stores a hole and `truncate -s 1M` through a mount leaves).
func writeCipherFile(t *testing.T, v *Vault, name string, blocks ...[]byte) string {
	t.Helper()
	iv, err := v.DirIV("")
	if err != nil {
		t.Fatal(err)
	}
	cname, err := v.Names.EncryptName(name, iv)
	if err != nil {
		t.Fatal(err)
	}
	h, err := crypto.NewFileHeader()
	if err != nil {
		t.Fatal(err)
	}
	data := h.Bytes()
	for i, plain := range blocks {
		if plain == nil {
			data = append(data, make([]byte, v.Content.CipherBlockSize())...)
			continue
		}
		data = v.Content.EncryptBlocks(data, plain, uint64(i), h.ID[:])
	}
	p := filepath.Join(v.Dir, cname)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMasterKeyHoleIsNoEvidence: a hole (an all-zero block) skips the tag check, so it says
// nothing about the key. It used to prove any key: in a vault holding a file made by
// `truncate -s 1M`, `passwd --masterkey` accepted 32 random bytes and resealed the vault under
// them, locking its owner out.
func TestMasterKeyHoleIsNoEvidence(t *testing.T) {
	full := bytes.Repeat([]byte{'x'}, crypto.BlockSize)
	for _, c := range []struct {
		name    string
		files   [][][]byte // per file, its blocks (nil = hole)
		damaged bool       // the last byte of the first file is flipped
		right   error      // want for the right key (nil: accepted)
	}{
		// Names alone: one to three names are too few to prove the key.
		{"one file of holes", [][][]byte{{nil, nil, nil}}, false, format.ErrKeyUnverifiable},
		{"three files of holes", [][][]byte{{nil}, {nil, nil}, {nil, nil, nil, nil}}, false, format.ErrKeyUnverifiable},
		// The last, short block is never a hole: it is evidence.
		{"hole then data", [][][]byte{{nil, full, []byte("tail")}}, false, nil},
		{"a damaged file, then holes", [][][]byte{{[]byte("bad")}, {nil, nil}}, true, format.ErrKeyUnverifiable},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, mk := createTest(t, CreateOptions{})
			v, err := OpenWithMasterKey(dir, mk)
			if err != nil {
				t.Fatal(err)
			}
			for i, blocks := range c.files {
				p := writeCipherFile(t, v, fmt.Sprintf("file %d", i), blocks...)
				if i == 0 && c.damaged {
					flipLastByte(t, p)
				}
			}
			v.Close()
			got, err := UnlockWithMasterKey(dir, mk)
			if got != nil {
				got.Close()
			}
			if c.right == nil && err != nil || c.right != nil && !errors.Is(err, c.right) {
				t.Errorf("right key: %v, want %v", err, c.right)
			}
			random := make([]byte, crypto.MasterKeyLen)
			for i := range random {
				random[i] = byte(i*37 + 11)
			}
			// A name fails under a wrong key but once in 255 tries, and one failing name in
			// more than four refuses the key. With a single name the lucky case leaves the key
			// unverifiable: asked about, never accepted.
			_, err = UnlockWithMasterKey(dir, random)
			if !errors.Is(err, format.ErrWrongPassword) && !(len(c.files) == 1 && errors.Is(err, format.ErrKeyUnverifiable)) {
				t.Errorf("wrong key: %v, want %v", err, format.ErrWrongPassword)
			}
		})
	}
}

// flipLastByte damages the file at p.
func flipLastByte(t *testing.T, p string) {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-1] ^= 1
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestMasterKeyNamesOutweighBlocks: when more than one name in four fails, the key is refused
// whatever the blocks say (a vault's names are all encrypted with one key; a block that opens
// under a key the names reject was put there by someone else).
func TestMasterKeyNamesOutweighBlocks(t *testing.T) {
	dir, mk := createTest(t, CreateOptions{})
	other := bytes.Repeat([]byte{0x42}, crypto.MasterKeyLen)
	right, err := OpenWithMasterKey(dir, mk)
	if err != nil {
		t.Fatal(err)
	}
	defer right.Close()
	o, err := OpenWithMasterKey(dir, other)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	// Content by the other key, names by the right one: under the other key the blocks open
	// and the names fail.
	for i := range 3 {
		writeFileNamedBy(t, o, right, fmt.Sprintf("planted %d", i), []byte("hello"))
	}
	if _, err := UnlockWithMasterKey(dir, other); !errors.Is(err, format.ErrWrongPassword) {
		t.Errorf("key whose blocks open but whose names fail: %v, want %v", err, format.ErrWrongPassword)
	}
}
