package crypto

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"testing"
)

// testdata/fixtures.json holds pieces of the vaults in
// testdata of the vault package, made by the real gocryptfs: each config, the
// root directory IV, a few files, symlinks and long names with their
// expected plaintext. These tests check this package against them without
// the vault package.
type katFixture struct {
	Password string
	Conf     struct {
		EncryptedKey []byte
		ScryptObject ScryptKDF
		FeatureFlags []string
		LongNameMax  int
	}
	RootDirIV string `json:"root_diriv"`
	Files     []struct {
		Plain, Stored, Sha256, Cipher string
		Size                          int
	}
	Symlinks []struct {
		Plain, Stored, Target string
		CipherTarget          string `json:"cipher_target"`
	}
	Longnames []struct{ Plain, Stored, Encoded string }
}

func (f *katFixture) has(flag string) bool { return slices.Contains(f.Conf.FeatureFlags, flag) }

func (f *katFixture) cipher() CipherID {
	switch {
	case f.has("AEGIS256X2"):
		return AEGIS
	case f.has("XChaCha20Poly1305"):
		return XChaCha
	case f.has("AESSIV"):
		return AESSIV
	}
	return AESGCM
}

func loadKATs(t *testing.T) map[string]*katFixture {
	t.Helper()
	b, err := os.ReadFile("testdata/fixtures.json")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]*katFixture{}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m) != 7 {
		t.Fatalf("%d fixtures, want 7", len(m))
	}
	return m
}

func (f *katFixture) masterKey(t *testing.T) []byte {
	t.Helper()
	kek, err := f.Conf.ScryptObject.DeriveKey(context.Background(), []byte(f.Password))
	if err != nil {
		t.Fatal(err)
	}
	mk, err := OpenMasterKey(kek, f.Conf.EncryptedKey, f.has("HKDF"))
	if err != nil {
		t.Fatal(err)
	}
	if len(mk) != MasterKeyLen {
		t.Fatalf("master key is %d bytes", len(mk))
	}
	return mk
}

