package vfs

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCryptomatorRenameExchange: RENAME_EXCHANGE swaps two entries of a Cryptomator mount,
// each kind with each, with short names (.c9r) and long ones (.c9s folders), in one
// directory and across two; the vault read offline then holds the swapped tree. Where no
// single step of the format can swap them (a long name's payload would change its name: a
// file and a directory or symlink, one of them long; or two long names of different kinds
// but both folders), the exchange is refused with EINVAL and both entries stay as they were.
func TestCryptomatorRenameExchange(t *testing.T) {
	long := strings.Repeat("long-", 40)
	type side struct{ kind, name string }
	kinds := []string{"file", "dir", "link"}
	vol, v := cryptomatorVolume(t)
	mp, _ := mountTest(t, vol, Options{})
	if err := os.Mkdir(filepath.Join(mp, "other"), 0o755); err != nil {
		t.Fatal(err)
	}
	make := func(p, kind, tag string) {
		t.Helper()
		var err error
		switch kind {
		case "file":
			err = os.WriteFile(p, []byte("file "+tag), 0o644)
		case "dir":
			if err = os.Mkdir(p, 0o755); err == nil {
				err = os.WriteFile(filepath.Join(p, "in"), []byte("in "+tag), 0o644)
			}
		case "link":
			err = os.Symlink("target "+tag, p)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// refused reports whether the format has no single step for swapping a and b.
	refused := func(a, b side) bool {
		aLong, bLong := strings.HasPrefix(a.name, long), strings.HasPrefix(b.name, long)
		if !aLong && !bLong || a.kind == b.kind {
			return false
		}
		if a.kind != "file" && b.kind != "file" {
			return aLong && bLong // folder kinds: their folders swap, unless both are long
		}
		return true
	}
	i := 0
	for _, ak := range kinds {
		for _, bk := range kinds {
			for _, names := range [][2]string{{"a", "b"}, {long + "a", long + "b"}, {"a", long + "b"}, {long + "a", "b"}} {
				for _, dir := range []string{"", "other"} {
					i++
					a := side{ak, names[0] + string(rune('0'+i%10)) + strings.Repeat("x", i/10)}
					b := side{bk, names[1] + string(rune('0'+i%10)) + strings.Repeat("x", i/10)}
					pa, pb := filepath.Join(mp, a.name), filepath.Join(mp, dir, b.name)
					make(pa, a.kind, "A")
					make(pb, b.kind, "B")
					before := mountedTree(t, mp)
					err := unix.Renameat2(unix.AT_FDCWD, pa, unix.AT_FDCWD, pb, unix.RENAME_EXCHANGE)
					want := maps.Clone(before)
					if refused(a, b) {
						if err != unix.EINVAL {
							t.Errorf("%s %q <-> %s %q: %v, want EINVAL", a.kind, a.name, b.kind, b.name, err)
						}
					} else {
						if err != nil {
							t.Errorf("%s %q <-> %s %q: %v", a.kind, a.name, b.kind, b.name, err)
							continue
						}
						ra, rb := a.name, filepath.Join(dir, b.name)
						want = map[string]string{}
						for p, c := range before {
							switch {
							case p == ra || strings.HasPrefix(p, ra+"/"):
								p = rb + strings.TrimPrefix(p, ra)
							case p == rb || strings.HasPrefix(p, rb+"/"):
								p = ra + strings.TrimPrefix(p, rb)
							}
							want[p] = c
						}
					}
					diffTrees(t, a.kind+" "+a.name+" <-> "+b.kind+" "+b.name+" through the mount", mountedTree(t, mp), want)
					diffTrees(t, a.kind+" "+a.name+" <-> "+b.kind+" "+b.name+" offline", offlineTree(t, v), want)
					for _, p := range []string{pa, pb} {
						if err := os.RemoveAll(p); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
		}
	}
}
