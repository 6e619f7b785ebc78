package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vaultui/vaultui/internal/atomicfile"
	"github.com/vaultui/vaultui/vault"
)

func TestDefaultPath(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/cfg")
	got, err := DefaultPath()
	if err != nil || got != "/cfg/vaultui/vaults.json" {
		t.Fatalf("with XDG_CONFIG_HOME: got %q, %v", got, err)
	}
	t.Setenv("HOME", "/home/u")
	for _, v := range []string{"", "relative/dir"} {
		t.Setenv("XDG_CONFIG_HOME", v)
		got, err = DefaultPath()
		if err != nil || got != "/home/u/.config/vaultui/vaults.json" {
			t.Fatalf("XDG_CONFIG_HOME=%q: got %q, %v", v, got, err)
		}
	}
}

func TestRegistryMissingFileIsEmpty(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vaultui", "vaults.json")
	r, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Vaults) != 0 || r.Path != path {
		t.Fatalf("got %+v", r)
	}
}

func TestRegistryRoundTripAndPermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vaultui")
	path := filepath.Join(dir, "vaults.json")
	r, _ := Load(path)
	want := []Entry{
		{Name: "work", CipherDir: "/data/work.enc", MountPoint: "/home/u/Vaults/work", ReadOnly: true, Idle: 15 * time.Minute, MountAtStart: true},
		{Name: "photos ☀", CipherDir: "/data/photos"},
	}
	for i, e := range want {
		if err := r.Add(e); err != nil {
			t.Fatal(err)
		}
		want[i].Lock = LockSleep // new vaults lock on sleep
	}
	if err := r.Save(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600", st.Mode().Perm())
	}
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v, want 0700", st.Mode().Perm())
	}
	r2, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(r2.Vaults) != len(want) {
		t.Fatalf("loaded %d vaults, want %d", len(r2.Vaults), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(r2.Vaults[i], want[i]) {
			t.Errorf("vault %d: got %+v, want %+v", i, r2.Vaults[i], want[i])
		}
	}
	// The idle timeout is stored human-readably.
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `"idle": "15m0s"`) {
		t.Errorf("idle not stored as a duration string:\n%s", data)
	}
	// No temp files are left behind (only the lock file beside it).
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 || ents[0].Name() != FileName || ents[1].Name() != FileName+".lock" {
		t.Errorf("directory holds %v, want only vaults.json and its lock", ents)
	}
}

func TestRegistryAddRefusesDuplicatesAndBadNames(t *testing.T) {
	r := &Registry{Path: filepath.Join(t.TempDir(), "vaults.json")}
	if err := r.Add(Entry{Name: "a", CipherDir: "/x/a"}); err != nil {
		t.Fatal(err)
	}
	if err := r.Add(Entry{Name: "a", CipherDir: "/x/b"}); !errors.Is(err, ErrDuplicate) {
		t.Errorf("duplicate name: got %v", err)
	}
	if err := r.Add(Entry{Name: "b", CipherDir: "/x/a/"}); !errors.Is(err, ErrDuplicate) {
		t.Errorf("duplicate cipherdir (trailing slash): got %v", err)
	}
	for _, name := range []string{"", "-rf", ".hidden", " pad", "pad ", "a/b", "tab\there", strings.Repeat("x", 65), "\xff"} {
		if err := r.Add(Entry{Name: name, CipherDir: "/x/other"}); !errors.Is(err, ErrInvalidName) {
			t.Errorf("name %q: got %v, want ErrInvalidName", name, err)
		}
	}
	if err := r.Add(Entry{Name: "same", CipherDir: "/x/s", MountPoint: "/x/s"}); err == nil {
		t.Error("mount point == cipherdir accepted")
	}
	if len(r.Vaults) != 1 {
		t.Errorf("refused entries were added: %+v", r.Vaults)
	}
}

func TestRegistryAddMakesPathsAbsolute(t *testing.T) {
	t.Chdir(t.TempDir())
	wd, _ := os.Getwd()
	r := &Registry{}
	if err := r.Add(Entry{Name: "rel", CipherDir: "enc", MountPoint: "./mnt/"}); err != nil {
		t.Fatal(err)
	}
	e := r.Vaults[0]
	if e.CipherDir != filepath.Join(wd, "enc") || e.MountPoint != filepath.Join(wd, "mnt") {
		t.Errorf("got %+v", e)
	}
}

