package cryptomator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
	"golang.org/x/text/unicode/norm"

	"github.com/vaultui/vaultui/vault/format"
	"github.com/vaultui/vaultui/vault/layout"
)

// maxConfigFile bounds what is read of vault.cryptomator and the masterkey file.
const maxConfigFile = 64 << 10

// Vault is an unlocked Cryptomator vault: its folder, configuration and keys.
type Vault struct {
	dir     string
	root    *os.Root
	config  *Config
	key     *Masterkey
	names   *Names
	content *Content
}

// Dir is a directory of the plaintext tree: its ID, and where its entries are stored
// (d/XX/YYYY..., relative to the vault's folder). It does not change when the directory is
// renamed or moved: only its small dir.c9r entry moves.
type Dir struct {
	ID   string
	Path string
}

// Kind is what an entry is.
type Kind int

const (
	KindFile Kind = iota
	KindDir
	KindSymlink
)

func (k Kind) String() string { return [...]string{"file", "directory", "symlink"}[k] }

// Entry is one entry of a directory.
type Entry struct {
	Name   string // plaintext
	Kind   Kind
	Parent Dir
	// Stored is the entry's name in its parent's folder: "<encrypted>.c9r", or for a name
	// longer than the vault's shortening threshold "<hash>.c9s" (a folder that also holds
	// name.c9s).
	Stored string
	// Conflict is set for a sync tool's copy of an entry (a marker in Stored, before .c9r or
	// .c9s): Name is then the name of the entry it is a copy of.
	Conflict *layout.Conflict
}

func (e Entry) shortened() bool { return IsShortened(e.Stored) }

// node is the entry's path in the vault's folder.
func (e Entry) node() string { return e.Parent.Path + "/" + e.Stored }

// contentPath is where a file's ciphertext is.
func (e Entry) contentPath() string {
	if e.shortened() {
		return e.node() + "/" + ContentsFile
	}
	return e.node()
}

// Open unlocks the vault in dir with password. Errors name the file they are about and wrap
// ErrWrongPassword, ErrUnsupported, layout.ErrCorrupt or the scrypt bounds' errors
// (crypto.ErrWeakKDF, crypto.ErrKDFMemory).
func Open(ctx context.Context, dir string, password []byte) (*Vault, error) {
	return open(dir, func(v *Vault, mkName string) error {
		data, err := v.readSmall(mkName, maxConfigFile)
		if err != nil {
			return err
		}
		v.key, err = UnlockMasterkey(ctx, data, password)
		if err != nil {
			return fmt.Errorf("%s: %w", v.path(mkName), err)
		}
		return nil
	})
}

// OpenWithKey opens the vault in dir with its raw master key instead of the password.
func OpenWithKey(dir string, k *Masterkey) (*Vault, error) {
	return open(dir, func(v *Vault, _ string) error {
		v.key = new(Masterkey)
		*v.key = *k
		return nil
	})
}

func open(dir string, unlock func(v *Vault, mkName string) error) (*Vault, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	v := &Vault{dir: dir, root: root}
	if err := v.load(unlock); err != nil {
		v.Close()
		return nil, err
	}
	return v, nil
}

func (v *Vault) load(unlock func(v *Vault, mkName string) error) error {
	token, err := v.readSmall(ConfigFileName, maxConfigFile)
	if err != nil {
		return err
	}
	mkName, err := MasterkeyFileOf(token)
	if err != nil {
		return fmt.Errorf("%s: %w", v.path(ConfigFileName), err)
	}
	if err := unlock(v, mkName); err != nil {
		return err
	}
	if v.config, err = VerifyConfig(token, v.key); err != nil {
		return fmt.Errorf("%s: %w", v.path(ConfigFileName), err)
	}
	return v.init()
}

func (v *Vault) init() error {
	var err error
	v.names = NewNames(v.key)
	v.content, err = NewContent(v.config.CipherCombo, v.key)
	if err != nil {
		return fmt.Errorf("%s: %w", v.path(ConfigFileName), err)
	}
	return nil
}

