package vault

// Rebuilding a vault through its plaintext: the conversion into another format (gocryptfs to
// Cryptomator and back), and within a format that cannot reseal its files in place
// (Cryptomator's SIV_CTRMAC to SIV_GCM). It is written against the format model alone: the
// old vault is read through its Volume (the offline walker's), the new one is made by its
// format (folderKind.createFor) and written through its format.Builder, then read back
// through its own Volume, unlocked with the password, and compared with what was read from
// the old one. What the new format cannot hold is found from the table's capabilities
// before anything is written.

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
	"golang.org/x/text/unicode/norm"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/format"
	"github.com/vaultui/vaultui/vault/layout"
)

// Unsupported is an entry of the old vault the new format cannot hold: its plaintext path
// and what it is ("a FIFO", "a hard link (2 names)", "extended attributes user.a").
type Unsupported struct {
	Path, What string
}

func (u Unsupported) String() string { return u.Path + ": " + u.What }

// UnsupportedError is Convert's refusal of a vault holding entries its new format cannot
// hold (ConvertOptions.DropUnsupported carries the vault without them). It wraps
// ErrUnsupported.
type UnsupportedError struct {
	Format *Format
	Items  []Unsupported
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("%d %s a %s vault cannot hold (first: %s); nothing was changed",
		len(e.Items), plural(len(e.Items), "entry", "entries"), e.Format.Name, e.Items[0])
}

func (e *UnsupportedError) Unwrap() error { return ErrUnsupported }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// cannotHold lists what a vault of format from can hold and one of format to cannot.
func cannotHold(from, to *Format) []string {
	var out []string
	for _, c := range []struct {
		from, to bool
		what     string
	}{
		{from.Can.HardLinks, to.Can.HardLinks, "hard links"},
		{from.Can.SpecialFiles, to.Can.SpecialFiles, "FIFOs, sockets and device nodes"},
		{from.Can.Xattrs, to.Can.Xattrs, "extended attributes"},
		{from.Can.Modes, to.Can.Modes, "permission bits and owners"},
		{from.Can.Holes, to.Can.Holes, "holes (sparse files take their full size)"},
		{!from.Can.NFCNames, !to.Can.NFCNames, "names not in Unicode NFC"},
	} {
		if c.from && !c.to {
			out = append(out, c.what)
		}
	}
	return out
}

// measureRebuild estimates, without the key, what a rebuilt vault takes: the old vault's
// regular files at their full size (a format without holes fills them) plus a little for
// headers and tags, and a block for every other entry, twice (a directory, its name or ID
// file).
func (p *ConvertPlan) measureRebuild(bsize uint64) error {
	round := func(n uint64) uint64 { return (n + bsize - 1) / bsize * bsize }
	fd, err := unix.Open(p.Dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", p.Dir, err)
	}
	defer unix.Close(fd)
	var walk func(dirfd int) error
	walk = func(dirfd int) error {
		names, err := layout.ReadDirNames(dirfd)
		if err != nil {
			return err
		}
		p.NeedBytes += 2 * bsize
		for _, name := range names {
			var st unix.Stat_t
			if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			switch st.Mode & unix.S_IFMT {
			case unix.S_IFDIR:
				cfd, err := layout.OpenDir(dirfd, name)
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				err = walk(cfd)
				unix.Close(cfd)
				if err != nil {
					return err
				}
			case unix.S_IFREG:
				size := uint64(st.Size)
				p.PlainBytes += int64(size)
				p.Files++
				p.NeedBytes += round(size+size/64+128) + bsize
			default:
				p.NeedBytes += 2 * bsize
			}
		}
		return nil
	}
	if err := walk(fd); err != nil {
		return fmt.Errorf("%s: %w", p.Dir, err)
	}
	return nil
}

// rebuildScan is what rebuild found in the old vault before writing anything.
type rebuildScan struct {
	lost    []Unsupported
	skip    map[string]bool // paths not carried (a dropped directory's entries go with it)
	foreign []string        // cipher paths of files that are not the vault's
}

