package aegis

import (
	"bytes"
	"crypto/cipher"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// constructors lists every variant with its constructor and vector file.
var constructors = []struct {
	v    *variant
	new  func([]byte, int) (cipher.AEAD, error)
	file string
}{
	{v128L, New128L, "aegis-128l-test-vectors.json"},
	{v128X2, New128X2, "aegis-128x2-test-vectors.json"},
	{v128X4, New128X4, "aegis-128x4-test-vectors.json"},
	{v256, New256, "aegis-256-test-vectors.json"},
	{v256X2, New256X2, "aegis-256x2-test-vectors.json"},
	{v256X4, New256X4, "aegis-256x4-test-vectors.json"},
}

func readVectors(t *testing.T, file string) []map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var vs []map[string]string
	if err := json.Unmarshal(data, &vs); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return vs
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAESRound(t *testing.T) {
	v := readVectors(t, "aesround-test-vector.json")[0]
	out := aesRound(loadBlock(unhex(t, v["in"])), loadBlock(unhex(t, v["rk"])))
	var got [16]byte
	out.store(got[:])
	if want := unhex(t, v["out"]); !bytes.Equal(got[:], want) {
		t.Fatalf("AESRound = %x, want %x", got, want)
	}
}

// TestUpdateVectors checks the state update of AEGIS-128L and AEGIS-256.
func TestUpdateVectors(t *testing.T) {
	for _, c := range constructors[:] {
		if c.v.lanes != 1 {
			continue
		}
		v := readVectors(t, c.file)[0]
		if v["name"] != "Update Test Vector" {
			t.Fatalf("%s: first vector is %q", c.file, v["name"])
		}
		st := genericState{v: c.v}
		for i := range c.v.stateBlocks() {
			st.s[i][0] = loadBlock(unhex(t, v[fmt.Sprintf("S%d", i)]))
		}
		var m0, m1 vec
		if c.v.wide {
			m0[0] = loadBlock(unhex(t, v["M"]))
		} else {
			m0[0] = loadBlock(unhex(t, v["M0"]))
			m1[0] = loadBlock(unhex(t, v["M1"]))
		}
		st.update(&m0, &m1)
		for i := range c.v.stateBlocks() {
			if want := loadBlock(unhex(t, v[fmt.Sprintf("S%d_2", i)])); st.s[i][0] != want {
				t.Errorf("%s: S%d after update = %08x, want %08x", c.v.name, i, st.s[i][0], want)
			}
		}
	}
}

// TestInitVectors checks the lane contexts and the initialized state of the
// X variants.
func TestInitVectors(t *testing.T) {
	for _, c := range constructors {
		if c.v.lanes == 1 {
			continue
		}
		vs := readVectors(t, c.file)
		in, after := vs[0], vs[1]
		for j := range c.v.lanes {
			if want := loadBlock(unhex(t, in[fmt.Sprintf("ctx[%d]", j)])); laneContext(j, c.v.lanes) != want {
				t.Errorf("%s: ctx[%d] = %08x, want %08x", c.v.name, j, laneContext(j, c.v.lanes), want)
			}
		}
		st := genericState{v: c.v}
		st.init(unhex(t, in["key"]), unhex(t, in["nonce"]))
		for i := range c.v.stateBlocks() {
			for j := range c.v.lanes {
				if want := loadBlock(unhex(t, after[fmt.Sprintf("V[%d,%d]", i, j)])); st.s[i][j] != want {
					t.Errorf("%s: V[%d,%d] = %08x, want %08x", c.v.name, i, j, st.s[i][j], want)
				}
			}
		}
	}
}

// aeadVector is one encryption vector of the draft.
type aeadVector struct {
	name, err               string
	key, nonce, ad, msg, ct []byte
	tags                    map[int][]byte
}

func encryptionVectors(t *testing.T, file string) []aeadVector {
	var out []aeadVector
	for _, v := range readVectors(t, file) {
		if _, ok := v["tag128"]; !ok {
			continue
		}
		out = append(out, aeadVector{
			name: v["name"], err: v["error"],
			key: unhex(t, v["key"]), nonce: unhex(t, v["nonce"]), ad: unhex(t, v["ad"]),
			msg: unhex(t, v["msg"]), ct: unhex(t, v["ct"]),
			tags: map[int][]byte{16: unhex(t, v["tag128"]), 32: unhex(t, v["tag256"])},
		})
	}
	if len(out) == 0 {
		t.Fatalf("%s: no encryption vectors", file)
	}
	return out
}

// TestVectors runs every encryption vector through the dispatched
// implementation (assembly where available) and the portable one, for both
// tag sizes; the vectors marked with an error must fail to open.
func TestVectors(t *testing.T) {
	for _, c := range constructors {
		for _, tv := range encryptionVectors(t, c.file) {
			for _, tagSize := range []int{16, 32} {
				t.Run(fmt.Sprintf("%s/%s/tag%d", c.v.name, tv.name, tagSize), func(t *testing.T) {
					a, err := c.new(tv.key, tagSize)
					if err != nil {
						t.Fatal(err)
					}
					sealed := append(bytes.Clone(tv.ct), tv.tags[tagSize]...)
					if tv.err != "" {
						if pt, err := a.Open(nil, tv.nonce, sealed, tv.ad); err == nil {
							t.Fatalf("Open of a forged vector succeeded: %x", pt)
						}
						out := make([]byte, len(tv.ct))
						if openGeneric(c.v, out, tv.key, tv.nonce, sealed, tv.ad, tagSize) {
							t.Fatal("portable Open of a forged vector succeeded")
						}
						return
					}
					if got := a.Seal(nil, tv.nonce, tv.msg, tv.ad); !bytes.Equal(got, sealed) {
						t.Errorf("Seal = %x\nwant   %x", got, sealed)
					}
					gen := make([]byte, len(sealed))
					sealGeneric(c.v, gen, tv.key, tv.nonce, tv.msg, tv.ad, tagSize)
					if !bytes.Equal(gen, sealed) {
						t.Errorf("portable Seal = %x\nwant            %x", gen, sealed)
					}
					pt, err := a.Open(nil, tv.nonce, sealed, tv.ad)
					if err != nil || !bytes.Equal(pt, tv.msg) {
						t.Errorf("Open = %x, %v; want %x", pt, err, tv.msg)
					}
					out := make([]byte, len(tv.msg))
					if !openGeneric(c.v, out, tv.key, tv.nonce, sealed, tv.ad, tagSize) || !bytes.Equal(out, tv.msg) {
						t.Errorf("portable Open = %x, want %x", out, tv.msg)
					}
				})
			}
		}
	}
}