// RawMasterkey returns a copy of the raw 64-byte master key (encryption key, then MAC
// key), what MasterkeyFromRaw takes back: shown once when a vault is created. Wipe it after.
func (v *Vault) RawMasterkey() []byte { return v.key.Raw() }

// Close wipes the keys and closes the vault's folder.
func (v *Vault) Close() error {
	if v.key != nil {
		v.key.Wipe()
	}
	if v.names != nil {
		v.names.Wipe()
	}
	return v.root.Close()
}

// Content returns the vault's content encryption.
func (v *Vault) Content() *Content { return v.content }

// path is a path inside the vault for error messages.
func (v *Vault) path(rel string) string { return filepath.Join(v.dir, filepath.FromSlash(rel)) }

// readSmall reads the regular file rel (at most max bytes) without following a symlink.
func (v *Vault) readSmall(rel string, max int64) ([]byte, error) {
	f, err := v.openRegular(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v.path(rel), err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: %w: longer than %d bytes", v.path(rel), layout.ErrCorrupt, max)
	}
	return b, nil
}

// openRegular opens rel for reading, relative to its folder (layout.OpenFile): a regular
// file, not through a symlink, not a FIFO that would block.
func (v *Vault) openRegular(rel string) (*os.File, error) {
	d, err := v.openFolder(path.Dir(rel))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	fd, err := layout.OpenFile(int(d.Fd()), path.Base(rel), unix.O_RDONLY, 0, nil)
	var nr *layout.NotRegularError
	switch {
	case err == nil:
		return os.NewFile(uintptr(fd), v.path(rel)), nil
	case errors.As(err, &nr):
		return nil, &layout.NotRegularError{Name: v.path(rel), Mode: nr.Mode}
	case err == unix.ELOOP:
		return nil, &layout.NotRegularError{Name: v.path(rel), Mode: unix.S_IFLNK}
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: %w: %w", v.path(rel), layout.ErrCorrupt, err)
	}
	return nil, fmt.Errorf("%s: %w", v.path(rel), err)
}

// Root returns the root directory.
func (v *Vault) Root() Dir { return Dir{ID: rootDirID, Path: v.names.DirPath(rootDirID)} }

// tempPrefix begins the names of the files and folders the writer builds before renaming
// them into place. Cryptomator ignores names without .c9r or .c9s; so does ReadDir.
const tempPrefix = ".vaultui-tmp-"

// ReadDir lists d. It returns every entry it could read, sorted by name (sync tools' conflict
// copies among them, Entry.Conflict set, under the name of the entry they copy), and an
// error joining one error per entry it could not (each naming the entry's path in the
// vault's folder): a name that does not decrypt, a .c9s folder whose name.c9s does not hash
// to it, a folder that is neither a directory nor a symlink, or one holding no payload
// (ErrHalfMade).
func (v *Vault) ReadDir(d Dir) ([]Entry, error) {
	var errs []error
	ents, err := v.readDir(d, func(_, _ string, err error) { errs = append(errs, err) })
	if err != nil {
		return nil, err
	}
	return ents, errors.Join(errs...)
}

// readDir is ReadDir telling bad of each stored name it could not read, with the kind of
// problem it is (a format.Kind*); the error is a folder that cannot be listed.
func (v *Vault) readDir(d Dir, bad func(stored, kind string, err error)) ([]Entry, error) {
	f, err := v.openFolder(d.Path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	stored, err := f.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v.path(d.Path), err)
	}
	dirfd := int(f.Fd())
	var ents []Entry
	for _, s := range stored {
		if Skipped(s) {
			continue
		}
		e, kind, err := v.entry(dirfd, d, s)
		if err != nil {
			bad(s, kind, err)
			continue
		}
		ents = append(ents, e)
	}
	slices.SortFunc(ents, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return ents, nil
}

// openFolder opens the folder rel as a directory, without following a symlink: the
// descriptor the rules of entries.go work on.
func (v *Vault) openFolder(rel string) (*os.File, error) {
	f, err := v.root.OpenFile(rel, os.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w: directory missing", v.path(rel), layout.ErrCorrupt)
		}
		return nil, fmt.Errorf("%s: %w", v.path(rel), err)
	}
	return f, nil
}

