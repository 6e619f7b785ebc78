package vault

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/format"
	"github.com/vaultui/vaultui/vault/layout"
)

// Settling a conflict rewrites the cipherdir, so it follows three rules:
//   - nothing that does not authenticate moves into a clean name: a copy is decrypted whole
//     (every block and the header, a symlink's target, its attributes) before it replaces
//     the original or gets a name of its own;
//   - the format's own files are never settled onto: a copy of gocryptfs.diriv stands for a
//     folder made on two computers (ConflictFolderMadeTwice), which is settled by moving what
//     was made under the copy's IV into the folder, never by renaming the copy;
//   - every step is one rename or unlink, and the directory is synced after it, so a crash
//     leaves the old state or the new one, and running the same settle again finishes it.

// ConflictEntry is a sync tool's conflict found in a vault (see Kind).
type ConflictEntry struct {
	Kind ConflictKind
	// Path is the plaintext path the entry shows under in a mount (a readable marker before
	// the extension), or the folder for ConflictFolderMadeTwice ("" is the root); Of is the
	// path of the entry it concerns (the folder itself for a folder made twice).
	Path, Of string
	// CipherPath is the entry's path in the cipherdir; for a folder made twice, the tool's
	// copy of its gocryptfs.diriv.
	CipherPath string
	Tool       string
	Date       string // YYYY-MM-DD, if the tool's marker has one
	Host       string // the computer, device or user the marker names, if any
	Size       int64  // plaintext size
	Dir        bool   `json:",omitempty"` // the copy is a folder
	ModTime    time.Time
	// Newer is "copy" or "original" by modification time, "same", or "" when the original
	// is gone (and for a folder made twice).
	Newer string
	// Entries is, for a folder made twice, how many entries were made in it under the
	// copy's IV (each listed as ConflictMadeInSecondFolder).
	Entries int `json:",omitempty"`
}

// Conflicts lists the vault's conflicts, in plaintext path order (a folder made twice before
// the entries made in it).
func (v *Vault) Conflicts(ctx context.Context) ([]ConflictEntry, error) {
	var out []ConflictEntry
	err := listConflicts(ctx, gocryptfsVolume{v: v, folder: func(f splitFolder) error {
		out = append(out, folderEntry(f))
		return nil
	}}, &out)
	return out, err
}

// ConflictsVolume is Conflicts for a vault of any format (a Cryptomator vault has no folders
// made twice: its directories are found by ID, not by a per-folder IV).
func ConflictsVolume(ctx context.Context, vol format.Volume) ([]ConflictEntry, error) {
	var out []ConflictEntry
	err := listConflicts(ctx, vol, &out)
	return out, err
}

// listConflicts appends the conflict copies of vol to out as the walk meets them, and then
// says of each whether it or its original is newer.
func listConflicts(ctx context.Context, vol format.Volume, out *[]ConflictEntry) error {
	mtimes := map[string]time.Time{}
	g := vol.Geometry()
	err := WalkVolume(ctx, vol, func(n Node) error {
		if n.Conflict == nil {
			mtimes[n.Path] = n.Info.ModTime()
			return nil
		}
		*out = append(*out, conflictEntry(g, n))
		return nil
	}, nil)
	for i, e := range *out {
		orig, ok := mtimes[e.Of]
		switch {
		case !ok || e.Kind == ConflictFolderMadeTwice:
		case e.ModTime.After(orig):
			(*out)[i].Newer = "copy"
		case e.ModTime.Before(orig):
			(*out)[i].Newer = "original"
		default:
			(*out)[i].Newer = "same"
		}
	}
	return err
}

// conflictEntry describes the conflict entry n (n.Conflict is set) of a vault of geometry g.
func conflictEntry(g format.Geometry, n Node) ConflictEntry {
	size := n.Info.Size()
	if n.Info.Mode().IsRegular() {
		size, _ = g.PlainSize(size)
	}
	c := n.Conflict
	return ConflictEntry{Kind: c.Kind, Path: n.Path, Of: c.Of, CipherPath: n.CipherPath,
		Tool: c.Tool, Date: c.Date, Host: c.Host, Size: size, Dir: n.Info.IsDir(), ModTime: n.Info.ModTime()}
}

