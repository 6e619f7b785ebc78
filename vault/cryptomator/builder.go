package cryptomator

import (
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/vaultui/vaultui/vault/format"
)

// Builder returns the writer that fills the vault with a plaintext tree, entry by entry
// (format.Builder: what a conversion from another vault writes into). It writes through the
// same code as WriteFile, Mkdir and Symlink: every entry is built under a temporary name and
// renamed into place, names are stored in NFC and shortened past the threshold (.c9s).
//
// A Cryptomator vault holds files, directories and symlinks, and of their attributes only
// the modification time (the cipher file's own): Mknod, Link and SetXattr refuse, and
// SetAttrs keeps the times alone.
func (v *Vault) Builder() format.Builder { return builder{v} }

type builder struct{ v *Vault }

// made is what builder hands out: a directory (dir set) and, but for the root, the entry
// that names it.
type made struct {
	entry Entry
	dir   *Dir
}

func (b builder) Root() format.Made {
	d := b.v.Root()
	return made{dir: &d}
}

func (b builder) parent(m format.Made) (Dir, error) {
	if p, ok := m.(made); ok && p.dir != nil {
		return *p.dir, nil
	}
	return Dir{}, errors.New("cryptomator: not a directory of this vault")
}

func (b builder) Mkdir(dir format.Made, name string) (format.Made, error) {
	d, err := b.parent(dir)
	if err != nil {
		return nil, err
	}
	sub, err := b.v.Mkdir(d, name)
	if err != nil {
		return nil, err
	}
	e, err := b.v.Lookup(d, name)
	if err != nil {
		return nil, err
	}
	return made{entry: e, dir: &sub}, nil
}

func (b builder) WriteFile(dir format.Made, name string, r io.Reader) (format.Made, error) {
	d, err := b.parent(dir)
	if err != nil {
		return nil, err
	}
	e, err := b.v.WriteFile(d, name, r)
	return made{entry: e}, err
}

func (b builder) Symlink(dir format.Made, name, target string) (format.Made, error) {
	d, err := b.parent(dir)
	if err != nil {
		return nil, err
	}
	e, err := b.v.Symlink(d, name, target)
	return made{entry: e}, err
}

// errCannotHold is what a Cryptomator vault has no place for.
func errCannotHold(what string) error {
	return fmt.Errorf("%w: a Cryptomator vault cannot hold %s", ErrUnsupported, what)
}

func (builder) Mknod(format.Made, string, fs.FileMode, uint64) (format.Made, error) {
	return nil, errCannotHold("FIFOs, sockets or device nodes")
}

func (builder) Link(format.Made, string, format.Made) (format.Made, error) {
	return nil, errCannotHold("hard links")
}

func (builder) SetXattr(format.Made, string, []byte) error {
	return errCannotHold("extended attributes")
}

// SetAttrs sets the times of the file the reader stats for the entry: a file's content
// file, a directory's or symlink's folder.
func (b builder) SetAttrs(m format.Made, info fs.FileInfo) error {
	p, ok := m.(made)
	if !ok || p.entry.Stored == "" {
		return nil // the root: its folder is the format's
	}
	rel := p.entry.node()
	if p.entry.Kind == KindFile {
		rel = p.entry.contentPath()
	}
	mtime := info.ModTime()
	if err := b.v.root.Chtimes(rel, mtime, mtime); err != nil {
		return fmt.Errorf("%s: %w", b.v.path(rel), err)
	}
	return nil
}

// KeyFile returns the content of the masterkey file the vault's configuration names: what a
// vault made with the same key (CreateOptions.Keep) keeps, so that the same password opens it.
func (v *Vault) KeyFile() ([]byte, error) {
	token, err := v.readSmall(ConfigFileName, maxConfigFile)
	if err != nil {
		return nil, err
	}
	name, err := MasterkeyFileOf(token)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v.path(ConfigFileName), err)
	}
	return v.readSmall(name, maxConfigFile)
}
