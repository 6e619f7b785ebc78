package crypto

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The test vectors of RFC 3394 section 4 (4.1 to 4.6): every KEK size with every key size up
// to it.
var keyWrapVectors = []struct {
	name, kek, key, wrapped string
}{
	{"4.1 128-bit key, 128-bit KEK", "000102030405060708090A0B0C0D0E0F",
		"00112233445566778899AABBCCDDEEFF",
		"1FA68B0A8112B447AEF34BD8FB5A7B829D3E862371D2CFE5"},
	{"4.2 128-bit key, 192-bit KEK", "000102030405060708090A0B0C0D0E0F1011121314151617",
		"00112233445566778899AABBCCDDEEFF",
		"96778B25AE6CA435F92B5B97C050AED2468AB8A17AD84E5D"},
	{"4.3 128-bit key, 256-bit KEK", "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F",
		"00112233445566778899AABBCCDDEEFF",
		"64E8C3F9CE0F5BA263E9777905818A2A93C8191E7D6E8AE7"},
	{"4.4 192-bit key, 192-bit KEK", "000102030405060708090A0B0C0D0E0F1011121314151617",
		"00112233445566778899AABBCCDDEEFF0001020304050607",
		"031D33264E15D33268F24EC260743EDCE1C6C7DDEE725A936BA814915C6762D2"},
	{"4.5 192-bit key, 256-bit KEK", "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F",
		"00112233445566778899AABBCCDDEEFF0001020304050607",
		"A8F9BC1612C68B3FF6E6F4FBE30E71E4769C8B80A32CB8958CD5D17D6B254DA1"},
	{"4.6 256-bit key, 256-bit KEK", "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F",
		"00112233445566778899AABBCCDDEEFF000102030405060708090A0B0C0D0E0F",
		"28C9F404C4B810F4CBCCB35CFB87F8263F5786E2D80ED326CBC7F0E71A99F43BFB988B9B7A02DD21"},
}

func TestKeyWrapRFC3394Vectors(t *testing.T) {
	for _, v := range keyWrapVectors {
		t.Run(v.name, func(t *testing.T) {
			kek, key, want := unhex(t, v.kek), unhex(t, v.key), unhex(t, v.wrapped)
			got, err := KeyWrap(kek, key)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("KeyWrap = %X, want %X", got, want)
			}
			back, err := KeyUnwrap(kek, want)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(back, key) {
				t.Fatalf("KeyUnwrap = %X, want %X", back, key)
			}
		})
	}
}

// Every bit of the wrapped key is covered by the integrity check: flipping any one of them
// makes KeyUnwrap fail with ErrAuth and return no key.
func TestKeyUnwrapRejectsEveryFlippedBit(t *testing.T) {
	v := keyWrapVectors[5]
	kek, wrapped := unhex(t, v.kek), unhex(t, v.wrapped)
	for i := range len(wrapped) * 8 {
		bad := bytes.Clone(wrapped)
		bad[i/8] ^= 1 << (i % 8)
		key, err := KeyUnwrap(kek, bad)
		if !errors.Is(err, ErrAuth) || key != nil {
			t.Fatalf("bit %d flipped: KeyUnwrap = %X, %v; want nil, ErrAuth", i, key, err)
		}
	}
	wrongKEK := bytes.Clone(kek)
	wrongKEK[0] ^= 1
	if key, err := KeyUnwrap(wrongKEK, wrapped); !errors.Is(err, ErrAuth) || key != nil {
		t.Fatalf("wrong KEK: KeyUnwrap = %X, %v; want nil, ErrAuth", key, err)
	}
}

func TestKeyWrapRejectsBadLengths(t *testing.T) {
	kek := make([]byte, 32)
	for _, n := range []int{0, 8, 15, 17, 31} {
		if _, err := KeyWrap(kek, make([]byte, n)); err == nil {
			t.Errorf("KeyWrap of a %d-byte key succeeded", n)
		}
	}
	for _, n := range []int{0, 8, 16, 23, 25, 33} {
		if _, err := KeyUnwrap(kek, make([]byte, n)); err == nil {
			t.Errorf("KeyUnwrap of %d bytes succeeded", n)
		}
	}
	if _, err := KeyWrap(make([]byte, 20), make([]byte, 16)); err == nil {
		t.Error("KeyWrap with a 20-byte KEK succeeded")
	}
}

func TestKeyWrapDoesNotModifyInputs(t *testing.T) {
	v := keyWrapVectors[5]
	kek, key := unhex(t, v.kek), unhex(t, v.key)
	kek0, key0 := bytes.Clone(kek), bytes.Clone(key)
	w, err := KeyWrap(kek, key)
	if err != nil {
		t.Fatal(err)
	}
	w0 := bytes.Clone(w)
	if _, err := KeyUnwrap(kek, w); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(kek, kek0) || !bytes.Equal(key, key0) || !bytes.Equal(w, w0) {
		t.Fatal("an input was modified")
	}
}
