package cryptomator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/vault/layout"
)

// CreateOptions configure a new vault.
type CreateOptions struct {
	// Combo is the content encryption; empty means SIV_GCM, what Cryptomator creates.
	Combo CipherCombo
	// ScryptLogN is the scrypt cost 2^ScryptLogN; 0 means DefaultScryptLogN.
	ScryptLogN int
	// ShorteningThreshold; 0 means DefaultShorteningThreshold.
	ShorteningThreshold int
	// Keep, when not nil, is the vault whose master key and masterkey file (KeyFile, written
	// as it is) the new vault gets: its password opens the new vault too, and a recovery key
	// noted for it stays good. ScryptLogN is then unused.
	Keep *Vault
}

// ErrNotEmpty is wrapped by Create for a folder that already holds something.
var ErrNotEmpty = errors.New("folder is not empty")

// Create makes a format 8 vault in the empty (or missing) folder dir, protected by password,
// and returns it open. As Cryptomator does, it writes the root's folder and its dirid.c9r,
// then masterkey.cryptomator, then vault.cryptomator: a folder with vault.cryptomator is a
// whole vault. On error it removes what it wrote.
func Create(ctx context.Context, dir string, password []byte, opts CreateOptions) (v *Vault, err error) {
	if opts.Combo == "" {
		opts.Combo = SIVGCM
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	if ents, err := layout.ReadDirPath(dir); err != nil {
		return nil, err
	} else if len(ents) > 0 {
		return nil, fmt.Errorf("%s: %w", dir, ErrNotEmpty)
	}
	var key *Masterkey
	if opts.Keep != nil {
		key = new(Masterkey)
		*key = *opts.Keep.key
	} else if key, err = NewMasterkey(); err != nil {
		return nil, err
	}
	cfg, err := NewConfig(opts.Combo)
	if err != nil {
		return nil, err
	}
	if opts.ShorteningThreshold != 0 {
		cfg.ShorteningThreshold = opts.ShorteningThreshold
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	nv := &Vault{dir: dir, root: root, config: cfg, key: key}
	// Remove only what this call made: a second Create racing in the same folder stops at
	// the data folder it cannot make, and must not remove the first one's vault.
	var madeData, wroteMasterkey bool
	defer func() {
		if err != nil {
			if madeData {
				root.RemoveAll(DataDir)
			}
			if wroteMasterkey {
				root.Remove(MasterkeyFileName)
			}
			nv.Close() // (v is the nil being returned)
		}
	}()
	if err = nv.init(); err != nil {
		return nil, err
	}
	var mk []byte
	if opts.Keep != nil {
		mk, err = opts.Keep.KeyFile()
	} else {
		mk, err = LockMasterkey(ctx, key, password, opts.ScryptLogN)
	}
	if err != nil {
		return nil, err
	}
	token, err := cfg.Sign(key)
	if err != nil {
		return nil, err
	}
	if err = root.Mkdir(DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("%s: %w", nv.path(DataDir), err)
	}
	madeData = true
	if err = nv.makeContentDir(nv.Root()); err != nil {
		return nil, err
	}
	if err = nv.writeNew(MasterkeyFileName, bytes.NewReader(mk), false); err != nil {
		return nil, err
	}
	wroteMasterkey = true
	if err = nv.writeNew(ConfigFileName, bytes.NewReader(token), false); err != nil {
		return nil, err
	}
	return nv, nil
}

// makeContentDir makes d's folder and its dirid.c9r (MakeDirFolder).
func (v *Vault) makeContentDir(d Dir) error {
	parent := path.Dir(d.Path)
	if err := v.root.MkdirAll(parent, 0o700); err != nil {
		return fmt.Errorf("%s: %w", v.path(parent), err)
	}
	f, err := v.openFolder(parent)
	if err != nil {
		return err
	}
	defer f.Close()
	backup, err := v.content.Seal([]byte(d.ID))
	if err == nil {
		err = MakeDirFolder(int(f.Fd()), path.Base(d.Path), backup, 0o700)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", v.path(d.Path), err)
	}
	return nil
}

// writeNew creates rel, which must not exist, with content r (encrypted when encrypt),
// synced; on error it removes it.
func (v *Vault) writeNew(rel string, r io.Reader, encrypt bool) error {
	f, err := v.openFolder(path.Dir(rel))
	if err != nil {
		return err
	}
	defer f.Close()
	if err := v.writeAt(int(f.Fd()), path.Base(rel), r, encrypt); err != nil {
		return fmt.Errorf("%s: %w", v.path(rel), err)
	}
	return nil
}

// writeAt creates the file name in the folder dirfd, which must not exist, with content r
// (encrypted when encrypt), synced; on error it removes it.
func (v *Vault) writeAt(dirfd int, name string, r io.Reader, encrypt bool) error {
	fd, err := layout.OpenFile(dirfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, 0o600, nil)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), name)
	if encrypt {
		_, err = v.content.Encrypt(f, r)
	} else {
		_, err = io.Copy(f, r)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		unix.Unlinkat(dirfd, name, 0)
	}
	return err
}