// listEntries lists the folder rel, opened as a directory without following a symlink; nil
// if it cannot be.
func (v *Vault) listEntries(rel string) []fs.DirEntry {
	f, err := v.openFolder(rel)
	if err != nil {
		return nil
	}
	defer f.Close()
	ents, _ := f.ReadDir(-1)
	return ents
}

// entry reads the stored entry s of d, whose folder is open at dirfd, or a sync tool's
// conflict copy of one (ParseCopy: Entry.Conflict set); an error comes with the kind of
// problem it is.
func (v *Vault) entry(dirfd int, d Dir, s string) (Entry, string, error) {
	e := Entry{Parent: d, Stored: s}
	kind, err := v.entryName(dirfd, &e)
	if err != nil {
		c, name, ok := ParseCopy(dirfd, v.names, d.ID, s, v.config.ShorteningThreshold)
		if !ok {
			return e, kind, err
		}
		e.Name, e.Conflict = name, &c
	}
	if e.Kind, err = EntryKind(dirfd, s); err != nil {
		err = fmt.Errorf("%s: %w", v.path(e.node()), err)
		if errors.Is(err, ErrHalfMade) {
			return e, format.KindTemp, err
		}
		return e, format.KindType, err
	}
	return e, "", nil
}

// entryName decrypts e's stored name into e.Name; an error comes with the kind of problem it
// is.
func (v *Vault) entryName(dirfd int, e *Entry) (string, error) {
	enc, err := EncryptedName(dirfd, e.Stored, e.Stored, v.config.ShorteningThreshold)
	switch {
	case errors.Is(err, ErrNotEntry):
		return format.KindForeign, fmt.Errorf("%s: %w", v.path(e.node()), err)
	case err != nil:
		return format.KindLongName, fmt.Errorf("%s: %w", v.path(e.node()+"/"+NameFile), err)
	}
	if e.Name, err = v.names.Decrypt(e.Parent.ID, enc); err != nil {
		return format.KindName, fmt.Errorf("%s: %w", v.path(e.node()), err)
	}
	return "", nil
}

// storedName returns the stored name of name in d, and the full encrypted name when it is
// shortened ("" otherwise).
func (v *Vault) storedName(d Dir, name string) (stored, long string) {
	return StoredName(v.names.Encrypt(d.ID, name), v.config.ShorteningThreshold)
}

// Lookup finds name in d without listing d. A missing name is an error wrapping
// fs.ErrNotExist.
//
// Names are stored in NFC, as Cryptomator stores them. A writer that does not normalize
// (rclone's backend) stores a name that is not in NFC as it is, and ReadDir lists it so: such
// a name is looked for first as it is, so that each listed name finds its own entry even next
// to one of its NFC spelling, then in NFC (what Create and WriteFile made of it).
func (v *Vault) Lookup(d Dir, name string) (Entry, error) {
	if err := checkName(name); err != nil {
		return Entry{}, err
	}
	f, err := v.openFolder(d.Path)
	if err != nil {
		return Entry{}, err
	}
	defer f.Close()
	dirfd := int(f.Fd())
	var st unix.Stat_t
	stored, _ := v.storedName(d, name)
	if !norm.NFC.IsNormalString(name) {
		asIs, _ := StoredName(v.names.encryptAsIs(d.ID, name), v.config.ShorteningThreshold)
		if unix.Fstatat(dirfd, asIs, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
			stored = asIs
		}
	}
	if err := unix.Fstatat(dirfd, stored, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return Entry{}, fmt.Errorf("%s: %w", v.path(d.Path+"/"+stored), err)
	}
	e, _, err := v.entry(dirfd, d, stored)
	return e, err
}

