package cryptomator

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"hash"
	"io"
	"os"
	"path"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/cryptomator/cmfixture"
	"github.com/vaultui/vaultui/vault/layout"
)

// The fuzz targets of the files anyone who can write a vault's folder controls: the vault
// configuration (a JWT), the masterkey file, entry names and name.c9s / dir.c9r, and file
// contents (headers and chunks; dirid.c9r and symlink.c9r are contents too). Seeds come from
// the fixtures' cipher.tar, decrypting ones with siv-gcm-a's key.

// fixtureTarFiles returns the regular files of fixture fx's cipher.tar of at most max bytes, by
// their path below cipher/.
func fixtureTarFiles(f *testing.F, fx cmfixture.Fixture, max int64) map[string][]byte {
	f.Helper()
	fh, err := os.Open(path.Join(fx.Dir(), "cipher.tar"))
	if err != nil {
		f.Fatal(err)
	}
	defer fh.Close()
	out := map[string][]byte{}
	tr := tar.NewReader(fh)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			f.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg && h.Size <= max {
			b, err := io.ReadAll(tr)
			if err != nil {
				f.Fatal(err)
			}
			out[strings.TrimPrefix(h.Name, "cipher/")] = b
		}
	}
}

func fuzzFixtureKey(f *testing.F) *Masterkey {
	f.Helper()
	k, err := fixtureKey()
	if err != nil {
		f.Fatal(err)
	}
	return k
}

// resign replaces the signature of token by one under key with the alg its header names, so
// that the fuzzer's changes to header and claims reach the claims' checks. ok is false for a
// token that does not parse.
func resign(token []byte, key []byte) ([]byte, bool) {
	s := string(bytes.TrimSpace(token))
	t, err := crypto.ParseJWT(s)
	if err != nil {
		return nil, false
	}
	h := map[string]func() hash.Hash{"HS256": sha256.New, "HS384": sha512.New384, "HS512": sha512.New}[t.Header.Alg]
	in := s[:strings.LastIndexByte(s, '.')]
	m := hmac.New(h, key)
	m.Write([]byte(in))
	return []byte(in + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))), true
}

// FuzzVerifyConfig reads hostile vault.cryptomator tokens: no panic; errors wrap
// layout.ErrCorrupt or ErrUnsupported; a kid leads to a plain file name in the vault's folder
// only; a verified config has format 8, a positive threshold and a known combo, and signing
// it again verifies to the same config. Each input is also tried re-signed under the key, so
// that changed claims get past the signature.
func FuzzVerifyConfig(f *testing.F) {
	k := fuzzFixtureKey(f)
	raw := k.Raw()
	for _, fx := range []cmfixture.Fixture{cmfixture.SIVGCMA, cmfixture.RcloneB} {
		f.Add(fixtureTarFiles(f, fx, 1<<20)[ConfigFileName])
	}
	for _, c := range []Config{
		{KeyID: "masterkeyfile:masterkey.cryptomator", Format: 8, ShorteningThreshold: 220, JTI: "x", CipherCombo: SIVCTRMAC},
		{KeyID: "masterkeyfile:../x", Format: 7, ShorteningThreshold: 0, CipherCombo: "SIV_CTR"},
		{KeyID: "hub+https://example.com", Format: 8, ShorteningThreshold: -1, CipherCombo: SIVGCM},
	} {
		tok, err := c.Sign(k)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(tok)
	}
	f.Add([]byte("eyJhbGciOiJub25lIn0.eyJmb3JtYXQiOjh9."))
	f.Fuzz(func(t *testing.T, token []byte) {
		if len(token) > 1<<20 {
			t.Skip("over 1 MiB")
		}
		if name, err := MasterkeyFileOf(token); err == nil {
			if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
				t.Fatalf("kid leads to %q", name)
			}
		} else if !errors.Is(err, layout.ErrCorrupt) && !errors.Is(err, ErrUnsupported) {
			t.Fatalf("MasterkeyFileOf: error without sentinel: %v", err)
		}
		check := func(token []byte) {
			c, err := VerifyConfig(token, k)
			if err != nil {
				if !errors.Is(err, layout.ErrCorrupt) && !errors.Is(err, ErrUnsupported) {
					t.Fatalf("VerifyConfig: error without sentinel: %v", err)
				}
				return
			}
			if c.Format != Format || c.ShorteningThreshold < 1 || (c.CipherCombo != SIVGCM && c.CipherCombo != SIVCTRMAC) {
				t.Fatalf("verified config %+v", c)
			}
			again, err := c.Sign(k)
			if err != nil {
				t.Fatal(err)
			}
			c2, err := VerifyConfig(again, k)
			if err != nil || *c2 != *c {
				t.Fatalf("config %+v signed again reads as %+v, %v", c, c2, err)
			}
		}
		check(token)
		if resigned, ok := resign(token, raw); ok {
			check(resigned)
		}
	})
}

