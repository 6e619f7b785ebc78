package vault

import (
	"context"
	"fmt"
	"io/fs"
	"path"

	"github.com/vaultui/vaultui/vault/format"
)

// FsckVolume decrypts every name, symlink target and content block of the vault of any
// format and returns every problem found (nil when the vault is clean); it never stops at
// the first. progress (if not nil) is called at once and then as the check goes (see
// FsckProgress). The error is only for what ends the check early: a cancelled ctx.
func FsckVolume(ctx context.Context, vol format.Volume, progress func(FsckProgress)) ([]Problem, error) {
	m := newMeter(vol, progress)
	var problems []Problem
	add := func(p Problem) { problems = append(problems, p) }
	err := WalkVolume(ctx, vol, func(n Node) error {
		if c := n.Conflict; c != nil {
			add(newProblem(n.Path, n.CipherPath, format.KindConflict, conflictDetail(c)))
		}
		checkEntry(ctx, vol, n, add, m)
		m.entry(n.Path, contentSize(n.Info))
		return ctx.Err()
	}, add)
	return problems, err
}

// checkEntry decrypts what the entry n holds beyond its name (which the walk has decrypted):
// every block and the header of a file, a symlink's target, the extended attributes, and
// reports what does not authenticate; it tells m (if not nil) of the file content read. A
// directory's own names are checked when it is walked.
func checkEntry(ctx context.Context, vol format.Volume, n Node, problem func(Problem), m *meter) {
	switch t := n.Info.Mode().Type(); {
	case t.IsRegular():
		decryptVolumeFile(ctx, vol, n, nil, problem, m)
	case t == fs.ModeSymlink:
		if _, err := vol.Readlink(n); err != nil {
			problem(newProblem(n.Path, n.CipherPath, format.KindSymlink, errDetail(err)))
		}
	case t.IsDir(), format.IsSpecial(t):
		// Nothing encrypted beyond the name.
	default:
		problem(newProblem(n.Path, n.CipherPath, format.KindType, fmt.Sprintf("unexpected file type %v", t)))
	}
	vol.Xattrs(n, problem)
}

// conflictDetail describes a conflict copy for fsck.
func conflictDetail(c *format.Conflict) string {
	if c.Kind == ConflictMadeInSecondFolder {
		s := fmt.Sprintf("made as /%s in a folder made on two computers, under the IV of %s's copy of %s", c.Of, c.Tool, c.Base)
		return s + "; gocryptfs does not show it: merge the folder with \"vaultui conflicts --keep both VAULT " + FolderArg(path.Dir(c.Of)) + "\""
	}
	s := fmt.Sprintf("%s's conflict copy of /%s", c.Tool, c.Of)
	if c.Date != "" {
		s += " from " + c.Date
	}
	return s + "; keep one or both with \"vaultui conflicts\" or through the mount"
}
