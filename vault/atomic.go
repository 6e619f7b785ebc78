package vault

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/vaultui/vaultui/crypto"
)

// fileSystem is the part of the operating system that replaceFile uses. The vault's files go
// through osFiles; tests pass one that fails an operation, to show that a full disk or a failed
// rename leaves the old file.
type fileSystem interface {
	OpenFile(name string, flag int, perm os.FileMode) (writeFile, error)
	Rename(oldpath, newpath string) error
	Remove(name string) error
	// SyncDir makes a rename or create in dir durable.
	SyncDir(dir string) error
}

// writeFile is an open file as replaceFile writes it.
type writeFile interface {
	io.Writer
	Sync() error
	Close() error
}

// osFiles is the real file system.
type osFiles struct{}

func (osFiles) OpenFile(name string, flag int, perm os.FileMode) (writeFile, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err // not a nil *os.File in a non-nil interface
	}
	return f, nil
}
func (osFiles) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }
func (osFiles) Remove(name string) error             { return os.Remove(name) }

func (osFiles) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing directory %s: %w", dir, err)
	}
	return nil
}

// replaceFile replaces path with data atomically: data goes to tmp (beside path, created with
// mode perm), is synced and renamed over path; the caller then syncs the directory
// (fsys.SyncDir) to make the rename durable. A crash at any point leaves the old or the new
// content, never neither; on error tmp is removed and path is unchanged. A tmp that an
// earlier crash left was never the file, so it is removed first: the caller makes sure no one
// else writes tmp at the same time (a lock, or a file only one process changes at a time).
func replaceFile(fsys fileSystem, path, tmp string, data []byte, perm os.FileMode) (err error) {
	if err := fsys.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			fsys.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", tmp, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", tmp, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", tmp, err)
	}
	return fsys.Rename(tmp, path)
}

// writeConfig replaces cipherdir/gocryptfs.conf atomically (see replaceFile) through
// gocryptfs.conf.tmp, mode 0400, as gocryptfs does.
func writeConfig(fsys fileSystem, cipherdir string, c *Config) error {
	return writeConfigNamed(fsys, cipherdir, crypto.ConfName, c)
}

// writeConfigNamed is writeConfig for the config file name in dir.
func writeConfigNamed(fsys fileSystem, cipherdir, name string, c *Config) error {
	data, err := c.Marshal()
	if err != nil {
		return err
	}
	final := filepath.Join(cipherdir, name)
	if err := replaceFile(fsys, final, final+".tmp", data, 0o400); err != nil {
		return err
	}
	return fsys.SyncDir(cipherdir)
}
