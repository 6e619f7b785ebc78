package gocryptfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/format"
	"github.com/vaultui/vaultui/vault/layout"
)

// Builder returns the writer that fills the vault (made empty by Create) with a plaintext
// tree (format.Builder), storing every entry as gocryptfs does: encrypted
// names under the directory's IV (long ones as gocryptfs.longname.* with their .name
// file), a gocryptfs.diriv in each new directory, contents with holes for zero blocks,
// encrypted symlink targets and user.* attributes, and FIFOs, sockets and device nodes
// with only their names encrypted.
//
// It writes into a folder no one else uses yet (a conversion's work directory), by path.
func (v *Vault) Builder() format.Builder { return gocryptfsBuilder{v} }

type gocryptfsBuilder struct{ v *Vault }

// gocryptfsMade is an entry the builder made: its absolute cipher path.
type gocryptfsMade string

func (b gocryptfsBuilder) Root() format.Made { return gocryptfsMade(b.v.Dir) }

// place returns the cipher path of name in the directory dir, writing its .name file when
// the name is long. A second name gets EEXIST from the call that makes it.
func (b gocryptfsBuilder) place(dir format.Made, name string) (string, error) {
	d, ok := dir.(gocryptfsMade)
	if !ok {
		return "", errors.New("vault: not a directory of this vault")
	}
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return "", fmt.Errorf("%q is not a file name", name)
	}
	if b.v.Names == nil {
		if string(d) == b.v.Dir && name == crypto.ConfName {
			return "", fmt.Errorf("the name %s is reserved at the root of a gocryptfs vault", crypto.ConfName)
		}
		return filepath.Join(string(d), name), nil
	}
	iv, err := b.v.DirIV(string(d))
	if err != nil {
		return "", err
	}
	stored, encoded, long, err := b.v.Names.StoredName(name, iv)
	if err != nil {
		return "", fmt.Errorf("%q: %w", name, err)
	}
	if long {
		if err := layout.WriteNew(unix.AT_FDCWD, filepath.Join(string(d), stored+crypto.LongNameSuffix), []byte(encoded), 0o400, false); err != nil {
			return "", err
		}
	}
	return filepath.Join(string(d), stored), nil
}

func (b gocryptfsBuilder) Mkdir(dir format.Made, name string) (format.Made, error) {
	cp, err := b.place(dir, name)
	if err != nil {
		return nil, err
	}
	if err := os.Mkdir(cp, 0o700); err != nil {
		return nil, err
	}
	if b.v.Names != nil && !b.v.Config.DeterministicNames() {
		if err := writeDirIV(cp); err != nil {
			return nil, err
		}
	}
	return gocryptfsMade(cp), nil
}

func (b gocryptfsBuilder) WriteFile(dir format.Made, name string, r io.Reader) (format.Made, error) {
	cp, err := b.place(dir, name)
	if err != nil {
		return nil, err
	}
	out, err := os.OpenFile(cp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	err = b.v.encryptInto(out, r)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(cp)
		return nil, fmt.Errorf("%s: %w", cp, err)
	}
	return gocryptfsMade(cp), nil
}

func (b gocryptfsBuilder) Symlink(dir format.Made, name, target string) (format.Made, error) {
	cp, err := b.place(dir, name)
	if err != nil {
		return nil, err
	}
	if b.v.Names != nil {
		target = b.v.Content.EncryptSymlink(target)
	}
	if err := os.Symlink(target, cp); err != nil {
		return nil, err
	}
	return gocryptfsMade(cp), nil
}

func (b gocryptfsBuilder) Mknod(dir format.Made, name string, mode fs.FileMode, rdev uint64) (format.Made, error) {
	cp, err := b.place(dir, name)
	if err != nil {
		return nil, err
	}
	var t uint32
	switch {
	case mode&fs.ModeNamedPipe != 0:
		t = unix.S_IFIFO
	case mode&fs.ModeSocket != 0:
		t = unix.S_IFSOCK
	case mode&fs.ModeCharDevice != 0:
		t = unix.S_IFCHR
	case mode&fs.ModeDevice != 0:
		t = unix.S_IFBLK
	default:
		return nil, fmt.Errorf("%q: not a special file (%v)", name, mode)
	}
	if err := unix.Mknod(cp, t|uint32(mode.Perm()), int(rdev)); err != nil {
		return nil, &os.PathError{Op: "mknod", Path: cp, Err: err}
	}
	return gocryptfsMade(cp), nil
}

func (b gocryptfsBuilder) Link(dir format.Made, name string, m format.Made) (format.Made, error) {
	to, ok := m.(gocryptfsMade)
	if !ok {
		return nil, errors.New("vault: not a file of this vault")
	}
	cp, err := b.place(dir, name)
	if err != nil {
		return nil, err
	}
	if err := os.Link(string(to), cp); err != nil {
		return nil, err
	}
	return gocryptfsMade(cp), nil
}

// SetXattr stores a user.* attribute as gocryptfs does (user.gocryptfs.<encrypted name>,
// sealed value) and a POSIX ACL as it is.
func (b gocryptfsBuilder) SetXattr(m format.Made, name string, value []byte) error {
	cp := string(m.(gocryptfsMade))
	stored := name
	if name != "system.posix_acl_access" && name != "system.posix_acl_default" {
		if !strings.HasPrefix(name, "user.") {
			return fmt.Errorf("%w: attribute %q: a gocryptfs vault holds user.* attributes and ACLs", format.ErrUnsupported, name)
		}
		enc, err := b.v.XattrNames.EncryptXattrName(name)
		if err != nil {
			return err
		}
		stored, value = crypto.XattrPrefix+enc, b.v.Content.EncryptXattrValue(value)
	}
	if err := unix.Lsetxattr(cp, stored, value, 0); err != nil {
		return &os.PathError{Op: "setxattr " + name, Path: cp, Err: err}
	}
	return nil
}

// SetAttrs gives the entry its permission bits (not a symlink's), owner (as root) and times.
func (b gocryptfsBuilder) SetAttrs(m format.Made, info fs.FileInfo) error {
	cp := string(m.(gocryptfsMade))
	isLink := info.Mode().Type() == fs.ModeSymlink
	st, _ := info.Sys().(*syscall.Stat_t)
	if st != nil && os.Geteuid() == 0 {
		if err := os.Lchown(cp, int(st.Uid), int(st.Gid)); err != nil {
			return err
		}
	}
	if !isLink {
		if err := os.Chmod(cp, info.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)); err != nil {
			return err
		}
	}
	mtime := unix.NsecToTimespec(info.ModTime().UnixNano())
	atime := mtime
	if st != nil {
		atime = unix.NsecToTimespec(st.Atim.Nano())
	}
	return unix.UtimesNanoAt(unix.AT_FDCWD, cp, []unix.Timespec{atime, mtime}, unix.AT_SYMLINK_NOFOLLOW)
}