// OpenDir returns the directory e names: the ID in its dir.c9r, and the folder that ID hashes
// to, which must exist.
func (v *Vault) OpenDir(e Entry) (Dir, error) {
	if e.Kind != KindDir {
		return Dir{}, fmt.Errorf("%s: not a directory", v.path(e.node()))
	}
	rel := e.node() + "/" + DirFile
	b, err := v.readSmall(rel, MaxDirIDLen)
	if err != nil {
		return Dir{}, err
	}
	id, err := ParseDirID(b)
	if err != nil {
		return Dir{}, fmt.Errorf("%s: %w", v.path(rel), err)
	}
	d := Dir{ID: id, Path: v.names.DirPath(id)}
	if st, err := v.root.Lstat(d.Path); err != nil || !st.IsDir() {
		return Dir{}, fmt.Errorf("%s: %w: the directory it names, %s, is missing", v.path(rel), layout.ErrCorrupt, d.Path)
	}
	return d, nil
}

// CheckDirIDBackup checks d's dirid.c9r, the backup of its ID that lets a damaged vault be
// recovered: it must be there and hold d's ID. The root's may be missing (its ID is fixed,
// and rclone does not write it).
func (v *Vault) CheckDirIDBackup(d Dir) error {
	rel := d.Path + "/" + dirIDBackup
	id, err := v.decryptSmall(rel, MaxDirIDLen)
	if err != nil {
		if d.ID == rootDirID && errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if string(id) != d.ID {
		return fmt.Errorf("%s: %w: holds another directory's ID", v.path(rel), layout.ErrCorrupt)
	}
	return nil
}

// decryptSmall returns the content of the encrypted file rel, which must hold at most max
// bytes (Content.DecryptSmall).
func (v *Vault) decryptSmall(rel string, max int64) ([]byte, error) {
	f, err := v.openFolder(path.Dir(rel))
	if err == nil {
		defer f.Close()
		var b []byte
		if b, err = v.content.DecryptSmall(int(f.Fd()), path.Base(rel), max); err == nil {
			return b, nil
		}
		if errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("%w: %w", layout.ErrCorrupt, err)
		}
	}
	return nil, fmt.Errorf("%s: %w", v.path(rel), err)
}

// ReadFile writes the content of file e to w. Only authenticated chunks reach w; an error
// names the file and wraps layout.ErrCorrupt and a *crypto.BlockError naming the chunk.
func (v *Vault) ReadFile(e Entry, w io.Writer) (int64, error) {
	if e.Kind != KindFile {
		return 0, fmt.Errorf("%s: not a file", v.path(e.node()))
	}
	rel := e.contentPath()
	f, err := v.openRegular(rel)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", v.path(rel), err)
	}
	if _, ok := v.content.geo.PlainSize(st.Size()); !ok {
		return 0, fmt.Errorf("%s: %w: no file is %d bytes when encrypted", v.path(rel), layout.ErrCorrupt, st.Size())
	}
	n, err := v.content.Decrypt(w, f)
	if err != nil {
		return n, fmt.Errorf("%s: %w: %w", v.path(rel), layout.ErrCorrupt, err)
	}
	return n, nil
}

// ReadLink returns symlink e's target.
func (v *Vault) ReadLink(e Entry) (string, error) {
	if e.Kind != KindSymlink {
		return "", fmt.Errorf("%s: not a symlink", v.path(e.node()))
	}
	rel := e.node() + "/" + SymlinkFile
	b, err := v.decryptSmall(rel, MaxSymlinkLen)
	if err != nil {
		return "", err
	}
	if len(b) == 0 {
		return "", fmt.Errorf("%s: %w: empty link target", v.path(rel), layout.ErrCorrupt)
	}
	return string(b), nil
}

// Resolve returns the entry at the slash-separated plaintext path p (not the root).
func (v *Vault) Resolve(p string) (Entry, error) {
	d := v.Root()
	parts := strings.Split(strings.Trim(p, "/"), "/")
	for i, name := range parts {
		e, err := v.Lookup(d, name)
		if err != nil || i == len(parts)-1 {
			return e, err
		}
		if d, err = v.OpenDir(e); err != nil {
			return Entry{}, err
		}
	}
	panic("unreachable")
}

// checkName refuses names that cannot be entries.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return fmt.Errorf("%q is not a file name", name)
	}
	return nil
}