// scanRebuild walks the old vault for damage (which stops a conversion) and for what the
// format to cannot hold: refused with an *UnsupportedError, or with drop left behind.
func scanRebuild(ctx context.Context, old Volume, to *Format, drop bool) (*rebuildScan, error) {
	sc := &rebuildScan{skip: map[string]bool{}}
	var damage []Problem
	problem := func(p Problem) {
		switch {
		case p.Damage():
			damage = append(damage, p)
		case p.Kind == KindForeign:
			sc.foreign = append(sc.foreign, p.CipherPath)
		}
	}
	err := walkVolume(ctx, old, func(n Node) error {
		if sc.skipped(n.Path) {
			return nil
		}
		lose := func(what string, entry bool) {
			sc.lost = append(sc.lost, Unsupported{Path: n.Path, What: what})
			if entry {
				sc.skip[n.Path] = true
			}
		}
		t := n.Info.Mode().Type()
		if to.Can.NFCNames && !norm.NFC.IsNormalString(path.Base(n.Path)) {
			lose("a name not in Unicode NFC (a "+to.Name+" vault stores names in NFC)", true)
			return nil
		}
		if isSpecial(t) && !to.Can.SpecialFiles {
			lose(specialName(t), true)
			return nil
		}
		if st, ok := n.Info.Sys().(*syscall.Stat_t); ok && t.IsRegular() && st.Nlink > 1 && !to.Can.HardLinks {
			lose(fmt.Sprintf("a hard link (%d names; each would be a copy)", st.Nlink), false)
		}
		if !to.Can.Xattrs {
			if x := old.Xattrs(n, problem); len(x) > 0 {
				lose("extended attributes "+strings.Join(slices.Sorted(maps.Keys(x)), ", "), false)
			}
		}
		return nil
	}, problem, false)
	if err != nil {
		return nil, err
	}
	if len(damage) > 0 {
		return nil, fmt.Errorf("%s: %w: %s; nothing was changed (run vaultui fsck)", old.Folder(), ErrCorrupt, damage[0])
	}
	if len(sc.lost) > 0 && !drop {
		return nil, &UnsupportedError{Format: to, Items: sc.lost}
	}
	return sc, nil
}