func TestRegistryRemove(t *testing.T) {
	r := &Registry{Vaults: []Entry{{Name: "a", CipherDir: "/a"}, {Name: "b", CipherDir: "/b"}, {Name: "c", CipherDir: "/c"}}}
	keep := r.Vaults
	if e, err := r.Remove("b"); err != nil || e.Name != "b" {
		t.Fatalf("Remove = %+v, %v", e, err)
	}
	if len(r.Vaults) != 2 || r.Vaults[0].Name != "a" || r.Vaults[1].Name != "c" {
		t.Errorf("after remove: %+v", r.Vaults)
	}
	// Remove must not scribble over a slice a caller still holds.
	if keep[1].Name != "b" {
		t.Errorf("Remove modified the caller's slice: %+v", keep)
	}
	if _, err := r.Remove("b"); !errors.Is(err, vault.ErrNotFound) {
		t.Errorf("removing unknown name: got %v, want vault.ErrNotFound", err)
	}
}

func TestRegistryCorruptIsReportedAndNeverOverwritten(t *testing.T) {
	cases := map[string]string{
		"not json":        "{not json",
		"truncated":       `{"version":1,"vaults":[{"name":"a","ciph`,
		"empty":           "",
		"wrong version":   `{"version":7,"vaults":[]}`,
		"relative dir":    `{"version":1,"vaults":[{"name":"a","cipherdir":"rel"}]}`,
		"bad name":        `{"version":1,"vaults":[{"name":"-x","cipherdir":"/a"}]}`,
		"duplicate name":  `{"version":1,"vaults":[{"name":"a","cipherdir":"/a"},{"name":"a","cipherdir":"/b"}]}`,
		"bad idle":        `{"version":1,"vaults":[{"name":"a","cipherdir":"/a","idle":"soon"}]}`,
		"trailing object": `{"version":1,"vaults":[]} {}`,
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "vaults.json")
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("got %v, want ErrCorrupt", err)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error does not name the file: %v", err)
			}
			// A registry object built by hand must not be saved over it either.
			r := &Registry{Path: path, Vaults: []Entry{{Name: "new", CipherDir: "/n"}}}
			if err := r.Save(); !errors.Is(err, ErrCorrupt) {
				t.Errorf("Save over a corrupt file: got %v", err)
			}
			got, _ := os.ReadFile(path)
			if string(got) != content {
				t.Errorf("corrupt file was changed to %q", got)
			}
		})
	}
}

func TestRegistrySaveFailureKeepsOldFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vaults.json")
	r, _ := Load(path)
	r.Add(Entry{Name: "old", CipherDir: "/old"})
	if err := r.Save(); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)

	injected := errors.New("injected crash before rename")
	r.files = atomicfile.Failing{At: "rename", Err: injected, Check: func(tmp string) {
		// The temp file is complete and in the same directory.
		data, err := os.ReadFile(tmp)
		if err != nil || !json.Valid(data) || filepath.Dir(tmp) != filepath.Dir(path) {
			t.Errorf("temp file %s not complete in the target dir: %v", tmp, err)
		}
	}}

	r.Add(Entry{Name: "new", CipherDir: "/new"})
	if err := r.Save(); !errors.Is(err, injected) {
		t.Fatalf("got %v", err)
	}
	after, _ := os.ReadFile(path)
	if string(after) != string(before) {
		t.Errorf("file changed by a failed save:\n%s", after)
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 2 { // vaults.json and vaults.json.lock
		t.Errorf("temp file left behind: %v", ents)
	}
}

func TestRegistryResolve(t *testing.T) {
	base := t.TempDir()
	t.Chdir(base)
	registered := filepath.Join(base, "reg")
	unregistered := filepath.Join(base, "unreg")
	plain := filepath.Join(base, "plain")
	for _, d := range []string{registered, unregistered, plain} {
		os.Mkdir(d, 0o700)
	}
	os.WriteFile(filepath.Join(registered, "gocryptfs.conf"), []byte("{}"), 0o400)
	os.WriteFile(filepath.Join(unregistered, "gocryptfs.conf"), []byte("{}"), 0o400)
	// A directory whose name equals a registered vault's name.
	os.Mkdir(filepath.Join(base, "work"), 0o700)

	r := &Registry{}
	if err := r.Add(Entry{Name: "work", CipherDir: registered, MountPoint: "/m"}); err != nil {
		t.Fatal(err)
	}

	for _, arg := range []string{"work", registered, "./reg", registered + "/"} {
		e, err := r.Resolve(arg)
		if err != nil || e.Name != "work" || e.MountPoint != "/m" {
			t.Errorf("Resolve(%q) = %+v, %v; want the registered entry", arg, e, err)
		}
	}
	e, err := r.Resolve("./unreg")
	if err != nil || e.CipherDir != unregistered || e.Name != "" {
		t.Errorf("unregistered vault dir: %+v, %v", e, err)
	}
	e, err = r.Resolve("unreg")
	if err != nil || e.CipherDir != unregistered {
		t.Errorf("unregistered vault dir as bare name: %+v, %v", e, err)
	}
	for _, arg := range []string{"nosuch", "./plain", plain, "", "./work"} {
		if _, err := r.Resolve(arg); !errors.Is(err, vault.ErrNotFound) {
			t.Errorf("Resolve(%q): got %v, want vault.ErrNotFound", arg, err)
		}
	}
}