// place makes the entry name of kind k in d, whose payload write writes (given the folder
// and the file's name, which must be new), and renames it to its stored name, which must be
// free (EEXIST): a reader sees the whole entry or none. A file under a .c9r name is written
// under a temporary name; every other entry is built as a folder (MakeEntry).
func (v *Vault) place(d Dir, name string, k Kind, write func(dirfd int, name string) error) (Entry, error) {
	if err := checkName(name); err != nil {
		return Entry{}, err
	}
	stored, long := v.storedName(d, name)
	f, err := v.openFolder(d.Path)
	if err != nil {
		return Entry{}, err
	}
	defer f.Close()
	dirfd := int(f.Fd())
	if k == KindFile && long == "" {
		tmp := TempName()
		if err = write(dirfd, tmp); err == nil {
			if err = layout.RenameNoReplace(dirfd, tmp, dirfd, stored); err != nil {
				unix.Unlinkat(dirfd, tmp, 0)
			}
		}
	} else {
		err = MakeEntry(dirfd, stored, long, k, write)
	}
	if err == nil {
		err = unix.Fsync(dirfd)
	}
	if err != nil {
		return Entry{}, fmt.Errorf("%s: %w", v.path(d.Path+"/"+stored), err)
	}
	return Entry{Name: name, Kind: k, Parent: d, Stored: stored}, nil
}

// WriteFile creates the file name in d with the content read from r. An existing name is
// an error (EEXIST).
func (v *Vault) WriteFile(d Dir, name string, r io.Reader) (Entry, error) {
	return v.place(d, name, KindFile, func(dirfd int, name string) error { return v.writeAt(dirfd, name, r, true) })
}

// Mkdir creates the directory name in d with a fresh random ID and returns it. Its folder
// (with dirid.c9r) is made first, then its entry: a crash in between leaves an unreferenced
// folder, never an entry whose directory is missing.
func (v *Vault) Mkdir(d Dir, name string) (Dir, error) {
	id, err := NewDirID()
	if err != nil {
		return Dir{}, err
	}
	sub := Dir{ID: id, Path: v.names.DirPath(id)}
	if err := v.makeContentDir(sub); err != nil {
		return Dir{}, err
	}
	_, err = v.place(d, name, KindDir, func(dirfd int, name string) error {
		return v.writeAt(dirfd, name, bytes.NewReader([]byte(id)), false)
	})
	if err != nil {
		v.root.RemoveAll(sub.Path)
		return Dir{}, err
	}
	return sub, nil
}

// Symlink creates the symlink name in d pointing to target.
func (v *Vault) Symlink(d Dir, name, target string) (Entry, error) {
	if target == "" || len(target) > MaxSymlinkLen {
		return Entry{}, fmt.Errorf("a link target of %d bytes (1 to %d)", len(target), MaxSymlinkLen)
	}
	return v.place(d, name, KindSymlink, func(dirfd int, name string) error {
		return v.writeAt(dirfd, name, bytes.NewReader([]byte(target)), true)
	})
}
