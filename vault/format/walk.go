package format

import (
	"context"
	"errors"
)

// Walk visits every entry of vol below the root, depth first and in plaintext name order, a
// directory before its contents: the one walk of every format (fsck, export and the conflict
// listing in package vault are built on it). What a format cannot read (a name that does not
// decrypt, a directory it cannot open) goes to problem (which may be nil) and is skipped; the
// walk goes on. showBadNames also visits the entries whose names do not decrypt, where the
// format can name them (see Volume.ReadDir). An error from fn, from ReadDir or of ctx ends
// the walk and is returned.
func Walk(ctx context.Context, vol Volume, fn func(Node) error, problem func(Problem), showBadNames bool) error {
	if problem == nil {
		problem = func(Problem) {}
	}
	root, err := vol.Root()
	if err != nil {
		problem(NewProblem("", "", KindIO, err.Error()))
		return nil
	}
	defer vol.CloseDir(root)
	w := &walker{vol: vol, fn: fn, problem: problem, showBadNames: showBadNames, entered: map[string]*entered{}}
	return w.walkDir(ctx, root, false)
}

// walker is one Walk. A hostile vault's folder can make an entry name its own ancestor (a walk
// without end) or many entries name one folder (each level doubling the work), so the walker
// keeps the Dir.Keys it entered (walkDir, enter).
type walker struct {
	vol          Volume
	fn           func(Node) error
	problem      func(Problem)
	showBadNames bool
	entered      map[string]*entered
	again        int // directories entered again, through conflict copies
}

// entered is a directory key the walk entered.
type entered struct {
	onPath  bool // being walked: entering it again would be a loop
	viaCopy bool // first entered through a sync tool's conflict copy of a directory
}

// enter decides whether the walk goes into sub, which node n names. A key on the path being
// walked is a loop; one walked before is a second entry of one directory, which only a sync
// tool's conflict copy of a directory makes (it names the same folder as the original, and
// may come first or second): its contents are walked again under the other name, up to a
// budget of a few times the number of directories, which no real vault exceeds and which
// keeps a hostile one's walk linear.
func (w *walker) enter(n Node, sub Dir) bool {
	e := w.entered[sub.Key]
	why := ""
	switch {
	case sub.Key == "" || e == nil:
		return true
	case e.onPath:
		why = "its own ancestor (a loop)"
	case n.Conflict == nil && !e.viaCopy:
		why = "a directory another entry names too"
	case w.again >= 4*len(w.entered)+64:
		why = "a directory walked already, once too many (conflict copies of conflict copies)"
	default:
		w.again++
	}
	if why != "" {
		w.problem(NewProblem(n.Path, n.CipherPath, KindDirID, "names the folder "+sub.Key+" of "+why))
		return false
	}
	return true
}

// walkDir walks the open directory d.
// viaCopy says that a sync tool's conflict copy of a directory names it.
func (w *walker) walkDir(ctx context.Context, d Dir, viaCopy bool) error {
	vol, fn, problem, showBadNames := w.vol, w.fn, w.problem, w.showBadNames
	if d.Key != "" {
		e := w.entered[d.Key]
		if e == nil {
			e = &entered{viaCopy: viaCopy}
			w.entered[d.Key] = e
		}
		e.onPath = true
		defer func() { e.onPath = false }()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	nodes, err := vol.ReadDir(d, showBadNames, problem)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		if err := fn(n); err != nil {
			return err
		}
		if !n.Info.IsDir() {
			continue
		}
		sub, err := vol.OpenDir(d, n)
		if err != nil {
			problem(dirProblem(n, err))
			continue
		}
		if !w.enter(n, sub) {
			vol.CloseDir(sub)
			continue
		}
		err = w.walkDir(ctx, sub, n.Conflict != nil)
		vol.CloseDir(sub)
		if err != nil {
			return err
		}
	}
	return nil
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
