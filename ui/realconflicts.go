package ui

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/vault"
)

func (b *realBackend) CountConflicts(dir string) (ConflictCount, error) {
	t, err := vault.CountConflicts(dir)
	return ConflictCount{N: t.Count, Complete: t.Complete, SplitDirs: t.SplitDirs}, escaped(err)
}

func (b *realBackend) OpenConflicts(ctx context.Context, dir, mountPoint string, password []byte) (ConflictSession, error) {
	// Whatever the screen thought, a mounted vault is changed only through
	// its mount: the mount caches names.
	if mp := mountmgr.MountedAt(dir); mp != "" {
		return &mountConflicts{cipherDir: dir, mountPoint: mp}, nil
	}
	if mountPoint != "" {
		return nil, fmt.Errorf("%s is no longer mounted at %s", dir, mountPoint)
	}
	v, err := vault.Unlock(dir, password)
	if err != nil {
		return nil, escaped(err)
	}
	return &lockedConflicts{v: v}, nil
}

// lockedConflicts settles the copies of an unmounted vault in its cipherdir,
// with the key held while the conflicts screen is open.
type lockedConflicts struct{ v *vault.Vault }

func (s *lockedConflicts) List(ctx context.Context) ([]ConflictCopy, error) {
	list, err := s.v.Conflicts(ctx)
	out := make([]ConflictCopy, 0, len(list))
	for _, c := range list {
		cp := ConflictCopy{Path: c.Path, Of: c.Of, Tool: c.Tool, Date: c.Date, Host: c.Host, Size: c.Size, Newer: c.Newer}
		if st, err := os.Lstat(filepath.Join(s.v.Dir, filepath.FromSlash(c.CipherPath))); err == nil && st.IsDir() {
			cp.Dir = true
		}
		out = append(out, cp)
	}
	return out, escaped(err)
}

func (s *lockedConflicts) Settle(ctx context.Context, p string, keep Keep) error {
	// Mounted meanwhile (from the command line): the mount caches names, so
	// change nothing under it.
	if mp := mountmgr.MountedAt(s.v.Dir); mp != "" {
		return fmt.Errorf("%s was mounted at %s meanwhile: press esc and c again to settle through the mount", s.v.Dir, mp)
	}
	how := map[Keep]vault.Keep{KeepBoth: vault.KeepBoth, KeepOriginal: vault.KeepOriginal, KeepCopy: vault.KeepCopy}[keep]
	return escaped(s.v.ResolveConflict(ctx, p, how))
}

func (s *lockedConflicts) Close() { s.v.Close() }

// mountConflicts lists and settles a mounted vault's copies through the
// mount, without a password. The mount shows each copy under a name with a
// " (conflict …)" marker, but so does a copy settled with "keep both" (it
// keeps that name), so a name alone proves nothing: a copy is an entry whose
// inode number (the mount shows the cipher file's) is one the keyless scan
// of the cipherdir found. OneDrive's copies escape that scan; they are
// listed when the vault is not mounted.
type mountConflicts struct{ cipherDir, mountPoint string }

// shownMarker finds the marker the mount adds to a copy's name (see
// layout.ConflictName): " (conflict [DATE ]TOOL[ HOST][ N])".
var shownMarker = regexp.MustCompile(` \(conflict (?:(\d{4}-\d{2}-\d{2}) )?(Dropbox|Syncthing|Nextcloud|ownCloud|OneDrive|Google Drive)(?: ([^()]*))?\)`)

// parseShown reads a copy's shown path back into what it copies.
func parseShown(p string) (ConflictCopy, bool) {
	dir, name := path.Split(p)
	locs := shownMarker.FindAllStringSubmatchIndex(name, -1)
	if len(locs) == 0 {
		return ConflictCopy{}, false
	}
	m := locs[len(locs)-1]
	cp := ConflictCopy{Path: p, Of: dir + name[:m[0]] + name[m[1]:], Tool: name[m[4]:m[5]]}
	if m[2] >= 0 {
		cp.Date = name[m[2]:m[3]]
	}
	if m[6] >= 0 && cp.Date == "" {
		// Without a date the label names the host; a number only tells copies apart.
		if h := name[m[6]:m[7]]; strings.Trim(h, "0123456789") != "" {
			cp.Host = h
		}
	}
	return cp, true
}