// skipped reports whether p, or a directory above it, is not carried.
func (sc *rebuildScan) skipped(p string) bool {
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

// rebuiltEntry is what the check expects of an entry of the new vault: read from the old one.
type rebuiltEntry struct {
	mode   fs.FileMode
	mtime  int64 // nanoseconds
	size   int64
	sum    [sha256.Size]byte
	target string
	xattrs map[string][]byte
}

// rebuild converts through the plaintext (see the top of this file).
func rebuild(ctx context.Context, cipherdir string, plan *ConvertPlan, password []byte, opts ConvertOptions) (*ConvertResult, error) {
	folder := &Folder{Dir: plan.Dir, Format: plan.From.Format}
	oldInfo, err := folder.Info()
	if err != nil {
		return nil, err
	}
	old, err := folder.Unlock(ctx, password)
	if err != nil {
		return nil, err
	}
	defer old.Close()
	to := plan.To.Format
	sc, err := scanRebuild(ctx, old, to, opts.DropUnsupported)
	if err != nil {
		return nil, err
	}
	res := &ConvertResult{Dir: plan.Dir, From: plan.From, To: plan.To, OldDir: plan.KeepOld, Lost: sc.lost, Left: sc.foreign}
	pw := password
	if opts.NewPassword != nil {
		pw = opts.NewPassword
	}
	logN := opts.ScryptLogN
	if logN == 0 {
		logN = min(max(resealCost(0, oldInfo.ScryptLogN, to.ScryptLogN.Default), to.ScryptLogN.Min), to.ScryptLogN.Max)
	}
	var keep Volume
	if !plan.NewKey {
		keep = old
	}
	err = convertInto(cipherdir, plan, opts, res, func(newDir string) error {
		mk, err := to.kind.createFor(ctx, newDir, plan.To.Cipher, pw, logN, keep)
		if err != nil {
			return err
		}
		res.MasterKey = mk
		// The new vault is opened as any vault is, with the password: its key file is
		// checked too.
		nv, err := (&Folder{Dir: newDir, Format: to}).Unlock(ctx, pw)
		if err != nil {
			return fmt.Errorf("the new vault does not open with the password: %w", err)
		}
		defer nv.Close()
		rb := &rebuilder{ctx: ctx, old: old, b: nv.Builder(), to: to, sc: sc, progress: opts.Progress,
			total: plan.PlainBytes, want: map[string]*rebuiltEntry{}, links: map[[2]uint64]format.Made{}}
		if err := rb.copy(); err != nil {
			return err
		}
		res.Bytes = rb.done
		return rb.check(nv)
	})
	if err != nil {
		if res.MasterKey != nil {
			crypto.Wipe(res.MasterKey)
		}
		return nil, err
	}
	return res, nil
}

// rebuilder copies an unlocked vault into a new one through its plaintext.
type rebuilder struct {
	ctx         context.Context
	old         Volume
	b           format.Builder
	to          *Format
	sc          *rebuildScan
	progress    func(ConvertProgress)
	done, total int64
	want        map[string]*rebuiltEntry  // plaintext path -> what the check expects
	links       map[[2]uint64]format.Made // (dev, inode) of multiply linked files -> the new file
	dirs        []madeDir                 // the directories being filled, outermost first
	linked      []linkedFile
}

type madeDir struct {
	path string
	m    format.Made
	info fs.FileInfo
}

func (rb *rebuilder) report(phase string, done int64) {
	if rb.progress != nil {
		rb.progress(ConvertProgress{Phase: phase, Done: done, Total: max(rb.total, done)})
	}
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
	err := walkVolume(rb.ctx, rb.old, func(n Node) error {
		if rb.sc.skipped(n.Path) {
			return nil
		}
		if err := rb.leave(n.Path); err != nil {
			return err
		}
		parent := rb.b.Root()
		if len(rb.dirs) > 0 {
			parent = rb.dirs[len(rb.dirs)-1].m
		}
		if err := rb.entry(parent, n); err != nil {
			return fmt.Errorf("%s: %w", n.Path, err)
		}
		return nil
	}, func(p Problem) {
		// Damage met now (a block) stops the copy through the content's reader; what the
		// scan saw is known.
	}, false)
	if err != nil {
		return err
	}
	return rb.leave("")
}

// entry makes n in the directory parent and records what the check expects of it.
func (rb *rebuilder) entry(parent format.Made, n Node) error {
	name := path.Base(n.Path)
	info := n.Info
	w := &rebuiltEntry{mode: info.Mode(), mtime: info.ModTime().UnixNano()}
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
				if m, err = rb.b.Link(parent, name, first); err != nil {
					return err
				}
				if first := rb.linkedEntry(first); first != nil {
					w.size, w.sum = first.size, first.sum
				}
				break
			}
		}
		if m, err = rb.file(parent, name, n, w); err != nil {
			return err
		}
		if key != [2]uint64{} {
			rb.links[key] = m
			rb.linked = append(rb.linked, linkedFile{m, w})
		}
	case t == fs.ModeSymlink:
		if w.target, err = rb.old.Readlink(n); err != nil {
			return fmt.Errorf("%w: the symlink target does not decrypt: %v", ErrCorrupt, err)
		}
		if m, err = rb.b.Symlink(parent, name, w.target); err != nil {
			return err
		}
	case isSpecial(t):
		var rdev uint64
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			rdev = st.Rdev
		}
		if m, err = rb.b.Mknod(parent, name, info.Mode(), rdev); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%w: file type %v", ErrUnsupported, t)
	}
	if rb.to.Can.Xattrs {
		var bad []Problem
		w.xattrs = rb.old.Xattrs(n, func(p Problem) { bad = append(bad, p) })
		if len(bad) > 0 {
			return fmt.Errorf("%w: %s", ErrCorrupt, bad[0])
		}
		for _, k := range slices.Sorted(maps.Keys(w.xattrs)) {
			if err := rb.b.SetXattr(m, k, w.xattrs[k]); err != nil {
				return err
			}
		}
	}
	if !info.IsDir() {
		if err := rb.b.SetAttrs(m, info); err != nil {
			return err
		}
	}
	rb.want[n.Path] = w
	return nil
}

// linkedFile is a file made with a second name to come (hard links), and what it holds.
type linkedFile struct {
	m format.Made
	w *rebuiltEntry
}

