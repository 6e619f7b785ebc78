package vault

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/vaultui/vaultui/vault/format"
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

// FolderArg is how a folder's plaintext path is given to Volume.Settle and shown: "/" for
// the root.
func FolderArg(p string) string { return format.FolderArg(p) }

// Keep says how Volume.Settle settles a conflict.
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
	if k := slices.Index(keepNames[:], s); k >= 0 {
		return Keep(k), nil
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
	// ErrNoConflict: Volume.Settle was given a path that is not a conflict.
	ErrNoConflict = errors.New("not a conflict copy")
	// ErrFolderKeepsBoth: a folder made on two computers is settled only by keeping both
	// folders' entries; each entry made under the diriv copy can also be settled alone.
	ErrFolderKeepsBoth = errors.New("a folder made on two computers is settled by keeping both")
)

// Settled says what Volume.Settle did beyond what keep says: for a folder made twice, the
// entries it moved into the folder.
type Settled struct {
	Moved []MovedEntry
	// DirIVCopies are the cipher paths of the removed copies of the folder's gocryptfs.diriv.
	DirIVCopies []string
}

// CountConflicts counts the sync tools' conflict copies in the vault in dir without its
// password, where its format tells them by their stored names alone (gocryptfs.CountConflicts);
// for other formats it gives an error wrapping ErrUnsupported.
func CountConflicts(dir string) (ConflictTally, error) {
	f, err := Identify(dir)
	if err != nil {
		return ConflictTally{}, err
	}
	if k, ok := f.kind.(interface {
		countConflicts(string) (ConflictTally, error)
	}); ok {
		return k.countConflicts(dir)
	}
	return ConflictTally{}, fmt.Errorf("%s: %w: a %s vault's conflict copies are counted with its key", dir, ErrUnsupported, f.Name)
}

// errStop ends a walk early once its work is done.
var errStop = errors.New("stop")

// atConflict walks vol (of the vault in dir) to the conflict copy at plaintext path p and
// calls entry for it, during the walk; ErrNoConflict when there is none and found, which vol
// may set for a conflict it found itself, is not set.
func atConflict(ctx context.Context, vol format.Volume, dir, p string, found *bool, entry func(Node) error) error {
	err := WalkVolume(ctx, vol, func(n Node) error {
		if n.Path != p || n.Conflict == nil {
			return nil
		}
		*found = true
		if err := entry(n); err != nil {
			return err
		}
		return errStop
	}, nil)
	if err != nil && err != errStop {
		return err
	}
	if !*found {
		return fmt.Errorf("%s: /%s: %w", dir, p, ErrNoConflict)
	}
	return nil
}
