package crypto

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/internal/sysmem"
)

func TestScryptValidate(t *testing.T) {
	s, err := NewScryptKDF(10)
	if err != nil {
		t.Fatal(err)
	}
	if s.N != 1024 || s.R != 8 || s.P != 1 || s.KeyLen != 32 || len(s.Salt) != 32 || s.LogN() != 10 {
		t.Fatalf("NewScryptKDF(10) = %+v", s)
	}
	if d, _ := NewScryptKDF(0); d.N != 1<<16 {
		t.Errorf("default N = %d", d.N)
	}
	for _, logN := range []int{9, 29} {
		if _, err := NewScryptKDF(logN); !errors.Is(err, ErrWeakKDF) {
			t.Errorf("logN %d: %v", logN, err)
		}
	}
	bad := map[string]func(*ScryptKDF){
		"N below 2^10": func(s *ScryptKDF) { s.N = 512 },
		"N not pow2":   func(s *ScryptKDF) { s.N = 1500 },
		"N huge":       func(s *ScryptKDF) { s.N = 1 << 40 },
		"R below 8":    func(s *ScryptKDF) { s.R = 7 },
		"P below 1":    func(s *ScryptKDF) { s.P = 0 },
		"R*P huge":     func(s *ScryptKDF) { s.R, s.P = 1024, 1024 },
		"R above 8":    func(s *ScryptKDF) { s.R = 16 },
		"P above 1":    func(s *ScryptKDF) { s.P = 2 },
		"short salt":   func(s *ScryptKDF) { s.Salt = s.Salt[:31] },
		"short KeyLen": func(s *ScryptKDF) { s.KeyLen = 16 },
		"negative N":   func(s *ScryptKDF) { s.N = -1024 },
		"giant KeyLen": func(s *ScryptKDF) { s.KeyLen = 1 << 20 },
	}
	for name, mutate := range bad {
		c := s
		c.Salt = bytes.Clone(s.Salt)
		mutate(&c)
		if err := c.Validate(); !errors.Is(err, ErrWeakKDF) {
			t.Errorf("%s: %v", name, err)
		}
		if _, err := c.DeriveKey(context.Background(), []byte("pw")); err == nil {
			t.Errorf("%s: DeriveKey ran", name)
		}
	}
	k1, err := s.DeriveKey(context.Background(), []byte("pw"))
	if err != nil || len(k1) != 32 {
		t.Fatal(err)
	}
	k2, _ := s.DeriveKey(context.Background(), []byte("pw2"))
	if bytes.Equal(k1, k2) {
		t.Fatal("different passwords, same key")
	}
}

// TestHKDFVector checks HKDF-SHA256 against RFC 5869 test case 3 (empty salt
// and info) extended to our use: empty salt, info string.
func TestHKDFVector(t *testing.T) {
	ikm := bytes.Repeat([]byte{0x0b}, 22)
	got := HKDF(ikm, "", 42)
	want, _ := hex.DecodeString("8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8")
	if !bytes.Equal(got, want) {
		t.Fatalf("HKDF = %x", got)
	}
	if bytes.Equal(HKDF(ikm, InfoGCMContent, 32), HKDF(ikm, InfoEMENames, 32)) {
		t.Fatal("info string ignored")
	}
}

func TestMasterKeySealing(t *testing.T) {
	kek := bytes.Repeat([]byte{7}, 32)
	mk := testKey()
	for _, useHKDF := range []bool{true, false} {
		sealed, err := SealMasterKey(kek, mk, useHKDF)
		if err != nil {
			t.Fatal(err)
		}
		wantLen := map[bool]int{true: 16 + 32 + 16, false: 12 + 32 + 16}[useHKDF]
		if len(sealed) != wantLen {
			t.Fatalf("HKDF=%v: sealed key is %d bytes, want %d", useHKDF, len(sealed), wantLen)
		}
		got, err := OpenMasterKey(kek, sealed, useHKDF)
		if err != nil || !bytes.Equal(got, mk) {
			t.Fatalf("HKDF=%v: %v", useHKDF, err)
		}
		if _, err := OpenMasterKey(kek, sealed, !useHKDF); !errors.Is(err, ErrAuth) {
			t.Errorf("HKDF flag ignored: %v", err)
		}
		wrong := bytes.Repeat([]byte{8}, 32)
		if _, err := OpenMasterKey(wrong, sealed, useHKDF); !errors.Is(err, ErrAuth) {
			t.Errorf("wrong KEK: %v", err)
		}
		if _, err := OpenMasterKey(kek, sealed[:10], useHKDF); !errors.Is(err, ErrAuth) {
			t.Errorf("short: %v", err)
		}
	}
	// With HKDF the sealed key is a GCM content block 0 without file ID
	// under the KEK, so ContentEnc opens it too.
	sealed, _ := SealMasterKey(kek, mk, true)
	ce, _ := NewContentEnc(AESGCM, kek, true)
	if got, err := ce.DecryptBlocks(nil, sealed, 0, nil); err != nil || !bytes.Equal(got, mk) {
		t.Fatalf("sealed key is not a content block: %v", err)
	}
}

