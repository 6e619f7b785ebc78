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
	return walkDir(ctx, vol, root, fn, problem, showBadNames)
}

// walkDir walks the open directory d.
func walkDir(ctx context.Context, vol Volume, d Dir, fn func(Node) error, problem func(Problem), showBadNames bool) error {
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
		err = walkDir(ctx, vol, sub, fn, problem, showBadNames)
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