func TestFixtureKATs(t *testing.T) {
	for name, f := range loadKATs(t) {
		t.Run(name, func(t *testing.T) {
			c := f.cipher()
			mk := f.masterKey(t)
			if _, err := OpenMasterKey(mk, f.Conf.EncryptedKey, true); !errors.Is(err, ErrAuth) {
				t.Errorf("master key opened under a wrong KEK: %v", err)
			}
			ce, err := NewContentEnc(c, mk, f.has("HKDF"))
			if err != nil {
				t.Fatal(err)
			}
			for _, file := range f.Files {
				ct, _ := base64.StdEncoding.DecodeString(file.Cipher)
				size, err := ce.PlainSize(uint64(len(ct)))
				if err != nil || size != uint64(file.Size) {
					t.Errorf("%s: PlainSize(%d) = %d, %v; want %d", file.Plain, len(ct), size, err, file.Size)
				}
				if ce.CipherSize(uint64(file.Size)) != uint64(len(ct)) {
					t.Errorf("%s: CipherSize(%d) = %d, want %d", file.Plain, file.Size, ce.CipherSize(uint64(file.Size)), len(ct))
				}
				var pt []byte
				if len(ct) > 0 {
					h, err := ParseFileHeader(ct)
					if err != nil {
						t.Fatalf("%s: %v", file.Plain, err)
					}
					pt, err = ce.DecryptBlocks(nil, ct[HeaderLen:], 0, h.ID[:])
					if err != nil {
						t.Fatalf("%s: %v", file.Plain, err)
					}
				}
				sum := sha256.Sum256(pt)
				if hex.EncodeToString(sum[:]) != file.Sha256 {
					t.Errorf("%s: sha256 mismatch", file.Plain)
				}
			}
			plainNames := f.has("PlaintextNames")
			if len(f.Symlinks) != 2 {
				t.Fatalf("%d symlinks", len(f.Symlinks))
			}
			for _, l := range f.Symlinks {
				if l.Target == "" || l.CipherTarget == "" {
					t.Fatalf("symlink fixture incomplete: %+v", l)
				}
				if plainNames {
					if l.CipherTarget != l.Target {
						t.Errorf("plaintext-names symlink %s stored as %q", l.Plain, l.CipherTarget)
					}
					continue
				}
				got, err := ce.DecryptSymlink(l.CipherTarget)
				if err != nil || got != l.Target {
					t.Errorf("DecryptSymlink(%s) = %q, %v; want %q", l.Plain, got, err, l.Target)
				}
				back, err := ce.DecryptSymlink(ce.EncryptSymlink(l.Target))
				if err != nil || back != l.Target {
					t.Errorf("symlink round trip %q: %q, %v", l.Target, back, err)
				}
			}
			if plainNames {
				return
			}
			iv := make([]byte, DirIVLen) // deterministic names: all-zero IV
			if f.RootDirIV != "" {
				iv, _ = base64.StdEncoding.DecodeString(f.RootDirIV)
			}
			nt, err := NewNameTransform(mk, f.has("HKDF"), f.has("Raw64"), f.Conf.LongNameMax)
			if err != nil {
				t.Fatal(err)
			}
			for _, file := range f.Files {
				if IsLongName(file.Stored) {
					continue
				}
				got, err := nt.DecryptName(file.Stored, iv)
				if err != nil || got != file.Plain {
					t.Errorf("DecryptName(%s) = %q, %v; want %q", file.Stored, got, err, file.Plain)
				}
				stored, _, long, err := nt.StoredName(file.Plain, iv)
				if err != nil || stored != file.Stored || long {
					t.Errorf("StoredName(%q) = %q, %v, %v; want %q", file.Plain, stored, long, err, file.Stored)
				}
			}
			if len(f.Longnames) == 0 {
				t.Fatal("fixture has no long names")
			}
			for _, l := range f.Longnames {
				if !IsLongName(l.Stored) || IsLongNameFile(l.Stored) || !IsLongNameFile(l.Stored+LongNameSuffix) {
					t.Errorf("IsLongName/IsLongNameFile wrong for %s", l.Stored)
				}
				got, err := nt.DecryptName(l.Encoded, iv)
				if err != nil || got != l.Plain {
					t.Errorf("DecryptName(long %s) = %q, %v", l.Stored, got, err)
				}
				stored, encoded, long, err := nt.StoredName(l.Plain, iv)
				if err != nil || stored != l.Stored || encoded != l.Encoded || !long {
					t.Errorf("StoredName(long %.20q...) = %q, long=%v, %v; want %q", l.Plain, stored, long, err, l.Stored)
				}
			}
		})
	}
}

// TestAEGISFixtureNotZeroKey guards against gocryptfs's AEGIS-branch bug:
// the content must not open under an all-zero key, only the derived one.
func TestAEGISFixtureNotZeroKey(t *testing.T) {
	f := loadKATs(t)["aegis256x2"]
	zero := make([]byte, 32)
	a, err := newAEGIS(zero)
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range f.Files {
		ct, _ := base64.StdEncoding.DecodeString(file.Cipher)
		if len(ct) == 0 {
			continue
		}
		h, _ := ParseFileHeader(ct)
		blk := ct[HeaderLen:min(len(ct), HeaderLen+BlockSize+48)]
		ad := append([]byte{0, 0, 0, 0, 0, 0, 0, 0}, h.ID[:]...)
		if _, err := a.Open(nil, blk[:32], blk[32:], ad); err == nil {
			t.Fatalf("%s: block 0 opens under the all-zero key", file.Plain)
		}
	}
	// And the derived key does open it (so the check above is meaningful).
	mk := f.masterKey(t)
	ce, err := NewContentEnc(AEGIS, mk, true)
	if err != nil {
		t.Fatal(err)
	}
	ct, _ := base64.StdEncoding.DecodeString(f.Files[0].Cipher)
	h, _ := ParseFileHeader(ct)
	if _, err := ce.DecryptBlocks(nil, ct[HeaderLen:], 0, h.ID[:]); err != nil {
		t.Fatalf("derived key: %v", err)
	}
}
