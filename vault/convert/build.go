package convert

// Building the new vault (see the package doc): the scan of the old vault, the two ways to
// write the new one, and the check that reads it back.

import (
	"context"
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/text/unicode/norm"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault"
	"github.com/vaultui/vaultui/vault/format"
)

// build converts the vault of plan, after the plan and the recovery of Run.
func build(ctx context.Context, cipherdir string, plan *Plan, password []byte, opts Options) (*Result, error) {
	folder := &vault.Folder{Dir: plan.Dir, Format: plan.From.Format}
	to := plan.To.Format
	logN := opts.ScryptLogN
	if logN == 0 && plan.Rebuild {
		info, err := folder.Info()
		if err != nil {
			return nil, err
		}
		logN = min(max(info.ScryptLogN, to.ScryptLogN.Default, to.ScryptLogN.Min), to.ScryptLogN.Max)
	}
	old, err := folder.Unlock(ctx, password)
	if err != nil {
		return nil, err
	}
	defer old.Close()
	sc, err := scan(ctx, old, to, opts.DropUnsupported, !plan.Rebuild)
	if err != nil {
		return nil, err
	}
	res := &Result{Dir: plan.Dir, From: plan.From, To: plan.To, OldDir: plan.KeepOld, Lost: sc.lost}
	report := func(phase string, done int64) {
		if opts.Progress != nil {
			opts.Progress(Progress{Phase: phase, Done: done, Total: max(plan.PlainBytes, done)})
		}
	}
	err = into(cipherdir, plan, opts, res, func(newDir string) error {
		var nv vault.Volume
		if plan.Rebuild {
			pw := password
			if opts.NewPassword != nil {
				pw = opts.NewPassword
			}
			var keep vault.Volume
			if !plan.NewKey {
				keep = old
			}
			mk, err := to.CreateFor(ctx, newDir, plan.To.Cipher, pw, logN, keep)
			if err != nil {
				return err
			}
			res.MasterKey = mk
			// The new vault is opened as any vault is, with the password: its key file is
			// checked too.
			if nv, err = (&vault.Folder{Dir: newDir, Format: to}).Unlock(ctx, pw); err != nil {
				return fmt.Errorf("the new vault does not open with the password: %w", err)
			}
			defer nv.Close()
			rb := &rebuilder{ctx: ctx, old: old, b: nv.Builder(), to: to, sc: sc, report: report, links: map[[2]uint64]linked{}}
			if err := rb.copy(); err != nil {
				return err
			}
			res.Bytes, res.Left = rb.done, sc.foreign
		} else {
			r, err := folder.Reseal(ctx, password, newDir, plan.To.Cipher, func(done int64) { report(PhaseCopy, done) })
			if err != nil {
				return err
			}
			nv = r.Volume
			defer nv.Close()
			res.Bytes, res.Unchanged, res.Dropped = r.Bytes, r.Unchanged, r.Dropped
		}
		return check(ctx, nv, old.Folder(), sc, to, report)
	})
	if err != nil {
		if res.MasterKey != nil {
			crypto.Wipe(res.MasterKey)
		}
		return nil, err
	}
	return res, nil
}

// entry is what the check expects of an entry of the new vault: read from the old one.
type entry struct {
	mode   fs.FileMode
	mtime  int64 // nanoseconds
	size   int64
	sum    [sha256.Size]byte
	target string
	xattrs map[string][]byte
}

// scanned is what scan found in the old vault before anything was written.
type scanned struct {
	want    map[string]*entry // plaintext path -> what the check expects
	lost    []Unsupported
	skip    map[string]bool // paths not carried (a dropped directory's entries go with it)
	foreign []string        // cipher paths of files that are not the vault's
}