// folderEntry describes the folder made twice f.
func folderEntry(f splitFolder) ConflictEntry {
	c := f.copies[0]
	return ConflictEntry{Kind: ConflictFolderMadeTwice, Path: f.path, Of: f.path,
		CipherPath: path.Join(f.cipherPath, c.name), Tool: c.Tool, Date: c.Date, Host: c.Host,
		ModTime: c.info.ModTime(), Entries: len(f.entries)}
}

// FolderArg is how a folder's plaintext path is given to ResolveConflict and shown: "/" for
// the root.
func FolderArg(p string) string {
	if p == "" || p == "." {
		return "/"
	}
	return p
}

// Keep says how ResolveConflict settles a conflict.
type Keep int

const (
	// KeepBoth gives a copy a name of its own (the one it shows under); for a folder made
	// twice, it moves what was made under the diriv copy's IV into the folder.
	KeepBoth     Keep = iota
	KeepOriginal      // the copy is deleted
	KeepCopy          // the copy replaces the original
)

// keepNames are the words for Keep on the command line and on the daemon's socket.
var keepNames = [...]string{KeepBoth: "both", KeepOriginal: "original", KeepCopy: "copy"}

func (k Keep) String() string {
	if int(k) >= 0 && int(k) < len(keepNames) {
		return keepNames[k]
	}
	return fmt.Sprintf("Keep(%d)", int(k))
}

// ParseKeep reads "both", "original" or "copy".
func ParseKeep(s string) (Keep, error) {
	for k, name := range keepNames {
		if s == name {
			return Keep(k), nil
		}
	}
	return 0, fmt.Errorf("%q: want both, original or copy", s)
}

func (k Keep) MarshalText() ([]byte, error) {
	if int(k) < 0 || int(k) >= len(keepNames) {
		return nil, fmt.Errorf("vault: no such Keep %d", int(k))
	}
	return []byte(keepNames[k]), nil
}

func (k *Keep) UnmarshalText(b []byte) error {
	v, err := ParseKeep(string(b))
	if err != nil {
		return fmt.Errorf("vault: keep %w", err)
	}
	*k = v
	return nil
}

var (
	// ErrNoConflict: ResolveConflict was given a path that is not a conflict.
	ErrNoConflict = errors.New("not a conflict copy")
	// ErrFolderKeepsBoth: a folder made on two computers is settled only by keeping both
	// folders' entries; each entry made under the diriv copy can also be settled alone.
	ErrFolderKeepsBoth = errors.New("a folder made on two computers is settled by keeping both")
)

// Settled says what ResolveConflict did beyond what keep says: for a folder made twice, the
// entries it moved into the folder.
type Settled struct {
	Moved []MovedEntry
	// DirIVCopies are the cipher paths of the removed copies of the folder's gocryptfs.diriv.
	DirIVCopies []string
}

// MovedEntry is an entry that was made under a diriv copy's IV (listed as Path, made as Of)
// and now is in the folder under To. Renamed is set when the folder already held Of: To then
// carries a conflict marker.
type MovedEntry struct {
	Path, Of, To string
	Renamed      bool
}

// ResolveConflict settles the conflict at plaintext path p (ConflictEntry.Path; "/" or "" for
// the root folder) in the cipherdir. The vault must not be mounted: a mounted vault is
// resolved through the mount, with a plain rename or delete. Nothing is deleted but what keep
// says; a copy that does not authenticate is refused (ErrCorrupt) unless it is deleted.
func (v *Vault) ResolveConflict(ctx context.Context, p string, keep Keep) error {
	_, err := v.SettleConflict(ctx, p, keep)
	return err
}

