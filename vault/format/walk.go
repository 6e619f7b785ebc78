package format

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/vaultui/vaultui/vault/layout"
)

// Walk visits every entry of vol below the root, depth first and in plaintext name order, a
// directory before its contents: the one walk of every format (fsck, export and the conflict
// listing in package vault are built on it). What a format cannot read (a name that does not
// decrypt, a directory it cannot open) goes to problem and is skipped; the walk goes on.
// showBadNames also visits the entries whose names do not decrypt, where the format can name
// them (see Volume.ReadDir). An error from fn, from ReadDir or of ctx (asked before each
// entry) ends the walk and is returned.
//
// # Hostile trees
//
// A vault's folder is writable by whoever can write to the synced folder, and what links a
// directory to its folder is not always authenticated (a Cryptomator dir.c9r is a plain
// ID). So the walker knows every directory it entered by its cipher folder's identity
// (Dir.Key), and a directory whose folder it has entered already (an ancestor's: a loop that
// would never end; or another folder's elsewhere) is damage of kind KindDirTwice, naming
// both plaintext paths, and is not walked again. One directory is legitimately reached twice:
// through a sync tool's conflict copy of a directory, which names its original's folder (and
// may sort first); its contents are walked again under the copy's name, within a budget of a
// few times the number of folders, which keeps a hostile vault's walk linear. A caller that takes no problems (problem
// nil) is walking for something other than a check, and for it a tree that is not a tree
// is the error that ends the walk (wrapping layout.ErrCorrupt).
func Walk(ctx context.Context, vol Volume, fn func(Node) error, problem func(Problem), showBadNames bool) error {
	w := &walker{ctx: ctx, vol: vol, fn: fn, problem: problem, showBadNames: showBadNames, seen: map[any]*entered{}}
	if problem == nil {
		w.problem, w.strict = func(Problem) {}, true
	}
	root, err := vol.Root()
	if err != nil {
		w.problem(NewProblem("", "", KindIO, err.Error()))
		return nil
	}
	defer vol.CloseDir(root)
	if root.Key != nil {
		w.seen[root.Key] = &entered{onPath: true}
	}
	return w.dir(root)
}

// walker is one Walk.
type walker struct {
	ctx          context.Context
	vol          Volume
	fn           func(Node) error
	problem      func(Problem)
	strict       bool // no problem callback: a directory reached twice ends the walk
	showBadNames bool
	seen         map[any]*entered // Dir.Key of every directory entered
	again        int              // directories entered again, through conflict copies
}

// entered is a directory the walk entered.
type entered struct {
	path    string // the plaintext path it was first entered as
	onPath  bool   // being walked: entering it again would be a loop
	viaCopy bool   // first entered through a sync tool's conflict copy of a directory
}

// again reports whether the directory n, whose folder the walk entered before as e, is
// walked again: only through a conflict copy of a directory (or as the original of a copy
// walked first), never into its own ancestor, and within the budget.
func (w *walker) walkAgain(n Node, e *entered) bool {
	if e.onPath || n.Conflict == nil && !e.viaCopy || w.again >= 4*len(w.seen)+64 {
		return false
	}
	w.again++
	return true
}

// dir walks the open directory d.
func (w *walker) dir(d Dir) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	nodes, err := w.vol.ReadDir(d, w.showBadNames, w.problem)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		if err := w.fn(n); err != nil {
			return err
		}
		if !n.Info.IsDir() {
			continue
		}
		sub, err := w.vol.OpenDir(d, n)
		if err != nil {
			w.problem(dirProblem(n, err))
			continue
		}
		e := w.seen[sub.Key]
		if e != nil && sub.Key != nil && !w.walkAgain(n, e) {
			w.vol.CloseDir(sub)
			p := reachedTwice(n, sub, e.path)
			if w.strict {
				return fmt.Errorf("%s: %w: %s", w.vol.Folder(), layout.ErrCorrupt, p)
			}
			w.problem(p)
			continue
		}
		if e == nil && sub.Key != nil {
			e = &entered{path: n.Path, viaCopy: n.Conflict != nil}
			w.seen[sub.Key] = e
		}
		wasOnPath := e != nil && e.onPath
		if e != nil {
			e.onPath = true
		}
		err = w.dir(sub)
		if e != nil {
			e.onPath = wasOnPath
		}
		w.vol.CloseDir(sub)
		if err != nil {
			return err
		}
	}
	return nil
}

// reachedTwice is the problem of the directory n, whose folder sub the walk entered before
// as the directory at plaintext path first.
func reachedTwice(n Node, sub Dir, first string) Problem {
	shown := "/"
	if first != "" {
		shown = first
	}
	what := fmt.Sprintf("as %q, reached first", shown)
	if first == "" || strings.HasPrefix(n.Path, first+"/") {
		what = fmt.Sprintf("as its ancestor %q: a loop", shown)
	}
	return NewProblem(n.Path, n.CipherPath, KindDirTwice, fmt.Sprintf(
		"the same cipher folder (%s) %s; not walked again", sub.CipherPath, what))
}

// dirProblem is the problem of a directory n that could not be opened: damage the format
// found (an *Error, such as a Cryptomator dir.c9r naming no folder), or an I/O error.
func dirProblem(n Node, err error) Problem {
	var fe *Error
	if errors.As(err, &fe) {
		return NewProblem(n.Path, n.CipherPath, fe.Kind, fe.Err.Error())
	}
	return NewProblem(n.Path, n.CipherPath, KindIO, err.Error())
}

// IsSpecial reports whether t is a FIFO, socket or device node: entries that gocryptfs (and a
// vaultui mount) create with only their names encrypted.
func IsSpecial(t fs.FileMode) bool {
	return t == fs.ModeNamedPipe || t == fs.ModeSocket || t&fs.ModeDevice != 0
}
