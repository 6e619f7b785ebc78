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
	// Keep, when not nil, is the master key of the new vault and KeepFile its masterkey file,
	// written as it is (the file of another vault of this key: its password opens the new
	// vault too, and a recovery key noted for it stays good). ScryptLogN is then unused.
	Keep     *Masterkey
	KeepFile []byte
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
		*key = *opts.Keep
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
	mk := opts.KeepFile
	if opts.Keep == nil {
		if mk, err = LockMasterkey(ctx, key, password, opts.ScryptLogN); err != nil {
			return nil, err
		}
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

// makeContentDir makes d's folder and its dirid.c9r.
func (v *Vault) makeContentDir(d Dir) error {
	if err := v.root.MkdirAll(path.Dir(d.Path), 0o700); err != nil {
		return fmt.Errorf("%s: %w", v.path(path.Dir(d.Path)), err)
	}
	if err := v.root.Mkdir(d.Path, 0o700); err != nil {
		return fmt.Errorf("%s: %w", v.path(d.Path), err)
	}
	if err := v.writeNew(d.Path+"/"+dirIDBackup, bytes.NewReader([]byte(d.ID)), true); err != nil {
		v.root.RemoveAll(d.Path)
		return err
	}
	return nil
}

// writeNew creates rel, which must not exist, with content r (encrypted when encrypt),
// synced; on error it removes it.
func (v *Vault) writeNew(rel string, r io.Reader, encrypt bool) error {
	f, err := v.root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("%s: %w", v.path(rel), err)
	}
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
		v.root.Remove(rel)
		return fmt.Errorf("%s: %w", v.path(rel), err)
	}
	return nil
}

// place builds a new entry of d under a temporary name with build, then renames it to its
// stored name, which must be free: a reader sees the whole entry or none. For a shortened
// name the entry is a folder and its name.c9s is written before build runs. folder: the entry
// is a folder even when not shortened (a directory, a symlink).
func (v *Vault) place(d Dir, name string, folder bool, build func(tmp string) error) (Entry, error) {
	if err := checkName(name); err != nil {
		return Entry{}, err
	}
	stored, long := v.storedName(d, name)
	tmp := d.Path + "/" + TempName()
	folder = folder || long != ""
	err := func() error {
		if !folder {
			return build(tmp)
		}
		if err := v.root.Mkdir(tmp, 0o700); err != nil {
			return fmt.Errorf("%s: %w", v.path(tmp), err)
		}
		if long != "" {
			if err := v.writeNew(tmp+"/"+nameFile, bytes.NewReader([]byte(long)), false); err != nil {
				return err
			}
		}
		return build(tmp)
	}()
	if err == nil {
		err = v.renameNoReplace(d.Path, path.Base(tmp), stored)
	}
	if err != nil {
		v.root.RemoveAll(tmp)
		return Entry{}, err
	}
	return Entry{Name: name, Parent: d, Stored: stored}, nil
}

// renameNoReplace renames old to new in the folder dirRel, failing (EEXIST) if new exists.
func (v *Vault) renameNoReplace(dirRel, old, new string) error {
	df, err := v.root.OpenFile(dirRel, os.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", v.path(dirRel), err)
	}
	defer df.Close()
	fd := int(df.Fd())
	for {
		err = unix.Renameat2(fd, old, fd, new, unix.RENAME_NOREPLACE)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", v.path(dirRel+"/"+new), err)
	}
	return unix.Fsync(fd)
}

// WriteFile creates the file name in d with the content read from r. An existing name is
// an error (EEXIST).
func (v *Vault) WriteFile(d Dir, name string, r io.Reader) (Entry, error) {
	e, err := v.place(d, name, false, func(tmp string) error {
		if st, err := v.root.Lstat(tmp); err == nil && st.IsDir() {
			return v.writeNew(tmp+"/"+contentsFile, r, true)
		}
		return v.writeNew(tmp, r, true)
	})
	e.Kind = KindFile
	return e, err
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
	_, err = v.place(d, name, true, func(tmp string) error {
		return v.writeNew(tmp+"/"+dirFile, bytes.NewReader([]byte(id)), false)
	})
	if err != nil {
		v.root.RemoveAll(sub.Path)
		return Dir{}, err
	}
	return sub, nil
}

// Symlink creates the symlink name in d pointing to target.
func (v *Vault) Symlink(d Dir, name, target string) (Entry, error) {
	if target == "" || len(target) > maxSymlinkLen {
		return Entry{}, fmt.Errorf("a link target of %d bytes (1 to %d)", len(target), maxSymlinkLen)
	}
	e, err := v.place(d, name, true, func(tmp string) error {
		return v.writeNew(tmp+"/"+symlinkFile, bytes.NewReader([]byte(target)), true)
	})
	e.Kind = KindSymlink
	return e, err
}
