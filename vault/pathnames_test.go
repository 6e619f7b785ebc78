package vault

import (
	"testing"

	"golang.org/x/sys/unix"
)

// Every path of every fixture maps to the cipher path gocryptfs gave it, and back: per-directory
// IVs, deterministic names, plaintext names, long names and LongNameMax.
func TestFixturesPathNames(t *testing.T) {
	for _, name := range fixtureNames(t) {
		t.Run(name, func(t *testing.T) {
			f, v := unlockFixture(t, name)
			rootfd, err := unix.Open(v.Dir, unix.O_PATH|unix.O_DIRECTORY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(rootfd)
			pn := v.PathNames()
			for _, e := range f.manifest.Entries {
				if e.CipherPath == "" {
					continue
				}
				if got, err := pn.EncryptPath(rootfd, e.Path); err != nil || got != e.CipherPath {
					t.Errorf("EncryptPath(%q) = %q, %v; gocryptfs: %q", e.Path, got, err, e.CipherPath)
				}
				if got, err := pn.DecryptPath(rootfd, e.CipherPath); err != nil || got != e.Path {
					t.Errorf("DecryptPath(%q) = %q, %v; want %q", e.CipherPath, got, err, e.Path)
				}
			}
		})
	}
}
