package cryptomator

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestCreateRaceLeavesOneWholeVault: two Creates in the same empty folder (two terminals, two
// inits) both pass the emptiness check; the one that loses must not remove what the winner
// wrote: the folder ends as one whole vault that opens with the winner's password.
func TestCreateRaceLeavesOneWholeVault(t *testing.T) {
	for i := range 20 {
		dir := filepath.Join(t.TempDir(), "v")
		var wg sync.WaitGroup
		won := make([]bool, 2)
		for j := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v, err := Create(context.Background(), dir, []byte{byte('a' + j)}, CreateOptions{ScryptLogN: 10})
				if err == nil {
					won[j] = true
					v.Close()
				}
			}()
		}
		wg.Wait()
		if won[0] == won[1] {
			t.Fatalf("round %d: created %v, want exactly one", i, won)
		}
		pw := []byte{'a'}
		if won[1] {
			pw = []byte{'b'}
		}
		v, err := Open(context.Background(), dir, pw)
		if err != nil {
			t.Fatalf("round %d: the winner's vault does not open: %v", i, err)
		}
		if err := v.CheckDirIDBackup(v.Root()); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		v.Close()
	}
}

// TestCreateFailureLeavesFolderEmpty: a Create that fails (here: a scrypt cost out of bounds)
// returns the error, without panicking, and leaves the folder as it found it.
func TestCreateFailureLeavesFolderEmpty(t *testing.T) {
	dir := t.TempDir()
	if _, err := Create(context.Background(), dir, []byte("pw"), CreateOptions{ScryptLogN: 40}); err == nil {
		t.Fatal("created with scrypt cost 2^40")
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Fatalf("left %v (%v)", ents, err)
	}
}