// scan walks the old vault for damage (which stops a conversion), for what the format to
// cannot hold (refused with an *UnsupportedError, or with drop left behind), and for what
// the check will expect of each entry: with content, also each file's content, which a
// reseal copies without it passing here.
func scan(ctx context.Context, old vault.Volume, to *vault.Format, drop, content bool) (*scanned, error) {
	sc := &scanned{want: map[string]*entry{}, skip: map[string]bool{}}
	var damage []vault.Problem
	problem := func(p vault.Problem) {
		switch {
		case p.Damage():
			damage = append(damage, p)
		case p.Kind == format.KindForeign:
			sc.foreign = append(sc.foreign, p.CipherPath)
		}
	}
	err := vault.WalkVolume(ctx, old, func(n vault.Node) error {
		if sc.skipped(n.Path) {
			return nil
		}
		lose := func(what string, whole bool) {
			sc.lost = append(sc.lost, Unsupported{Path: n.Path, What: what})
			if whole {
				sc.skip[n.Path] = true
			}
		}
		t := n.Info.Mode().Type()
		if to.Can.NFCNames && !norm.NFC.IsNormalString(path.Base(n.Path)) {
			lose("a name not in Unicode NFC (a "+to.Name+" vault stores names in NFC)", true)
			return nil
		}
		if format.IsSpecial(t) && !to.Can.SpecialFiles {
			lose(specialName(t), true)
			return nil
		}
		if st, ok := n.Info.Sys().(*syscall.Stat_t); ok && t.IsRegular() && st.Nlink > 1 && !to.Can.HardLinks {
			lose(fmt.Sprintf("a hard link (%d names; each would be a copy)", st.Nlink), false)
		}
		w := &entry{mode: n.Info.Mode(), mtime: n.Info.ModTime().UnixNano()}
		if x := old.Xattrs(n, problem); to.Can.Xattrs {
			w.xattrs = x
		} else if len(x) > 0 {
			lose("extended attributes "+strings.Join(slices.Sorted(maps.Keys(x)), ", "), false)
		}
		switch {
		case t == fs.ModeSymlink:
			var err error
			if w.target, err = old.Readlink(n); err != nil {
				problem(format.NewProblem(n.Path, n.CipherPath, format.KindSymlink, err.Error()))
			}
		case t.IsRegular() && content:
			h := sha256.New()
			w.size, _ = vault.DecryptFile(ctx, old, n, hashInto(h), problem)
			if err := ctx.Err(); err != nil {
				return err
			}
			w.sum = [sha256.Size]byte(h.Sum(nil))
		}
		sc.want[n.Path] = w
		return nil
	}, problem)
	if err != nil {
		return nil, err
	}
	if len(damage) > 0 {
		return nil, fmt.Errorf("%s: %w: %s; nothing was changed (run vaultui fsck)", old.Folder(), vault.ErrCorrupt, damage[0])
	}
	if len(sc.lost) > 0 && !drop {
		return nil, &UnsupportedError{Format: to, Items: sc.lost}
	}
	return sc, nil
}

// skipped reports whether p, or a directory above it, is not carried.
func (sc *scanned) skipped(p string) bool {
	for ; p != "." && p != "/" && p != ""; p = path.Dir(p) {
		if sc.skip[p] {
			return true
		}
	}
	return false
}

func specialName(t fs.FileMode) string {
	switch {
	case t == fs.ModeNamedPipe:
		return "a FIFO"
	case t == fs.ModeSocket:
		return "a socket"
	}
	return "a device node"
}

// rebuilder copies an unlocked vault into a new one through its plaintext.
type rebuilder struct {
	ctx    context.Context
	old    vault.Volume
	b      format.Builder
	to     *vault.Format
	sc     *scanned
	report func(phase string, done int64)
	done   int64
	links  map[[2]uint64]linked // (dev, inode) of multiply linked files -> the new file
	dirs   []madeDir            // the directories being filled, outermost first
}

// linked is a file made with a second name to come (hard links), and what it holds.
type linked struct {
	m format.Made
	w *entry
}

type madeDir struct {
	path string
	m    format.Made
	info fs.FileInfo
}

