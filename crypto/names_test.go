package crypto

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestPad16(t *testing.T) {
	for n := 0; n <= 48; n++ {
		in := bytes.Repeat([]byte{'a'}, n)
		p := pad16(in)
		if len(p)%16 != 0 || len(p) <= n || len(p) > n+16 {
			t.Fatalf("pad16(%d) has %d bytes", n, len(p))
		}
		out, err := unpad16(p)
		if err != nil || !bytes.Equal(out, in) {
			t.Fatalf("unpad16(pad16(%d)): %v", n, err)
		}
	}
	for _, bad := range [][]byte{nil, make([]byte, 15), make([]byte, 16), append(bytes.Repeat([]byte{1}, 15), 17),
		append(bytes.Repeat([]byte{3}, 14), 2, 3)} {
		if _, err := unpad16(bad); err == nil {
			t.Errorf("unpad16(%x) succeeded", bad)
		}
	}
}

func TestNameRoundTrip(t *testing.T) {
	iv := randBytes(DirIVLen)
	for _, raw := range []bool{true, false} {
		n, err := NewNameTransform(testKey(), true, raw, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"a", "exactly16bytes!!", ".hidden file", "Ünïcødé ✓", strings.Repeat("x", 175), strings.Repeat("y", 176), strings.Repeat("z", 255)} {
			stored, encoded, long, err := n.StoredName(name, iv)
			if err != nil {
				t.Fatal(err)
			}
			if long != (len(encoded) > 255) || (long && stored != n.HashLongName(encoded)) || (!long && stored != encoded) {
				t.Fatalf("%d-byte name: long=%v stored=%q", len(name), long, stored)
			}
			if raw == strings.Contains(encoded, "=") && len(encoded)%4 != 0 {
				t.Fatalf("raw64=%v but %q", raw, encoded)
			}
			got, err := n.DecryptName(encoded, iv)
			if err != nil || got != name {
				t.Fatalf("DecryptName: %q, %v", got, err)
			}
			// Another directory IV gives another name.
			other, _ := n.EncryptName(name, randBytes(DirIVLen))
			if other == encoded {
				t.Fatal("directory IV has no effect")
			}
		}
	}
	// 175 bytes of name stays short, 176 becomes long with the default limit.
	n, _ := NewNameTransform(testKey(), true, true, 0)
	if _, _, long, _ := n.StoredName(strings.Repeat("x", 175), iv); long {
		t.Error("175-byte name is long")
	}
	if _, _, long, _ := n.StoredName(strings.Repeat("x", 176), iv); !long {
		t.Error("176-byte name is not long")
	}
	// LongNameMax 62: a 33-byte name (48 bytes padded, 64 encoded) is long,
	// a 31-byte one (32 padded, 43 encoded) is not.
	n62, err := NewNameTransform(testKey(), true, true, 62)
	if err != nil {
		t.Fatal(err)
	}
	if stored, _, long, _ := n62.StoredName(strings.Repeat("x", 33), iv); !long || len(stored) != 62 {
		t.Errorf("LongNameMax 62: long=%v stored %d bytes", long, len(stored))
	}
	if _, _, long, _ := n62.StoredName(strings.Repeat("x", 31), iv); long {
		t.Error("LongNameMax 62: 43-byte encoded name is long")
	}
	// Long names disabled.
	nolong, _ := NewNameTransform(testKey(), true, true, -1)
	if _, _, long, _ := nolong.StoredName(strings.Repeat("x", 255), iv); long {
		t.Error("long names disabled but name hashed")
	}
}

func TestNameErrors(t *testing.T) {
	n, _ := NewNameTransform(testKey(), true, true, 0)
	iv := randBytes(DirIVLen)
	for _, bad := range []string{"", ".", "..", "a/b", "nul\x00", strings.Repeat("x", 256)} {
		if _, err := n.EncryptName(bad, iv); !errors.Is(err, ErrBadName) {
			t.Errorf("EncryptName(%.20q): %v", bad, err)
		}
	}
	good, _ := n.EncryptName("file", iv)
	for _, bad := range []string{"", "!!notbase64", "AAAA", good[:len(good)-2], strings.Repeat("A", 3000)} {
		if _, err := n.DecryptName(bad, iv); !errors.Is(err, ErrBadName) {
			t.Errorf("DecryptName(%.20q): %v", bad, err)
		}
	}
	// The right ciphertext under the wrong IV almost surely fails the
	// padding check.
	if got, err := n.DecryptName(good, randBytes(DirIVLen)); err == nil && got == "file" {
		t.Error("wrong IV decrypted the name")
	}
	if _, err := n.DecryptName(good, iv[:8]); err == nil {
		t.Error("short IV accepted")
	}
	for _, lim := range []int{1, 61, 256} {
		if _, err := NewNameTransform(testKey(), true, true, lim); err == nil {
			t.Errorf("LongNameMax %d accepted", lim)
		}
	}
}

func TestLongNamePredicates(t *testing.T) {
	cases := map[string][2]bool{
		"gocryptfs.longname.abc":      {true, false},
		"gocryptfs.longname.abc.name": {false, true},
		"abc.name":                    {false, false},
		"gocryptfs.diriv":             {false, false},
	}
	for s, want := range cases {
		if IsLongName(s) != want[0] || IsLongNameFile(s) != want[1] {
			t.Errorf("%s: IsLongName=%v IsLongNameFile=%v", s, IsLongName(s), IsLongNameFile(s))
		}
	}
}