// FuzzUnlockMasterkey reads hostile masterkey files. Everything but the key derivation is
// checked on every input: parsing bounds the scrypt parameters before any derivation, the
// keys are unwrapped with the fixture's key-encryption key (so that changes to versionMac,
// version and the wrapped keys are seen), and an unwrapped key wraps back to exactly the
// stored bytes. Only files at the lowest cost (N=2^10) go through the whole UnlockMasterkey.
func FuzzUnlockMasterkey(f *testing.F) {
	k := fuzzFixtureKey(f)
	pw, err := cmfixture.Password()
	if err != nil {
		f.Fatal(err)
	}
	fixture := fixtureTarFiles(f, cmfixture.SIVGCMA, 1<<20)[MasterkeyFileName]
	mf, kdf, err := parseMasterkeyFile(fixture)
	if err != nil {
		f.Fatal(err)
	}
	kek, err := kdf.DeriveKeyMinSalt(context.Background(), passwordBytes(pw), minScryptSaltLen)
	if err != nil {
		f.Fatal(err)
	}
	if _, err := mf.unwrap(kek); err != nil {
		f.Fatal(err)
	}
	f.Add(fixture)
	f.Add(fixtureTarFiles(f, cmfixture.RcloneB, 1<<20)[MasterkeyFileName])
	cheap, err := LockMasterkey(context.Background(), k, pw, crypto.MinScryptLogN)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(cheap)
	f.Add(bytes.Replace(fixture, []byte(`"scryptCostParam":32768`), []byte(`"scryptCostParam":1073741824`), 1))
	f.Add([]byte(`{"version":999}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<20 {
			t.Skip("over 1 MiB")
		}
		file, kdf, err := parseMasterkeyFile(data)
		if err != nil {
			if !errors.Is(err, layout.ErrCorrupt) && !errors.Is(err, crypto.ErrWeakKDF) {
				t.Fatalf("error without sentinel: %v", err)
			}
			return
		}
		if kdf.ValidateMinSalt(minScryptSaltLen) != nil || kdf.N > 1<<crypto.MaxScryptLogN {
			t.Fatalf("parameters %+v passed", kdf)
		}
		if got, err := file.unwrap(kek); err == nil {
			enc, _ := crypto.KeyWrap(kek, got.enc[:])
			mac, _ := crypto.KeyWrap(kek, got.mac[:])
			if !bytes.Equal(enc, file.PrimaryMasterKey) || !bytes.Equal(mac, file.HmacMasterKey) {
				t.Fatal("an unwrapped key does not wrap back to the stored bytes")
			}
		} else if !errors.Is(err, layout.ErrCorrupt) && !errors.Is(err, ErrWrongPassword) {
			t.Fatalf("unwrap: error without sentinel: %v", err)
		}
		if kdf.N == 1<<crypto.MinScryptLogN {
			if _, err := UnlockMasterkey(context.Background(), data, pw); err != nil && !errors.Is(err, layout.ErrCorrupt) &&
				!errors.Is(err, ErrWrongPassword) && !errors.Is(err, crypto.ErrKDFMemory) {
				t.Fatalf("UnlockMasterkey: error without sentinel: %v", err)
			}
		}
	})
}

// FuzzNames reads hostile entry names, name.c9s and dir.c9r contents: no panic; refusals wrap
// layout.ErrCorrupt; a name that decrypts encrypts back to exactly the stored name (one
// spelling per name); a name.c9s is accepted only for the .c9s folder it hashes to and only
// above the shortening threshold; a dir.c9r holds 1 to 36 bytes.
func FuzzNames(f *testing.F) {
	k := fuzzFixtureKey(f)
	names := NewNames(k)
	files := fixtureTarFiles(f, cmfixture.SIVGCMA, 1<<20)
	ids := map[string]string{names.DirPath(rootDirID): rootDirID} // folder -> directory ID
	for p, b := range files {
		if path.Base(p) == DirFile {
			ids[names.DirPath(string(b))] = string(b)
		}
	}
	for p, b := range files {
		dir, base := path.Split(p)
		if base == DirFile {
			f.Add("", path.Base(dir), b) // the dir.c9r's own entry name is under its parent's ID
		}
		if id, ok := ids[strings.TrimSuffix(dir, "/")]; ok {
			f.Add(id, base, []byte(base))
		}
	}
	long := names.Encrypt("", strings.Repeat("long name ", 20))
	f.Add("", Shorten(long), []byte(long))
	short := names.Encrypt("", "short")
	f.Add("", Shorten(short), []byte(short)) // a short name behind a .c9s: refused
	f.Add("", short[:4]+"\n"+short[4:], []byte(nil))
	f.Fuzz(func(t *testing.T, dirID, stored string, content []byte) {
		if len(dirID)+len(stored)+len(content) > 1<<20 {
			t.Skip("over 1 MiB")
		}
		decrypt := func(enc string) {
			name, err := names.Decrypt(dirID, enc)
			if err != nil {
				if !errors.Is(err, layout.ErrCorrupt) {
					t.Fatalf("Decrypt: error without ErrCorrupt: %v", err)
				}
				return
			}
			if checkName(name) != nil {
				t.Fatalf("%q decrypts to %q", enc, name)
			}
			if again := names.encryptAsIs(dirID, name); again != enc {
				t.Fatalf("%q decrypts to %q, which encrypts to %q: two spellings of one name", enc, name, again)
			}
		}
		decrypt(stored)
		if enc, err := ParseNameFile(content, stored, DefaultShorteningThreshold); err == nil {
			if Shorten(enc) != stored || len(enc) <= DefaultShorteningThreshold || enc != string(content) {
				t.Fatalf("name.c9s %q accepted for %q", content, stored)
			}
			decrypt(enc)
		} else if !errors.Is(err, layout.ErrCorrupt) {
			t.Fatalf("ParseNameFile: error without ErrCorrupt: %v", err)
		}
		if id, err := ParseDirID(content); err == nil {
			if len(id) == 0 || len(id) > MaxDirIDLen || id != string(content) {
				t.Fatalf("dir.c9r %q read as %q", content, id)
			}
			names.DirPath(id)
		} else if !errors.Is(err, layout.ErrCorrupt) {
			t.Fatalf("ParseDirID: error without ErrCorrupt: %v", err)
		}
	})
}

// FuzzDecryptContent decrypts hostile file contents (a file, a symlink.c9r, a dirid.c9r) in
// both cipher combos: no panic; an error wraps crypto.ErrAuth; what decrypts is as long as
// the geometry says for the ciphertext's length; and reading on past bad chunks
// (OpenChunksZeroing) gives the same bytes where every chunk authenticates.
func FuzzDecryptContent(f *testing.F) {
	k := fuzzFixtureKey(f)
	var contents [2]*Content
	for i, combo := range []CipherCombo{SIVGCM, SIVCTRMAC} {
		c, err := NewContent(combo, k)
		if err != nil {
			f.Fatal(err)
		}
		contents[i] = c
	}
	for p, b := range fixtureTarFiles(f, cmfixture.SIVGCMA, 3*ChunkSize) {
		if strings.HasSuffix(p, suffixC9R) && path.Base(p) != DirFile {
			f.Add(b, false)
		}
	}
	for _, n := range []int{0, 36, ChunkSize, ChunkSize + 1} {
		var ct bytes.Buffer
		if _, err := contents[1].Encrypt(&ct, bytes.NewReader(bytes.Repeat([]byte{'c'}, n))); err != nil {
			f.Fatal(err)
		}
		f.Add(ct.Bytes(), true)
	}
	f.Add([]byte{}, false)
	f.Fuzz(func(t *testing.T, ct []byte, ctrmac bool) {
		if len(ct) > 1<<20 {
			t.Skip("over 1 MiB")
		}
		c := contents[0]
		if ctrmac {
			c = contents[1]
		}
		var out bytes.Buffer
		n, err := c.Decrypt(&out, bytes.NewReader(ct))
		if n != int64(out.Len()) {
			t.Fatalf("Decrypt says %d bytes, wrote %d", n, out.Len())
		}
		if err != nil {
			if !errors.Is(err, crypto.ErrAuth) {
				t.Fatalf("error without ErrAuth: %v", err)
			}
			return
		}
		if size, ok := c.geo.PlainSize(int64(len(ct))); len(ct) > 0 && (!ok || size != n) {
			t.Fatalf("%d bytes decrypt to %d, the geometry says %d (%v)", len(ct), n, size, ok)
		}
		if len(ct) == 0 {
			return
		}
		h, err := c.OpenHeader(ct)
		if err != nil {
			t.Fatalf("header opened in Decrypt, not in OpenHeader: %v", err)
		}
		zeroing := c.OpenChunksZeroing(nil, ct[c.geo.HeaderLen:], 0, h, func(be *crypto.BlockError) {
			t.Fatalf("chunk %d fails in OpenChunksZeroing only", be.Block)
		})
		if !bytes.Equal(zeroing, out.Bytes()) {
			t.Fatal("OpenChunksZeroing and Decrypt differ")
		}
		if id, err := ParseDirID(out.Bytes()); err == nil && len(id) > MaxDirIDLen {
			t.Fatalf("dirid.c9r content of %d bytes accepted", len(id))
		}
	})
}
