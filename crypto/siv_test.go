package crypto

import (
	"bytes"
	"errors"
	"testing"
)

// RFC 5297 appendix A.1: deterministic AES-SIV-CMAC-256 with one associated-data component.
func TestSIVSealRFC5297A1(t *testing.T) {
	key := unhex(t, "fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff")
	ad := unhex(t, "101112131415161718191a1b1c1d1e1f2021222324252627")
	pt := unhex(t, "112233445566778899aabbccddee")
	want := unhex(t, "85632d07c6e8f37f950acd320a2ecc9340c02b9690c4dc04daef7f6afe5c")
	got, err := SIVSeal(key, pt, ad)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("SIVSeal = %x, want %x", got, want)
	}
	back, err := SIVOpen(key, want, ad)
	if err != nil || !bytes.Equal(back, pt) {
		t.Fatalf("SIVOpen = %x, %v", back, err)
	}
}

// No associated data and one empty component are different inputs to S2V: Cryptomator hashes
// directory IDs with none and encrypts the root's names with one (the root's ID is empty).
// Expected values from Python's cryptography (AESSIV), an independent implementation.
func TestSIVSealNoADIsNotEmptyAD(t *testing.T) {
	key := make([]byte, 64)
	for i := range key {
		key[i] = byte(i)
	}
	none, err := SIVSeal(key, []byte("dir-id"))
	if err != nil {
		t.Fatal(err)
	}
	empty, err := SIVSeal(key, []byte("dir-id"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := unhex(t, "8e07ea81f70655f031e3f5de42acb30cd29a19b0b50f"); !bytes.Equal(none, want) {
		t.Fatalf("no AD: %x, want %x", none, want)
	}
	if want := unhex(t, "d4a6865690a11fd2b14601a0075814ac5d9057688e4a"); !bytes.Equal(empty, want) {
		t.Fatalf("one empty AD: %x, want %x", empty, want)
	}
	if _, err := SIVOpen(key, none, nil); !errors.Is(err, ErrAuth) {
		t.Fatalf("opening a no-AD seal with an empty AD: %v, want ErrAuth", err)
	}
}

func TestSIVOpenRejectsTampering(t *testing.T) {
	key := make([]byte, 64)
	sealed, err := SIVSeal(key, []byte("a name.txt"), []byte("parent"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range sealed {
		bad := bytes.Clone(sealed)
		bad[i] ^= 0x80
		if pt, err := SIVOpen(key, bad, []byte("parent")); !errors.Is(err, ErrAuth) || pt != nil {
			t.Fatalf("byte %d flipped: %q, %v", i, pt, err)
		}
	}
	if pt, err := SIVOpen(key, sealed, []byte("other parent")); !errors.Is(err, ErrAuth) || pt != nil {
		t.Fatalf("other AD: %q, %v", pt, err)
	}
	if _, err := SIVOpen(key, sealed[:15], []byte("parent")); !errors.Is(err, ErrAuth) {
		t.Fatalf("short input: %v", err)
	}
	if _, err := SIVSeal(make([]byte, 20), nil); err == nil {
		t.Fatal("a 20-byte key was accepted")
	}
}
