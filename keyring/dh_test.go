package keyring

import (
	"bytes"
	"math/big"
	"testing"
)

func TestSecretRoundTripAndBadPadding(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 16)
	for n := 0; n <= 33; n++ {
		pw := bytes.Repeat([]byte{'p'}, n)
		iv, ct, err := encryptSecret(key, pw)
		if err != nil {
			t.Fatal(err)
		}
		if len(ct)%16 != 0 || len(ct) <= n {
			t.Fatalf("%d bytes encrypt to %d", n, len(ct))
		}
		got, err := decryptSecret(key, iv, ct)
		if err != nil || !bytes.Equal(got, pw) {
			t.Fatalf("%d bytes: %q, %v", n, got, err)
		}
	}
	iv, ct, _ := encryptSecret(key, []byte("secret"))
	for _, c := range []struct {
		name   string
		iv, ct []byte
	}{
		{"short IV", iv[:8], ct},
		{"empty", iv, nil},
		{"not blocks", iv, ct[:10]},
		{"wrong key", iv, func() []byte { _, c, _ := encryptSecret(bytes.Repeat([]byte{8}, 16), []byte("secret")); return c }()},
	} {
		if got, err := decryptSecret(key, c.iv, c.ct); err == nil && c.name != "wrong key" {
			t.Errorf("%s: decrypted to %q", c.name, got)
		}
	}
}

func TestDHAgreesAndRejectsWeakKeys(t *testing.T) {
	a, _ := newDHKey()
	b, _ := newDHKey()
	ka, err := a.sessionKey(b.pub)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := b.sessionKey(a.pub)
	if err != nil || !bytes.Equal(ka, kb) || len(ka) != 16 {
		t.Fatalf("keys differ: %x %x %v", ka, kb, err)
	}
	pm1 := new(big.Int).Sub(oakley2, big.NewInt(1)).FillBytes(make([]byte, groupLen))
	for _, weak := range [][]byte{{0}, {1}, pm1, oakley2.FillBytes(make([]byte, groupLen)), make([]byte, groupLen+1)} {
		if _, err := a.sessionKey(weak); err == nil {
			t.Errorf("accepted public key %x", weak)
		}
	}
	if oakley2.BitLen() != 1024 || !oakley2.ProbablyPrime(20) {
		t.Error("the group is not a 1024-bit prime")
	}
}

// TestDHWipe: wipe zeroes the private exponent's words where they are, not just the
// big.Int's view of them.
func TestDHWipe(t *testing.T) {
	k, err := newDHKey()
	if err != nil {
		t.Fatal(err)
	}
	words := k.priv.Bits()
	priv := k.priv
	k.wipe()
	for i, w := range words {
		if w != 0 {
			t.Fatalf("word %d of the private exponent survived the wipe", i)
		}
	}
	if priv.Sign() != 0 || k.priv != nil {
		t.Errorf("the private exponent is still set")
	}
	k.wipe() // twice is harmless
}
