package cryptomator

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/vault/cryptomator/cmfixture"
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

// Every file of each fixture reads back exactly (size and SHA-256), every directory is there,
// nothing else is, the walk finds no problem (names, dirid.c9r backups, chunks), and each
// path listed is found again by Resolve. rclone-b holds a name rclone stored in NFD.
func TestFixtureReadsExactly(t *testing.T) {
	for _, fx := range []cmfixture.Fixture{cmfixture.SIVGCMA, cmfixture.RcloneB} {
		t.Run(string(fx), func(t *testing.T) {
			pw, err := fx.Password()
			if err != nil {
				t.Fatal(err)
			}
			manifest, err := fx.Manifest()
			if err != nil {
				t.Fatal(err)
			}
			v, err := Open(context.Background(), fx.Folder(t), pw)
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			got := walkAll(t, v)
			want := map[string]walked{}
			for _, m := range manifest {
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
				if e, err := v.Resolve(p); err != nil || e.Name != path.Base(p) {
					t.Errorf("Resolve(%+q) = %+q, %v", p, e.Name, err)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("%d entries read, manifest has %d", len(got), len(want))
			}
		})
	}
}

func TestOpenWrongPasswordNamesTheFile(t *testing.T) {
	dir := extractFixture(t)
	_, err := Open(context.Background(), dir, []byte("wrong"))
	if !errors.Is(err, ErrWrongPassword) {
		t.Fatalf("%v, want ErrWrongPassword", err)
	}
	if want := dir + "/" + MasterkeyFileName; !strings.Contains(err.Error(), want) {
		t.Fatalf("%q does not name %s", err, want)
	}
}

// A sync tool's copy of an entry folder that holds no payload (what a crash leaves when it
// stops a settle or a rename after the copy's payload moved) holds no data: it is reported
// as ErrHalfMade, which fsck notes (format.KindTemp), not as a name that does not decrypt.
func TestHalfMadeCopyIsNoDamage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "v")
	v, err := Create(context.Background(), dir, []byte("pw"), CreateOptions{ScryptLogN: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	x, err := v.Symlink(v.Root(), "x", "target")
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, filepath.FromSlash(x.node()))
	cp := strings.TrimSuffix(src, ".c9r") + " (conflicted copy 2026-11-30).c9r"
	if err := os.Mkdir(cp, 0o700); err != nil {
		t.Fatal(err)
	}
	ents, err := v.ReadDir(v.Root())
	if len(ents) != 1 || !errors.Is(err, ErrHalfMade) {
		t.Fatalf("%v, %v: want the original, and ErrHalfMade for the copy", ents, err)
	}
	var kinds []string
	if _, err := v.Volume().ReadDir(format.Dir{Ref: v.Root()}, false, func(p format.Problem) { kinds = append(kinds, p.Kind) }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(kinds, []string{format.KindTemp}) {
		t.Fatalf("problems of kinds %q, want one %q", kinds, format.KindTemp)
	}
}
