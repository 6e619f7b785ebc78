package layout

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
)

// PathNames maps paths between a vault's plaintext view and its cipherdir, as gocryptfs-xray
// -decrypt-paths and -encrypt-paths do: which file a sync tool's error about a cipher path
// concerns, and the other way round. Names is nil with plaintext names; PerDirIV is false with
// deterministic names (all-zero IVs, no gocryptfs.diriv files).
type PathNames struct {
	Names    *crypto.NameTransform
	PerDirIV bool
}

// ErrFormatFile is wrapped by DecryptPath's error for a path to one of the format's own files
// (gocryptfs.conf, gocryptfs.diriv, a long name's .name file), which has no plaintext path.
var ErrFormatFile = errors.New("the vault's own file, not part of the plaintext view")

// ErrBadPath is wrapped by the error for a path that is empty or leaves the root.
var ErrBadPath = errors.New("not a path inside the vault")

// CleanPath turns p into the slash-separated path relative to the root that both mapping
// directions take, as gocryptfs's control socket does: leading slashes dropped, "." and ".."
// resolved. The root itself and paths above it are ErrBadPath.
func CleanPath(p string) (string, error) {
	c := path.Clean(strings.TrimLeft(p, "/"))
	if c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return "", ErrBadPath
	}
	return c, nil
}

// DecryptPath returns the plaintext path of cipherPath in the cipherdir open at rootfd (see
// CleanPath). Every directory on the way must exist; the last element needs to exist only when
// it is a long name (its .name file holds the name). A sync tool's conflict copy maps to the
// name the mount shows it under. Plaintext names map to themselves.
func (m PathNames) DecryptPath(rootfd int, cipherPath string) (string, error) {
	return m.walk(rootfd, cipherPath, func(dirfd int, iv []byte, parts []string, i int, plain []string) (string, string, error) {
		part := parts[i]
		switch {
		case part == crypto.DirIVName || i == 0 && part == crypto.ConfName:
			return "", "", fmt.Errorf("%s%w", where(parts, i), ErrFormatFile)
		case crypto.IsLongNameFile(part):
			what := "the long-name file of an entry that is gone"
			if p, err := EntryUnderIV(dirfd, strings.TrimSuffix(part, crypto.LongNameSuffix), iv, m.Names); err == nil {
				what = "the long-name file of " + path.Join(append(plain, p)...)
			}
			return "", "", fmt.Errorf("%s%w (%s)", where(parts, i), ErrFormatFile, what)
		}
		p, err := EntryUnderIV(dirfd, part, iv, m.Names)
		if err != nil {
			c, cp, _, ok := ConflictCopy(dirfd, part, iv, m.Names, i == 0)
			if !ok || cp == "" {
				return "", "", fmt.Errorf("%s%w", where(parts, i), err)
			}
			p = ConflictName(cp, c, func(name string) bool { return m.exists(dirfd, name, iv) })
		}
		return part, p, nil
	})
}

// EncryptPath returns the cipher path of plainPath in the cipherdir open at rootfd (see
// CleanPath). Every directory on the way must exist (its IV encrypts the next name); the last
// element need not. Long names give their gocryptfs.longname.* entry.
func (m PathNames) EncryptPath(rootfd int, plainPath string) (string, error) {
	return m.walk(rootfd, plainPath, func(dirfd int, iv []byte, parts []string, i int, _ []string) (string, string, error) {
		s, _, _, err := m.Names.StoredName(parts[i], iv)
		if err != nil {
			return "", "", fmt.Errorf("%s%w", where(parts, i), err)
		}
		return s, s, nil
	})
}

// walk maps the path p (CleanPath) element by element; with plaintext names it maps to
// itself. step gets the directory that holds element i of parts, that directory's IV and
// the elements before it as mapped (done); it returns the element's stored name, which is
// opened as the next directory, and what the element maps to.
func (m PathNames) walk(rootfd int, p string, step func(dirfd int, iv []byte, parts []string, i int, done []string) (stored, mapped string, err error)) (string, error) {
	clean, err := CleanPath(p)
	if err != nil || m.Names == nil {
		return clean, err
	}
	parts := strings.Split(clean, "/")
	var done []string
	dirfd := rootfd
	defer func() {
		if dirfd != rootfd {
			unix.Close(dirfd)
		}
	}()
	for i := range parts {
		iv := make([]byte, crypto.DirIVLen)
		if m.PerDirIV {
			if iv, err = ReadDirIV(dirfd); err != nil {
				return "", fmt.Errorf("directory %s: %w", dirLabel(parts[:i]), err)
			}
		}
		stored, mapped, err := step(dirfd, iv, parts, i, done)
		if err != nil {
			return "", err
		}
		done = append(done, mapped)
		if i == len(parts)-1 {
			break
		}
		next, err := OpenDirPath(dirfd, stored)
		if err != nil {
			return "", fmt.Errorf("directory %s: %w", dirLabel(parts[:i+1]), err)
		}
		if dirfd != rootfd {
			unix.Close(dirfd)
		}
		dirfd = next
	}
	return path.Join(done...), nil
}

// exists reports whether the entry plain exists in dirfd (names encrypt deterministically).
func (m PathNames) exists(dirfd int, plain string, iv []byte) bool {
	stored, _, _, err := m.Names.StoredName(plain, iv)
	if err != nil {
		return true
	}
	var st unix.Stat_t
	return unix.Fstatat(dirfd, stored, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
}

// where names element i of parts in an error about it, unless it is the last: the caller
// names the whole path.
func where(parts []string, i int) string {
	if i == len(parts)-1 {
		return ""
	}
	return path.Join(parts[:i+1]...) + ": "
}

// dirLabel names the directory reached by parts (as given) in an error.
func dirLabel(parts []string) string {
	if len(parts) == 0 {
		return "/ (the root)"
	}
	return path.Join(parts...)
}
