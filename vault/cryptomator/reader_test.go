package cryptomator

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/vault/format"
)

type walked struct {
	kind   Kind
	size   int64
	sha256 string
	target string
}

// walkAll reads every entry of v through the walker's one walk (format.Walk): files in full
// (hashed), symlink targets. It fails the test on any problem or error.
func walkAll(t *testing.T, v *Vault) map[string]walked {
	t.Helper()
	got := map[string]walked{}
	err := format.Walk(context.Background(), v.Volume(), func(n format.Node) error {
		e := n.Ref.(Entry)
		w := walked{kind: e.Kind}
		switch e.Kind {
		case KindFile:
			h := sha256.New()
			size, err := v.ReadFile(e, h)
			if err != nil {
				return err
			}
			w.size, w.sha256 = size, hex.EncodeToString(h.Sum(nil))
		case KindSymlink:
			var err error
			if w.target, err = v.ReadLink(e); err != nil {
				return err
			}
		}
		got[n.Path] = w
		return nil
	}, func(p format.Problem) { t.Errorf("walk: %v", p) }, false)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// Every file of the fixture reads back exactly (size and SHA-256), every directory is there,
// and nothing else is.
func TestFixtureReadsExactly(t *testing.T) {
	dir := extractFixture(t)
	v, err := Open(dir, fixturePassword(t))
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	got := walkAll(t, v)
	want := map[string]walked{}
	for _, m := range fixtureManifest(t) {
		switch m.Type {
		case "file":
			want[rcloneEncoded(m.Path)] = walked{kind: KindFile, size: m.Size, sha256: m.SHA256}
		case "dir":
			want[rcloneEncoded(m.Path)] = walked{kind: KindDir}
		default:
			t.Fatalf("manifest entry of type %q", m.Type)
		}
	}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%s: read %+v, manifest %+v", p, got[p], w)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: in the vault, not in the manifest", p)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d entries read, manifest has %d", len(got), len(want))
	}
}

func TestOpenWrongPasswordNamesTheFile(t *testing.T) {
	dir := extractFixture(t)
	_, err := Open(dir, []byte("wrong"))
	if !errors.Is(err, ErrWrongPassword) {
		t.Fatalf("%v, want ErrWrongPassword", err)
	}
	if want := dir + "/" + MasterkeyFileName; !strings.Contains(err.Error(), want) {
		t.Fatalf("%q does not name %s", err, want)
	}
}
