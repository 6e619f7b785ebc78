package vault

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/layout"
	"golang.org/x/sys/unix"
)

// Fsck decrypts every name, symlink target and content block of the vault
// and returns every problem found (nil when the vault is clean); it never
// stops at the first. progress (if not nil) is called at once and then as
// the check goes (see FsckProgress). The error is only for what ends the
// check early: a cancelled ctx.
func (v *Vault) Fsck(ctx context.Context, progress func(FsckProgress)) ([]Problem, error) {
	m := newMeter(v, progress)
	var problems []Problem
	add := func(p Problem) { problems = append(problems, p) }
	err := v.Walk(ctx, func(n Node) error {
		if c := n.Conflict; c != nil {
			add(newProblem(n.Path, n.CipherPath, KindConflict, conflictDetail(c)))
		}
		v.checkEntryMetered(ctx, n, add, m)
		m.entry(n.Path, contentSize(n.Info))
		return ctx.Err()
	}, add)
	return problems, err
}

// checkEntry decrypts what the entry n holds beyond its name (which the walk has decrypted):
// every block and the header of a file, a symlink's target, the extended attributes, and
// reports what does not authenticate. A directory's own names are checked when it is walked.
func (v *Vault) checkEntry(ctx context.Context, n Node, problem func(Problem)) {
	v.checkEntryMetered(ctx, n, problem, nil)
}

// checkEntryMetered is checkEntry telling m (if not nil) of the file content read.
func (v *Vault) checkEntryMetered(ctx context.Context, n Node, problem func(Problem), m *meter) {
	switch t := n.Info.Mode().Type(); {
	case t.IsRegular():
		v.decryptFileMetered(ctx, n, nil, problem, m)
	case t == fs.ModeSymlink:
		if _, err := v.readSymlink(n); err != nil {
			problem(newProblem(n.Path, n.CipherPath, KindSymlink, errDetail(err)))
		}
	case t.IsDir(), isSpecial(t):
		// Nothing encrypted beyond the name.
	default:
		problem(newProblem(n.Path, n.CipherPath, KindType, fmt.Sprintf("unexpected file type %v", t)))
	}
	v.readXattrs(n, problem)
}

// countIn counts the entries below the cipher directory open at dirfd (cdir)
// that the walk will visit, and their content, into m's totals (an estimate:
// undecryptable entries are counted too).
func (v *Vault) countIn(dirfd int, cdir string, m *meter) {
	names, err := layout.ReadDirNames(dirfd)
	if err != nil {
		return
	}
	for _, name := range names {
		if v.hidden(cdir, name) {
			continue
		}
		info, err := lstatAt(dirfd, name)
		if err != nil {
			m.counted(0)
			continue
		}
		m.counted(contentSize(info))
		if !info.IsDir() {
			continue
		}
		if cfd, err := layout.OpenDir(dirfd, name); err == nil {
			v.countIn(cfd, path.Join(cdir, name), m)
			unix.Close(cfd)
		}
	}
}

// FsckDir checks the vault in cipherdir with its password, like Unlock
// followed by Fsck, and also reports a config that does not parse as a
// problem of kind "config" (with a nil error), so that a damaged config
// shows up like any other damage. A wrong password is still an error
// (ErrWrongPassword): it cannot be told apart from a damaged EncryptedKey.
func FsckDir(ctx context.Context, cipherdir string, password []byte, progress func(FsckProgress)) ([]Problem, error) {
	if _, err := os.Stat(filepath.Join(cipherdir, crypto.ConfName)); err == nil {
		if _, err := LoadConfig(cipherdir); err != nil && !isUnsupported(err) {
			return []Problem{newProblem("", crypto.ConfName, KindConfig, errDetail(err))}, nil
		}
	}
	v, err := Unlock(cipherdir, password)
	if err != nil {
		return nil, err
	}
	defer v.Close()
	return v.Fsck(ctx, progress)
}

// KindConfig is reported by FsckDir for a gocryptfs.conf that does not
// parse or validate.
const KindConfig = "config"

func isUnsupported(err error) bool {
	return errors.Is(err, ErrUnsupported) || errors.Is(err, ErrNotFound)
}

// conflictDetail describes a conflict copy for fsck.
func conflictDetail(c *Conflict) string {
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