func TestWipe(t *testing.T) {
	b := []byte{1, 2, 3}
	Wipe(b)
	if !bytes.Equal(b, []byte{0, 0, 0}) {
		t.Fatal(b)
	}
	e, _ := NewContentEnc(AESSIV, testKey(), true)
	key := e.key
	e.Wipe()
	if !bytes.Equal(key, make([]byte, len(key))) {
		t.Fatal("content key not wiped")
	}
	n, _ := NewNameTransform(testKey(), true, true, 0)
	nk := n.key
	n.Wipe()
	if !bytes.Equal(nk, make([]byte, 32)) {
		t.Fatal("name key not wiped")
	}
}

// TestScryptLimits: parameters outside what gocryptfs writes are refused naming the parameter,
// its value and the limit; legal ones that need more memory than is available are refused
// before scrypt runs (it would take the process down with a fatal out-of-memory).
func TestScryptLimits(t *testing.T) {
	s, _ := NewScryptKDF(10)
	for _, c := range []struct {
		mutate func(*ScryptKDF)
		want   string
	}{
		{func(s *ScryptKDF) { s.N = 1 << 29 }, "N=2^29 is above the maximum 2^28"},
		{func(s *ScryptKDF) { s.R = 1024 }, "R=1024, but gocryptfs only uses R=8"},
		{func(s *ScryptKDF) { s.R = 9 }, "R=9"},
		{func(s *ScryptKDF) { s.P = 128 }, "P=128, but gocryptfs only uses P=1"},
	} {
		c2 := s
		c.mutate(&c2)
		err := c2.Validate()
		if !errors.Is(err, ErrWeakKDF) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate: %v, want %q", err, c.want)
		}
	}
	if got := (ScryptKDF{N: 1 << 28, R: 8, P: 1}).MemoryNeed(); got < 256<<30 || got > 256<<30+1<<20 {
		t.Errorf("MemoryNeed(2^28, 8) = %d, want 256 GiB", got)
	}
	defer func(f func() (uint64, string, error)) { availableMemory = f }(availableMemory)
	availableMemory = func() (uint64, string, error) { return 100 << 20, "test", nil }
	big := s
	big.N = 1 << 16 // 64 MiB: does not fit in 100 MiB less the 64 MiB reserve
	_, err := big.DeriveKey(context.Background(), []byte("pw"))
	if !errors.Is(err, ErrKDFMemory) || !strings.Contains(err.Error(), "needs 64 MiB") || !strings.Contains(err.Error(), "36 MiB is available") {
		t.Errorf("DeriveKey beyond the available memory: %v", err)
	}
	if _, err := s.DeriveKey(context.Background(), []byte("pw")); err != nil { // 1 MiB fits
		t.Errorf("DeriveKey within the available memory: %v", err)
	}
	// The real figure: this process can allocate something, and 2^28 x 8 is refused unless
	// the machine really has 256 GiB to spare.
	availableMemory = sysmem.Available
	avail, source, err := sysmem.Available()
	if err != nil || avail == 0 || source == "" {
		t.Fatalf("sysmem.Available = %d, %q, %v", avail, source, err)
	}
	if avail < 256<<30 {
		huge := s
		huge.N = 1 << 28
		if _, err := huge.DeriveKey(WithCostBound(context.Background(), AnyCost), []byte("pw")); !errors.Is(err, ErrKDFMemory) || !strings.Contains(err.Error(), "256 GiB") {
			t.Errorf("N=2^28: %v", err)
		}
	}
}

// Cryptomator's 8-byte salts pass DeriveKeyMinSalt(…, 8) but not DeriveKey; every other bound
// still holds.
func TestDeriveKeyMinSalt(t *testing.T) {
	s := ScryptKDF{Salt: make([]byte, 8), N: 1 << MinScryptLogN, R: ScryptR, P: ScryptP, KeyLen: 32}
	if _, err := s.DeriveKeyMinSalt(context.Background(), []byte("pw"), 8); err != nil {
		t.Fatalf("8-byte salt with minimum 8: %v", err)
	}
	if _, err := s.DeriveKey(context.Background(), []byte("pw")); !errors.Is(err, ErrWeakKDF) {
		t.Fatalf("8-byte salt through DeriveKey: %v, want ErrWeakKDF", err)
	}
	short := s
	short.Salt = make([]byte, 7)
	bigR := s
	bigR.R = 16
	bigN := s
	bigN.N = 1 << 40
	for name, c := range map[string]ScryptKDF{"7-byte salt": short, "R=16": bigR, "N=2^40": bigN} {
		if _, err := c.DeriveKeyMinSalt(context.Background(), []byte("pw"), 8); !errors.Is(err, ErrWeakKDF) {
			t.Errorf("%s: %v, want ErrWeakKDF", name, err)
		}
	}
}