// SettleConflict is ResolveConflict, also saying what it did.
func (v *Vault) SettleConflict(ctx context.Context, p string, keep Keep) (Settled, error) {
	p = strings.Trim(p, "/")
	var done Settled
	found := false
	err := v.walk(ctx, func(n Node) error {
		if n.Path != p || n.Conflict == nil {
			return nil
		}
		found = true
		if err := v.resolve(ctx, n, keep); err != nil {
			return err
		}
		return errStop
	}, nil, func(f splitFolder) error {
		if f.path != p {
			return nil
		}
		found = true
		var err error
		if done, err = v.mergeFolder(ctx, f, keep); err != nil {
			return err
		}
		return errStop
	})
	if err != nil && err != errStop {
		return Settled{}, err
	}
	if !found {
		return Settled{}, fmt.Errorf("%s: /%s: %w", v.Dir, p, ErrNoConflict)
	}
	return done, nil
}

// CheckSettle makes the checks SettleConflict makes before it changes anything, and changes
// nothing: it finds the conflict at plaintext path p and, unless keep deletes it, decrypts it
// whole (ErrCorrupt if any of it does not authenticate); a folder made twice must be kept
// both (ErrFolderKeepsBoth) and every entry made in it must authenticate. It returns the
// conflict and, for a folder made twice, the entries made in it. A mounted vault is settled
// through its mount after these checks (the daemon does: see mountmgr), so the kernel's view
// of it stays right.
func (v *Vault) CheckSettle(ctx context.Context, p string, keep Keep) (ConflictEntry, []ConflictEntry, error) {
	p = strings.Trim(p, "/")
	var found *ConflictEntry
	var entries []ConflictEntry
	err := v.walk(ctx, func(n Node) error {
		if n.Path != p || n.Conflict == nil {
			return nil
		}
		e := conflictEntry(v.Volume().Geometry(), n)
		found = &e
		switch {
		case keep == KeepOriginal && n.Info.IsDir():
			return fmt.Errorf("vault: %s is a directory: look inside and remove it through the mount", n.Path)
		case keep != KeepOriginal:
			if err := v.authenticate(ctx, n); err != nil {
				return err
			}
		}
		return errStop
	}, nil, func(f splitFolder) error {
		if f.path != p {
			return nil
		}
		e := folderEntry(f)
		found = &e
		if keep != KeepBoth {
			return fmt.Errorf("%s: %s: %w", v.Dir, FolderArg(f.path), ErrFolderKeepsBoth)
		}
		for _, n := range f.entries {
			if err := v.authenticate(ctx, n); err != nil {
				return err
			}
			entries = append(entries, conflictEntry(v.Volume().Geometry(), n))
		}
		return errStop
	})
	if err != nil && err != errStop {
		return ConflictEntry{}, nil, err
	}
	if found == nil {
		return ConflictEntry{}, nil, fmt.Errorf("%s: /%s: %w", v.Dir, p, ErrNoConflict)
	}
	return *found, entries, nil
}

// errStop ends a walk early once its work is done.
var errStop = errors.New("stop")

// authenticate decrypts the whole entry n (its name was decrypted by the walk) and refuses it
// with ErrCorrupt if any of it does not authenticate. A directory's gocryptfs.diriv must be
// readable: its names are checked when it is walked.
func (v *Vault) authenticate(ctx context.Context, n Node) error {
	var bad []string
	checkEntry(ctx, v.Volume(), n, func(p Problem) {
		if p.Damage() {
			bad = append(bad, strings.TrimPrefix(p.String(), p.Path+": "))
		}
	}, nil)
	if n.Info.IsDir() && v.Names != nil {
		if fd, err := layout.OpenDirPath(refOf(n).dirfd, refOf(n).name); err != nil {
			bad = append(bad, err.Error())
		} else {
			if _, err := v.dirIVAt(fd); err != nil {
				bad = append(bad, errDetail(err))
			}
			unix.Close(fd)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s: /%s (%s) does not decrypt, so it was left as it is: %s: %w",
			v.Dir, n.Path, n.CipherPath, strings.Join(bad, "; "), ErrCorrupt)
	}
	return nil
}

// isFormatFile reports whether name is one of the format's own files, which settling never
// renames onto or removes as a copy.
func isFormatFile(name string) bool {
	return name == crypto.DirIVName || name == crypto.ConfName || crypto.IsLongNameFile(name)
}