// nameSpellings returns other spellings of the base64url of the encrypted name encoded, as a
// lenient decoder would read them: a line break inside, and non-zero trailing bits.
func nameSpellings(encoded string) []string {
	out := []string{encoded[:4] + "\n" + encoded[4:], encoded + "\r\n", encoded[:2] + "\r" + encoded[2:]}
	// Unless the bytes fill whole groups of 3, the last character before any padding carries
	// bits past their end (16 bytes: 22 characters, 4 bits too many); setting the lowest one
	// keeps the bytes.
	body := strings.TrimRight(encoded, "=")
	if len(body)%4 == 0 {
		return out
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, body[len(body)-1])
	return append(out, body[:len(body)-1]+string(alphabet[last|1])+encoded[len(body):])
}

// TestNameOneSpelling: an encrypted name has one stored form. A decoder that skipped line
// breaks (as every Go base64 decoder does, Strict or not) or ignored trailing bits would read
// other spellings of it as the same name, and a directory holding both would list one name
// twice; each is refused instead, for names and attribute names in both encodings.
func TestNameOneSpelling(t *testing.T) {
	iv := randBytes(DirIVLen)
	for _, raw := range []bool{true, false} {
		n, err := NewNameTransform(testKey(), true, raw, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"a", "exactly16bytes!!", strings.Repeat("x", 40)} {
			enc, err := n.EncryptName(name, iv)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := n.DecryptName(enc, iv); err != nil || got != name {
				t.Fatalf("raw64=%v: %q decrypts to %q, %v", raw, enc, got, err)
			}
			xenc, _ := n.EncryptXattrName(name)
			for _, other := range nameSpellings(enc) {
				if other == enc {
					continue // the trailing bits were already set
				}
				if got, err := n.DecryptName(other, iv); !errors.Is(err, ErrBadName) || n.WellFormed(other) {
					t.Errorf("raw64=%v: second spelling %q of %q read as %q, %v", raw, other, enc, got, err)
				}
			}
			for _, other := range nameSpellings(xenc) {
				if other == xenc {
					continue
				}
				if got, err := n.DecryptXattrName(other); err == nil {
					t.Errorf("raw64=%v: second spelling %q of attribute name %q read as %q", raw, other, xenc, got)
				}
			}
		}
	}
}

// FuzzDecryptName decodes hostile encrypted names (the entries of a cipherdir, the content
// of .name files, the names of extended attributes): no panic, an error wrapping ErrBadName
// for anything refused, and one spelling per name: a name that decrypts encrypts back to
// exactly the string it came from.
func FuzzDecryptName(f *testing.F) {
	iv := bytes.Repeat([]byte{7}, DirIVLen)
	var transforms [2]*NameTransform
	for i, raw := range []bool{false, true} {
		n, err := NewNameTransform(testKey(), true, raw, 0)
		if err != nil {
			f.Fatal(err)
		}
		transforms[i] = n
		for _, name := range []string{"a", "exactly16bytes!!", "Ünïcødé ✓", strings.Repeat("z", 255)} {
			enc, _ := n.EncryptName(name, iv)
			f.Add(enc, raw)
			for _, other := range nameSpellings(enc) {
				f.Add(other, raw)
			}
			xenc, _ := n.EncryptXattrName(name)
			f.Add(xenc, raw)
		}
	}
	f.Add("", true)
	f.Add("gocryptfs.longname.x", false)
	f.Add("====", false)
	f.Fuzz(func(t *testing.T, encoded string, raw bool) {
		if len(encoded) > 1<<20 {
			t.Skip("longer than any name")
		}
		n := transforms[0]
		if raw {
			n = transforms[1]
		}
		plain, err := n.DecryptName(encoded, iv)
		if err != nil {
			if !errors.Is(err, ErrBadName) {
				t.Fatalf("error without ErrBadName: %v", err)
			}
		} else {
			if !n.WellFormed(encoded) {
				t.Fatalf("%q decrypts but is not well formed", encoded)
			}
			again, err := n.EncryptName(plain, iv)
			if err != nil || again != encoded {
				t.Fatalf("%q decrypts to %q, which encrypts to %q (%v): two spellings of one name", encoded, plain, again, err)
			}
		}
		if x, err := n.DecryptXattrName(encoded); err == nil {
			if again, err := n.EncryptXattrName(x); err != nil || again != encoded {
				t.Fatalf("attribute name %q decrypts to %q, which encrypts to %q (%v)", encoded, x, again, err)
			}
		}
	})
}

// TestEntryOneForm: an entry name decrypts only in the form StoredName gives it: a short
// encoded name is not read behind a hashed long name, nor a long one stored as it is.
func TestEntryOneForm(t *testing.T) {
	iv := randBytes(DirIVLen)
	n, err := NewNameTransform(testKey(), true, true, MinLongNameMax)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"short", strings.Repeat("long", 20)} {
		stored, encoded, long, err := n.StoredName(name, iv)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := n.DecryptEntry(stored, encoded, iv); err != nil || got != name {
			t.Fatalf("%q: %q, %v", name, got, err)
		}
		other := encoded // the other form: as it is for a long name, hashed for a short one
		if !long {
			other = n.HashLongName(encoded)
		}
		if got, err := n.DecryptEntry(other, encoded, iv); !errors.Is(err, ErrBadName) {
			t.Errorf("%q in the other form %q read as %q, %v", name, other, got, err)
		}
	}
}
