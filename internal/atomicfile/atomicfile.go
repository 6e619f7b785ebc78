// Package atomicfile replaces small files so that a crash leaves the old content or the new,
// never neither: write a temporary file beside the target, fsync it, rename it over the
// target, fsync the directory. gocryptfs.conf (vault), vaults.json (registry), the daemon's
// event log and ledger and the front ends' own files are saved this way. The file system is an
// interface so tests can fail one step as a full disk or a crash would (Failing).
//
// It imports only the standard library.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// FS is the part of the operating system that Replace uses. Real files go through OS; tests pass one that fails an operation, to show that a full disk or a failed
// rename leaves the old file.
type FS interface {
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	Rename(oldpath, newpath string) error
	Remove(name string) error
	// SyncDir makes a rename or create in dir durable.
	SyncDir(dir string) error
}

// File is an open file as Replace writes it.
type File interface {
	io.Writer
	Sync() error
	Close() error
}

// OS is the real file system.
type OS struct{}

func (OS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err // not a nil *os.File in a non-nil interface
	}
	return f, nil
}
func (OS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }
func (OS) Remove(name string) error             { return os.Remove(name) }

func (OS) SyncDir(dir string) error {
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

// Replace replaces path with data atomically: data goes to tmp (beside path, created with
// mode perm), is synced and renamed over path; the caller then syncs the directory
// (fsys.SyncDir) to make the rename durable. A crash at any point leaves the old or the new
// content, never neither; on error tmp is removed and path is unchanged. A tmp that an
// earlier crash left was never the file, so it is removed first: the caller makes sure no one
// else writes tmp at the same time (a lock, or a file only one process changes at a time).
func Replace(fsys FS, path, tmp string, data []byte, perm os.FileMode) (err error) {
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

// SyncDir makes a rename or create in dir durable (OS's SyncDir).
func SyncDir(dir string) error { return OS{}.SyncDir(dir) }
