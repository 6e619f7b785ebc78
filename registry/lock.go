package registry

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/vaultui/vaultui/internal/userfile"
	"golang.org/x/sys/unix"
)

// registryLockWait bounds how long a writer waits for another one.
const registryLockWait = 10 * time.Second

// lockRegistry takes an exclusive flock on the registry's sibling lock file (vaults.json.lock),
// creating the directory and the file as needed. The registry file itself cannot carry the
// lock: Save replaces it by rename. Every read-modify-write of the registry (Update)
// and every Save's compare-and-rename holds it, so two writers (the terminal app and a
// command) never lose each other's change.
func lockRegistry(path string) (unlock func(), err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("locking registry: %w", err)
	}
	// Not even a lock file in a directory someone else could swap files in.
	if err := userfile.CheckDir(dir); err != nil {
		return nil, fmt.Errorf("locking registry: %w", err)
	}
	lockPath := path + ".lock"
	f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("locking registry: %w", err)
	}
	deadline := time.Now().Add(registryLockWait)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("locking registry %s: %w", lockPath, err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("registry %s: another vaultui has held its lock %s for over %v", path, lockPath, registryLockWait)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return func() {
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}

// Update loads the registry at path, applies change and saves it, all under the
// registry's lock, so concurrent updates from several processes all land. When change
// returns an error nothing is saved and that error is returned. It returns the registry as
// saved.
func Update(path string, change func(r *Registry) error) (*Registry, error) {
	unlock, err := lockRegistry(path)
	if err != nil {
		return nil, err
	}
	defer unlock()
	r, err := Load(path)
	if err != nil {
		return nil, err
	}
	if err := change(r); err != nil {
		return nil, err
	}
	if err := r.save(); err != nil {
		return nil, err
	}
	return r, nil
}