func (rb *rebuilder) linkedEntry(m format.Made) *rebuiltEntry {
	for _, l := range rb.linked {
		if l.m == m {
			return l.w
		}
	}
	return nil
}

// file copies the content of the old file n into the new file name of parent: decrypted by
// the walker's reader (every block authenticated; one that does not stops the copy), hashed
// for the check, and encrypted by the builder as it is read.
func (rb *rebuilder) file(parent format.Made, name string, n Node, w *rebuiltEntry) (format.Made, error) {
	pr, pw := io.Pipe()
	h := sha256.New()
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var damage []Problem
		size, err := decryptVolumeFile(rb.ctx, rb.old, n, func(_ int64, b []byte) error {
			h.Write(b)
			rb.done += int64(len(b))
			if _, err := pw.Write(b); err != nil {
				return err
			}
			rb.report(PhaseCopy, rb.done)
			return nil
		}, func(p Problem) {
			if p.Damage() {
				damage = append(damage, p)
			}
		}, nil)
		if err == nil && len(damage) > 0 {
			err = fmt.Errorf("%s: %w: %s; nothing was changed (run vaultui fsck)", rb.old.Folder(), ErrCorrupt, damage[0])
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
	copy(w.sum[:], h.Sum(nil))
	return m, nil
}

// check reads the new vault nv back completely through its format's reader (the walker:
// every name, block and symlink target decrypted and authenticated) and compares it with
// what was read from the old vault: the same entries, each of the same type, time, content,
// target, and (where the new format keeps them) permission bits and attributes.
func (rb *rebuilder) check(nv Volume) error {
	var problems []Problem
	addProblem := func(p Problem) {
		if p.Damage() {
			problems = append(problems, p)
		}
	}
	mismatch := func(p, what string) error {
		return fmt.Errorf("%s: the converted vault does not match the old one at %s: %s; nothing was changed", rb.old.Folder(), p, what)
	}
	seen := map[string]bool{}
	var done int64
	rb.report(PhaseCheck, 0)
	err := walkVolume(rb.ctx, nv, func(n Node) error {
		w, ok := rb.want[n.Path]
		if !ok || seen[n.Path] {
			return mismatch(n.Path, "an entry the old vault does not have")
		}
		seen[n.Path] = true
		mode := n.Info.Mode()
		if mode.Type() != w.mode.Type() {
			return mismatch(n.Path, fmt.Sprintf("type %v, was %v", mode.Type(), w.mode.Type()))
		}
		const perm = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky
		if rb.to.Can.Modes && mode.Type() != fs.ModeSymlink && mode&perm != w.mode&perm {
			return mismatch(n.Path, fmt.Sprintf("mode %v, was %v", mode, w.mode))
		}
		if n.Info.ModTime().UnixNano() != w.mtime {
			return mismatch(n.Path, "modification time differs")
		}
		switch {
		case mode.IsRegular():
			h := sha256.New()
			size, _ := decryptVolumeFile(rb.ctx, nv, n, hashInto(h), addProblem, nil)
			if err := rb.ctx.Err(); err != nil {
				return err
			}
			if size != w.size || [sha256.Size]byte(h.Sum(nil)) != w.sum {
				return mismatch(n.Path, "content differs")
			}
			done += size
			rb.report(PhaseCheck, done)
		case mode.Type() == fs.ModeSymlink:
			t, err := nv.Readlink(n)
			if err != nil {
				addProblem(newProblem(n.Path, n.CipherPath, KindSymlink, errDetail(err)))
			} else if t != w.target {
				return mismatch(n.Path, "symlink target differs")
			}
		}
		if rb.to.Can.Xattrs {
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
			return fmt.Errorf("%s: %w: the converted vault fails its check: %s; nothing was changed", rb.old.Folder(), ErrCorrupt, problems[0])
		}
		return nil
	}, addProblem, false)
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s: %w: the converted vault fails its check: %s; nothing was changed", rb.old.Folder(), ErrCorrupt, problems[0])
	}
	if len(seen) != len(rb.want) {
		for _, p := range slices.Sorted(maps.Keys(rb.want)) {
			if !seen[p] {
				return mismatch(p, "missing in the converted vault")
			}
		}
	}
	return nil
}