// leave gives the directories being filled that p is not in their attributes: after their
// entries, which change their times.
func (rb *rebuilder) leave(p string) error {
	for len(rb.dirs) > 0 {
		d := rb.dirs[len(rb.dirs)-1]
		if p != "" && strings.HasPrefix(p, d.path+"/") {
			return nil
		}
		rb.dirs = rb.dirs[:len(rb.dirs)-1]
		if err := rb.b.SetAttrs(d.m, d.info); err != nil {
			return fmt.Errorf("%s: %w", d.path, err)
		}
	}
	return nil
}

func (rb *rebuilder) copy() error {
	rb.report(PhaseCopy, 0)
	err := vault.WalkVolume(rb.ctx, rb.old, func(n vault.Node) error {
		w, ok := rb.sc.want[n.Path]
		if !ok {
			return nil // not carried
		}
		if err := rb.leave(n.Path); err != nil {
			return err
		}
		parent := rb.b.Root()
		if len(rb.dirs) > 0 {
			parent = rb.dirs[len(rb.dirs)-1].m
		}
		if err := rb.entry(parent, n, w); err != nil {
			return fmt.Errorf("%s: %w", n.Path, err)
		}
		return nil
	}, func(vault.Problem) {
		// Damage met now (a block) stops the copy through the content's reader; what the
		// scan saw is known.
	})
	if err != nil {
		return err
	}
	return rb.leave("")
}

// entry makes n in the directory parent, as scanned in w; a file's content fills in w.
func (rb *rebuilder) entry(parent format.Made, n vault.Node, w *entry) error {
	name := path.Base(n.Path)
	info := n.Info
	var m format.Made
	var err error
	switch t := info.Mode().Type(); {
	case t.IsDir():
		if m, err = rb.b.Mkdir(parent, name); err != nil {
			return err
		}
		rb.dirs = append(rb.dirs, madeDir{n.Path, m, info})
	case t.IsRegular():
		st, _ := info.Sys().(*syscall.Stat_t)
		var key [2]uint64
		if st != nil && st.Nlink > 1 && rb.to.Can.HardLinks {
			key = [2]uint64{uint64(st.Dev), st.Ino}
			if first, ok := rb.links[key]; ok {
				if m, err = rb.b.Link(parent, name, first.m); err != nil {
					return err
				}
				w.size, w.sum = first.w.size, first.w.sum
				break
			}
		}
		if m, err = rb.file(parent, name, n, w); err != nil {
			return err
		}
		if key != [2]uint64{} {
			rb.links[key] = linked{m, w}
		}
	case t == fs.ModeSymlink:
		if m, err = rb.b.Symlink(parent, name, w.target); err != nil {
			return err
		}
	case format.IsSpecial(t):
		var rdev uint64
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			rdev = st.Rdev
		}
		if m, err = rb.b.Mknod(parent, name, info.Mode(), rdev); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%w: file type %v", vault.ErrUnsupported, t)
	}
	for _, k := range slices.Sorted(maps.Keys(w.xattrs)) {
		if err := rb.b.SetXattr(m, k, w.xattrs[k]); err != nil {
			return err
		}
	}
	if !info.IsDir() {
		return rb.b.SetAttrs(m, info)
	}
	return nil
}

// file copies the content of the old file n into the new file name of parent: decrypted by
// the walker's reader (every block authenticated; one that does not stops the copy), hashed
// for the check, and encrypted by the builder as it is read.
func (rb *rebuilder) file(parent format.Made, name string, n vault.Node, w *entry) (format.Made, error) {
	pr, pw := io.Pipe()
	h := sha256.New()
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var damage []vault.Problem
		size, err := vault.DecryptFile(rb.ctx, rb.old, n, func(_ int64, b []byte) error {
			h.Write(b)
			rb.done += int64(len(b))
			if _, err := pw.Write(b); err != nil {
				return err
			}
			rb.report(PhaseCopy, rb.done)
			return nil
		}, func(p vault.Problem) {
			if p.Damage() {
				damage = append(damage, p)
			}
		})
		if err == nil && len(damage) > 0 {
			err = fmt.Errorf("%s: %w: %s; nothing was changed (run vaultui fsck)", rb.old.Folder(), vault.ErrCorrupt, damage[0])
		}
		w.size = size
		pw.CloseWithError(err)
	}()
	m, err := rb.b.WriteFile(parent, name, pr)
	pr.CloseWithError(io.ErrClosedPipe) // a builder that stopped reading stops the reader
	<-finished
	if err != nil {
		return nil, err
	}
	w.sum = [sha256.Size]byte(h.Sum(nil))
	return m, nil
}