func TestDefaultMountPoint(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	got, err := DefaultMountPoint("work")
	if err != nil || got != "/home/u/Vaults/work" {
		t.Errorf("got %q, %v", got, err)
	}
	if _, err := DefaultMountPoint("../x"); !errors.Is(err, ErrInvalidName) {
		t.Errorf("unsafe name: got %v", err)
	}
}

func TestRegistrySaveRefusesToUndoAnotherChange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vaults.json")
	a, _ := Load(path)
	b, _ := Load(path)
	if err := a.Add(Entry{Name: "from-a", CipherDir: "/a"}); err != nil {
		t.Fatal(err)
	}
	if err := a.Save(); err != nil {
		t.Fatal(err)
	}
	// b was loaded before a saved: saving it would drop "from-a".
	b.Add(Entry{Name: "from-b", CipherDir: "/b"})
	if err := b.Save(); !errors.Is(err, ErrChanged) {
		t.Fatalf("stale save: got %v, want ErrChanged", err)
	}
	// a may keep saving its own changes.
	a.Add(Entry{Name: "again", CipherDir: "/again"})
	if err := a.Save(); err != nil {
		t.Fatalf("second save by the same registry: %v", err)
	}
	c, err := Load(path)
	if err != nil || len(c.Vaults) != 2 {
		t.Fatalf("after saves: %+v, %v", c, err)
	}
}

// TestRegistryKeepsUnknownFields: fields a newer vaultui writes, at the top or in an entry,
// survive this version's load, change and save; entries from before lock policies keep
// "never", new ones get "sleep".
func TestRegistryKeepsUnknownFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vaults.json")
	old := `{"version":1,"future_top":{"a":[1,2]},"vaults":[` +
		`{"name":"old","cipherdir":"/data/old","mountpoint":"/m/old","future":"x","nested":{"k":true}}]}`
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Load(path)
	if err != nil {
		t.Fatalf("a registry with unknown fields: %v", err)
	}
	if p := r.Vaults[0].LockPolicy(); p != LockNever {
		t.Errorf("an entry from before lock policies has policy %q, want never", p)
	}
	if err := r.Add(Entry{Name: "new", CipherDir: "/data/new"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Update("old", func(e *Entry) error { e.MountAtStart = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := r.Save(); err != nil {
		t.Fatal(err)
	}
	r2, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	var f struct {
		FutureTop json.RawMessage              `json:"future_top"`
		Vaults    []map[string]json.RawMessage `json:"vaults"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	if string(compactJSON(t, f.FutureTop)) != `{"a":[1,2]}` {
		t.Errorf("top-level unknown field became %s", f.FutureTop)
	}
	if string(f.Vaults[0]["future"]) != `"x"` || string(compactJSON(t, f.Vaults[0]["nested"])) != `{"k":true}` {
		t.Errorf("entry's unknown fields lost: %s", data)
	}
	if !r2.Vaults[0].MountAtStart || r2.Vaults[0].LockPolicy() != LockNever || r2.Vaults[1].LockPolicy() != LockSleep {
		t.Errorf("after the round trip: %+v", r2.Vaults)
	}
	// A policy this version does not know counts as the strictest.
	if p := (Entry{Lock: "on-logout"}).LockPolicy(); p != LockScreen {
		t.Errorf("unknown policy reads as %q", p)
	}
	if _, err := r2.Update("new", func(e *Entry) error { e.Lock = "sometimes"; return nil }); err == nil {
		t.Error("Update accepted an unknown lock policy")
	}
	if _, err := r2.Update("missing", func(e *Entry) error { return nil }); !errors.Is(err, vault.ErrNotFound) {
		t.Errorf("Update of a missing vault: %v", err)
	}
}

func compactJSON(t *testing.T, b []byte) []byte {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return out.Bytes()
}
