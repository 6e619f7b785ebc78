package vault

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/vaultui/vaultui/crypto"
)

// testOnlyConfigWrite, when set by tests, is called during writeConfig at
// each stage ("partial": half of the new config is in the temporary file;
// "synced": the temporary file is complete and synced, before the rename).
// An error it returns aborts the write as a crash would.
var testOnlyConfigWrite func(stage string) error

func configWriteHook(stage string) error {
	if testOnlyConfigWrite == nil {
		return nil
	}
	return testOnlyConfigWrite(stage)
}

// writeConfig replaces cipherdir/gocryptfs.conf atomically: the new content
// goes to gocryptfs.conf.tmp (mode 0400, as gocryptfs), is synced, renamed
// over the old file, and the directory is synced. A crash at any point
// leaves the old or the new config, never neither; on error the temporary
// file is removed.
func writeConfig(cipherdir string, c *Config) (err error) {
	data, err := c.Marshal()
	if err != nil {
		return err
	}
	final := filepath.Join(cipherdir, crypto.ConfName)
	tmp := final + ".tmp"
	// A stale temporary file is what an earlier crash left; it was never
	// the config.
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("vault: %w", err)
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o400)
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	half := len(data) / 2
	if _, err = f.Write(data[:half]); err != nil {
		return fmt.Errorf("vault: writing %s: %w", tmp, err)
	}
	if err = configWriteHook("partial"); err != nil {
		return err
	}
	if _, err = f.Write(data[half:]); err != nil {
		return fmt.Errorf("vault: writing %s: %w", tmp, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("vault: syncing %s: %w", tmp, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("vault: closing %s: %w", tmp, err)
	}
	if err = configWriteHook("synced"); err != nil {
		return err
	}
	if err = os.Rename(tmp, final); err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	return syncDir(cipherdir)
}

// syncDir makes a rename or create in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("vault: syncing directory %s: %w", dir, err)
	}
	return nil
}