// check reads the new vault nv back completely through its format's reader (the walker:
// every name, block and symlink target decrypted and authenticated) and compares it with
// what scan (and a rebuild's copy) read from the old vault at oldDir: the same entries, each
// of the same type, time, content, target, and (where the format to keeps them) permission
// bits and attributes.
func check(ctx context.Context, nv vault.Volume, oldDir string, sc *scanned, to *vault.Format, report func(string, int64)) error {
	var problems []vault.Problem
	addProblem := func(p vault.Problem) {
		if p.Damage() {
			problems = append(problems, p)
		}
	}
	failed := func() error {
		return fmt.Errorf("%s: %w: the converted vault fails its check: %s; nothing was changed", oldDir, vault.ErrCorrupt, problems[0])
	}
	mismatch := func(p, what string) error {
		return fmt.Errorf("%s: the converted vault does not match the old one at %s: %s; nothing was changed", oldDir, p, what)
	}
	seen := map[string]bool{}
	var done int64
	report(PhaseCheck, 0)
	err := vault.WalkVolume(ctx, nv, func(n vault.Node) error {
		w, ok := sc.want[n.Path]
		if !ok || seen[n.Path] {
			return mismatch(n.Path, "an entry the old vault does not have")
		}
		seen[n.Path] = true
		mode := n.Info.Mode()
		if mode.Type() != w.mode.Type() {
			return mismatch(n.Path, fmt.Sprintf("type %v, was %v", mode.Type(), w.mode.Type()))
		}
		const perm = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky
		if to.Can.Modes && mode.Type() != fs.ModeSymlink && mode&perm != w.mode&perm {
			return mismatch(n.Path, fmt.Sprintf("mode %v, was %v", mode, w.mode))
		}
		if n.Info.ModTime().UnixNano() != w.mtime {
			return mismatch(n.Path, "modification time differs")
		}
		switch {
		case mode.IsRegular():
			h := sha256.New()
			size, _ := vault.DecryptFile(ctx, nv, n, hashInto(h), addProblem)
			if err := ctx.Err(); err != nil {
				return err
			}
			if size != w.size || [sha256.Size]byte(h.Sum(nil)) != w.sum {
				return mismatch(n.Path, "content differs")
			}
			done += size
			report(PhaseCheck, done)
		case mode.Type() == fs.ModeSymlink:
			t, err := nv.Readlink(n)
			if err != nil {
				addProblem(format.NewProblem(n.Path, n.CipherPath, format.KindSymlink, err.Error()))
			} else if t != w.target {
				return mismatch(n.Path, "symlink target differs")
			}
		}
		if to.Can.Xattrs {
			x := nv.Xattrs(n, addProblem)
			if len(x) != len(w.xattrs) {
				return mismatch(n.Path, "extended attributes differ")
			}
			for k, v := range w.xattrs {
				if got, ok := x[k]; !ok || string(got) != string(v) {
					return mismatch(n.Path, fmt.Sprintf("extended attribute %q differs", k))
				}
			}
		}
		if len(problems) > 0 {
			return failed()
		}
		return nil
	}, addProblem)
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return failed()
	}
	for _, p := range slices.Sorted(maps.Keys(sc.want)) {
		if !seen[p] {
			return mismatch(p, "missing in the converted vault")
		}
	}
	return nil
}

func hashInto(h hash.Hash) func(int64, []byte) error {
	return func(_ int64, b []byte) error {
		h.Write(b)
		return nil
	}
}
