package registry

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
)

// TestRegistryConcurrentWriters: two writers adding 50 vaults each, at the same time, end
// with all 100 registered (without the lock, compare-then-rename let one overwrite the other).
func TestRegistryConcurrentWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cfg", FileName)
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				name := fmt.Sprintf("w%d-v%d", w, i)
				_, err := Update(path, func(r *Registry) error {
					return r.Add(Entry{Name: name, CipherDir: "/data/" + name, MountPoint: "/mnt/" + name})
				})
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	r, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Vaults) != 100 {
		t.Fatalf("%d vaults registered, want 100", len(r.Vaults))
	}
	for w := range 2 {
		for i := range 50 {
			if _, ok := r.Lookup(fmt.Sprintf("w%d-v%d", w, i)); !ok {
				t.Errorf("w%d-v%d lost", w, i)
			}
		}
	}
	// A change that fails saves nothing.
	if _, err := Update(path, func(r *Registry) error { _, err := r.Remove("nonexistent"); return err }); err == nil {
		t.Error("removing a missing vault succeeded")
	}
	if r2, _ := Load(path); len(r2.Vaults) != 100 {
		t.Errorf("a failed update changed the registry: %d vaults", len(r2.Vaults))
	}
}