// ownNameFile is the .name file that belongs to entry n alone and goes when n goes: a long
// name's own for an entry made under a diriv copy's IV, or a copy the tool made of the
// original's (then the original keeps its own). "" when there is none.
func (v *Vault) ownNameFile(n Node) string {
	file := refOf(n).name + crypto.LongNameSuffix
	stored := n.Conflict.Base
	if n.Conflict.Kind == ConflictMadeInSecondFolder {
		stored = refOf(n).name
	}
	if !crypto.IsLongName(stored) {
		return ""
	}
	if _, err := layout.ReadLongNameFile(refOf(n).dirfd, file, stored, v.Names); err != nil {
		return ""
	}
	return file
}

// storeUnder returns the stored name of plain in the directory dirfd under iv, first writing
// (and syncing) its .name file if it is a long name.
func (v *Vault) storeUnder(dirfd int, plain string, iv []byte) (stored string, created bool, err error) {
	stored, encoded, long, err := v.Names.StoredName(plain, iv)
	if err != nil || !long {
		return stored, false, err
	}
	if created, err = layout.WriteLongName(dirfd, stored, encoded); err != nil {
		return "", false, err
	}
	return stored, created, syncAt(dirfd, stored+crypto.LongNameSuffix)
}

// syncAt makes the file name in dirfd durable.
func syncAt(dirfd int, name string) error {
	fd, err := layout.OpenFile(dirfd, name, unix.O_RDONLY|unix.O_NONBLOCK, 0, nil)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fsync(fd)
}

func (v *Vault) resolve(ctx context.Context, n Node, keep Keep) error {
	dirfd := refOf(n).dirfd
	ownNameFile := v.ownNameFile(n)
	// finish removes what went with the copy and makes the change durable.
	finish := func() error {
		if ownNameFile != "" {
			unix.Unlinkat(dirfd, ownNameFile, 0)
		}
		if err := unix.Fsync(dirfd); err != nil {
			return fmt.Errorf("vault: syncing the directory of %s: %w", n.CipherPath, err)
		}
		return nil
	}
	if keep == KeepOriginal {
		if n.Info.IsDir() {
			return fmt.Errorf("vault: %s is a directory: remove it through the mount", n.Path)
		}
		if err := unix.Unlinkat(dirfd, refOf(n).name, 0); err != nil {
			return fmt.Errorf("vault: removing %s: %w", n.CipherPath, err)
		}
		return finish()
	}
	if err := v.authenticate(ctx, n); err != nil {
		return err
	}
	iv, err := v.dirIVAt(dirfd)
	if err != nil {
		return err
	}
	if keep == KeepCopy {
		// The original's stored name: a copy's base, or for an entry made under a diriv
		// copy's IV the name it has in the folder under the folder's own IV.
		target, createdNameFile := n.Conflict.Base, false
		if n.Conflict.Kind == ConflictMadeInSecondFolder {
			if target, createdNameFile, err = v.storeUnder(dirfd, path.Base(n.Conflict.Of), iv); err != nil {
				return fmt.Errorf("vault: %w", err)
			}
		}
		if isFormatFile(target) {
			return fmt.Errorf("vault: /%s: refusing to settle onto %s", n.Path, target)
		}
		// One rename replaces the original: a crash leaves the old one or the new one.
		if err := unix.Renameat(dirfd, refOf(n).name, dirfd, target); err != nil {
			if createdNameFile {
				layout.RemoveLongName(dirfd, target)
			}
			return fmt.Errorf("vault: replacing %s: %w", n.Conflict.Of, err)
		}
		return finish()
	}
	// KeepBoth: store the copy under the name it shows under, encrypted properly.
	if _, err := v.moveNoReplace(n, path.Base(n.Path), iv); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("vault: /%s already exists", n.Path)
		}
		return err
	}
	return finish()
}