func (s *mountConflicts) List(ctx context.Context) ([]ConflictCopy, error) {
	tally, err := vault.CountConflicts(s.cipherDir)
	if err != nil {
		return nil, escaped(err)
	}
	var out []ConflictCopy
	found := 0
	err = filepath.WalkDir(s.mountPoint, func(p string, d fs.DirEntry, err error) error {
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil && p == s.mountPoint:
			return err
		case err != nil:
			return nil // an unreadable folder: its copies are not listed
		case found == len(tally.Inodes):
			return fs.SkipAll // every copy the scan found is listed
		case p == s.mountPoint || !strings.Contains(d.Name(), " (conflict "):
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok || !tally.Inodes[st.Ino] {
			return nil
		}
		rel, _ := filepath.Rel(s.mountPoint, p)
		cp, ok := parseShown(filepath.ToSlash(rel))
		if !ok {
			return nil
		}
		found++
		cp.Dir, cp.Size = info.IsDir(), info.Size()
		if orig, err := os.Lstat(filepath.Join(s.mountPoint, filepath.FromSlash(cp.Of))); err == nil {
			switch {
			case info.ModTime().After(orig.ModTime()):
				cp.Newer = "copy"
			case info.ModTime().Before(orig.ModTime()):
				cp.Newer = "original"
			default:
				cp.Newer = "same"
			}
		}
		out = append(out, cp)
		return nil
	})
	if err != nil {
		return out, fmt.Errorf("listing %s: %w", s.mountPoint, err)
	}
	if tally.SplitDirs > 0 {
		// What was made under a diriv copy's IV has ordinary encrypted names: only the key
		// tells it from a settled file with the same shown name.
		return out, fmt.Errorf("%w: %d folder(s) were made on two computers; the copies in them are listed when the vault is not mounted", ErrPartialList, tally.SplitDirs)
	}
	return out, nil
}

// Settle renames or removes the copy through the mount, after checking that
// it still is one (a stale list must not delete an ordinary file).
func (s *mountConflicts) Settle(ctx context.Context, p string, keep Keep) error {
	full := filepath.Join(s.mountPoint, filepath.FromSlash(p))
	if !strings.HasPrefix(full, s.mountPoint+string(filepath.Separator)) {
		return fmt.Errorf("%s: not a path in the vault", vault.EscapeControl(p))
	}
	cp, ok := parseShown(p)
	info, err := os.Lstat(full)
	if err != nil {
		return err
	}
	tally, err := vault.CountConflicts(s.cipherDir)
	if err != nil {
		return escaped(err)
	}
	if st, isUnix := info.Sys().(*syscall.Stat_t); !ok || !isUnix || !tally.Inodes[st.Ino] {
		// Copies in a folder made twice are not told from settled files without the key.
		return fmt.Errorf("%s is no longer a conflict copy", vault.EscapeControl(p))
	}
	switch keep {
	case KeepOriginal:
		if info.IsDir() {
			return fmt.Errorf("%s is a folder: look inside and delete it through the mount yourself", vault.EscapeControl(p))
		}
		return os.Remove(full)
	case KeepCopy:
		return os.Rename(full, filepath.Join(s.mountPoint, filepath.FromSlash(cp.Of)))
	}
	// Keep both: the copy keeps the name it shows under, stored properly. A
	// rename onto the same name changes nothing, so it goes through a
	// temporary name; neither step replaces anything.
	dir, name := filepath.Split(full)
	tmp := dir + strings.Replace(name, " (conflict ", " (kept conflict ", 1)
	if err := renameNoReplace(full, tmp); err != nil {
		return err
	}
	if err := renameNoReplace(tmp, full); err != nil {
		return fmt.Errorf("kept both, but the copy is now %s: %w", vault.EscapeControl(filepath.Base(tmp)), err)
	}
	return nil
}

func (s *mountConflicts) Close() {}

// renameNoReplace renames old to new unless new exists.
func renameNoReplace(old, new string) error {
	err := unix.Renameat2(unix.AT_FDCWD, old, unix.AT_FDCWD, new, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		// The file system does not take the flag: check, then rename.
		if _, err := os.Lstat(new); err == nil {
			return &os.LinkError{Op: "rename", Old: old, New: new, Err: fs.ErrExist}
		}
		return os.Rename(old, new)
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: old, New: new, Err: err}
	}
	return nil
}