// moveNoReplace renames entry n to plaintext name plain in its directory under iv, unless
// that name exists (an error wrapping fs.ErrExist). It returns the new stored name.
func (v *Vault) moveNoReplace(n Node, plain string, iv []byte) (string, error) {
	stored, created, err := v.storeUnder(refOf(n).dirfd, plain, iv)
	if err != nil {
		return "", fmt.Errorf("vault: %w", err)
	}
	if isFormatFile(stored) {
		return "", fmt.Errorf("vault: /%s: refusing to settle onto %s", n.Path, stored)
	}
	if err := unix.Renameat2(refOf(n).dirfd, refOf(n).name, refOf(n).dirfd, stored, unix.RENAME_NOREPLACE); err != nil {
		if created {
			layout.RemoveLongName(refOf(n).dirfd, stored)
		}
		if errors.Is(err, unix.EEXIST) {
			return "", fmt.Errorf("vault: %s: %w", n.CipherPath, fs.ErrExist)
		}
		return "", fmt.Errorf("vault: renaming %s: %w", n.CipherPath, err)
	}
	return stored, nil
}

// mergeFolder settles a folder made on two computers: every entry made under a copy of its
// gocryptfs.diriv is renamed to its own name encrypted under the folder's IV (a conflict
// marker added when the folder already holds that name), then the copies are removed. All
// entries are authenticated first, and nothing moves if one does not. Each rename is atomic
// and a moved entry decrypts under the folder's IV, so after a crash the folder is still made
// twice with fewer entries under the copy: settling it again finishes.
func (v *Vault) mergeFolder(ctx context.Context, f splitFolder, keep Keep) (Settled, error) {
	arg := FolderArg(f.path)
	if keep != KeepBoth {
		return Settled{}, fmt.Errorf("%s: %s: %w", v.Dir, arg, ErrFolderKeepsBoth)
	}
	for _, n := range f.entries {
		if err := v.authenticate(ctx, n); err != nil {
			return Settled{}, err
		}
	}
	iv, err := v.dirIVAt(f.dirfd)
	if err != nil {
		return Settled{}, err
	}
	var done Settled
	for _, n := range f.entries {
		if err := ctx.Err(); err != nil {
			return done, err
		}
		plain := path.Base(n.Conflict.Of)
		ownNameFile := v.ownNameFile(n)
		to, renamed := plain, false
		for i := 0; ; i++ {
			_, err := v.moveNoReplace(n, to, iv)
			if err == nil {
				break
			}
			if !errors.Is(err, fs.ErrExist) || i > 100 {
				return done, err
			}
			// The folder holds the name: the entry gets a conflict marker, as a copy shows.
			renamed = true
			to = layout.ConflictName(plain, n.Conflict.Conflict, func(s string) bool {
				stored, _, _, err := v.Names.StoredName(s, iv)
				return err != nil || lstatErr(refOf(n).dirfd, stored) == nil
			})
		}
		if ownNameFile != "" {
			unix.Unlinkat(refOf(n).dirfd, ownNameFile, 0)
		}
		done.Moved = append(done.Moved, MovedEntry{Path: n.Path, Of: n.Conflict.Of, To: path.Join(f.path, to), Renamed: renamed})
	}
	// The copies go only once nothing is left under their IVs, and after the moves are durable.
	if err := unix.Fsync(f.dirfd); err != nil {
		return done, fmt.Errorf("vault: syncing %s: %w", arg, err)
	}
	for _, c := range f.copies {
		if c.iv == nil {
			continue // not a diriv (wrong size): nothing was placed under it; leave it to the user
		}
		if err := unix.Unlinkat(f.dirfd, c.name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
			return done, fmt.Errorf("vault: removing %s: %w", path.Join(f.cipherPath, c.name), err)
		}
		done.DirIVCopies = append(done.DirIVCopies, path.Join(f.cipherPath, c.name))
	}
	if err := unix.Fsync(f.dirfd); err != nil {
		return done, fmt.Errorf("vault: syncing %s: %w", arg, err)
	}
	return done, nil
}

// lstatErr is the error of an lstat of name in dirfd (nil when it exists).
func lstatErr(dirfd int, name string) error {
	var st unix.Stat_t
	return unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
}
