package gocryptfs

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/format"
	"github.com/vaultui/vaultui/vault/layout"
)

// conflictOfFormatFile describes a conflict copy of the vault's own files in directory cdir.
func conflictOfFormatFile(c layout.Conflict, cdir string) string {
	what := fmt.Sprintf("%s's conflict copy of %s", c.Tool, c.Base)
	if c.Date != "" {
		what += " from " + c.Date
	}
	switch {
	case c.Base == crypto.ConfName:
		return what + "; the vault uses " + crypto.ConfName + " (if the password was changed on two machines, the other password opens the copy)"
	case c.Base == crypto.DirIVName:
		return what + " (the folder was made on two computers); what was made in it on the other computer is encrypted under the copy's IV and shows as conflict copies: merge it into the folder with \"vaultui conflicts --keep both VAULT FOLDER\""
	}
	return what + " (a long name's .name file; harmless)"
}

// looksEncrypted reports whether name could be an encrypted name of the format: the format's
// own files, or base64url of a multiple of 16 bytes.
func looksEncrypted(name string) bool {
	if strings.HasPrefix(name, crypto.LongNamePrefix) || strings.HasPrefix(name, "gocryptfs.") {
		return true
	}
	n := len(strings.TrimRight(name, "="))
	for _, r := range name[:n] {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return n*6/8%16 == 0 && n > 0
}

// SplitFolder is a folder made on two computers, as the walk found it (see
// format.ConflictFolderMadeTwice): its directory, the tool's copies of its gocryptfs.diriv
// and the entries made under them. It is valid during the walk's call for it only.
type SplitFolder struct {
	Path, CipherPath string // the folder's plaintext and cipher paths
	Copies           []DirIVCopy
	Entries          []format.Node // Kind format.ConflictMadeInSecondFolder
	dirfd            int
}

// DirIVCopy is a sync tool's conflict copy of a directory's gocryptfs.diriv.
type DirIVCopy struct {
	Name string
	iv   []byte // nil when the copy is not 16 bytes: then no entry is placed under it
	Info fs.FileInfo
	layout.Conflict
}

// readDir lists the directory open at dirfd (cipher and plaintext paths cdir and pdir) in
// plaintext name order, with its conflict copies; split is set when the folder was made on
// two computers. ok is false when its names cannot be read at all (reported to problem).
// badNames adds the entries whose names do not decrypt (see addConflicts).
func (v *Vault) readDir(dirfd int, cdir, pdir string, problem func(format.Problem), badNames bool) (nodes []format.Node, split *SplitFolder, ok bool) {
	names, err := layout.ReadDirNames(dirfd)
	if err != nil {
		problem(format.NewProblem(pdir, cdir, format.KindIO, err.Error()))
		return nil, nil, false
	}
	var iv []byte
	if v.Names != nil {
		if iv, err = v.DirIVAt(dirfd); err != nil {
			problem(format.NewProblem(pdir, path.Join(cdir, crypto.DirIVName), format.KindDirIV,
				"cannot decrypt the names in this directory: "+format.Detail(err)))
			return nil, nil, false
		}
	}
	copies := v.dirIVCopies(dirfd, cdir, pdir, names, problem)
	nodes = make([]format.Node, 0, len(names))
	var failed []string
	var failedErr []error
	var second []secondEntry
	for _, name := range names {
		if v.hidden(cdir, name) {
			continue
		}
		plain := name
		if v.Names != nil {
			if slices.ContainsFunc(copies, func(c DirIVCopy) bool { return c.Name == name }) {
				continue
			}
			plain, err = v.DecryptEntryName(dirfd, name, iv)
			if e, ok := v.madeUnderCopy(dirfd, name, plain, err == nil, copies); ok {
				second = append(second, e)
				continue
			}
			if err != nil {
				failed, failedErr = append(failed, name), append(failedErr, err)
				continue
			}
		}
		nodes = v.appendNode(nodes, dirfd, cdir, pdir, name, plain, nil, problem)
	}
	taken := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		taken[path.Base(n.Path)] = true
	}
	if len(failed) > 0 {
		nodes = v.addConflicts(dirfd, cdir, pdir, iv, nodes, taken, failed, failedErr, problem, badNames)
	}
	if len(copies) > 0 {
		split = &SplitFolder{Path: pdir, CipherPath: cdir, Copies: copies, dirfd: dirfd}
		for _, e := range second {
			shown := layout.ConflictName(e.plain, e.c, func(s string) bool { return taken[s] })
			taken[shown] = true
			before := len(nodes)
			nodes = v.appendNode(nodes, dirfd, cdir, pdir, e.name, shown,
				&format.Conflict{Kind: format.ConflictMadeInSecondFolder, Of: path.Join(pdir, e.plain), Conflict: e.c}, problem)
			if len(nodes) > before {
				split.Entries = append(split.Entries, nodes[len(nodes)-1])
			}
		}
	}
	slices.SortFunc(nodes, func(a, b format.Node) int { return strings.Compare(a.Path, b.Path) })
	return nodes, split, true
}

// dirIVCopies finds the sync tools' conflict copies of the directory's gocryptfs.diriv among
// names (a folder made on two computers) and notes each for fsck.
func (v *Vault) dirIVCopies(dirfd int, cdir, pdir string, names []string, problem func(format.Problem)) []DirIVCopy {
	if v.Names == nil || v.Config.DeterministicNames() {
		return nil // no gocryptfs.diriv files, so no copies of one
	}
	var out []DirIVCopy
	for _, name := range names {
		c, ok := layout.ParseConflict(name, func(base string) bool { return base == crypto.DirIVName })
		if !ok {
			continue
		}
		problem(format.NewProblem(pdir, path.Join(cdir, name), format.KindConflict, conflictOfFormatFile(c, cdir)))
		info, err := LstatAt(dirfd, name)
		if err != nil {
			problem(format.NewProblem(pdir, path.Join(cdir, name), format.KindIO, err.Error()))
			continue
		}
		iv, _ := layout.ReadDirIVFile(dirfd, name)
		out = append(out, DirIVCopy{Name: name, iv: iv, Info: info, Conflict: c})
	}
	return out
}

// secondEntry is an entry whose name is encrypted under the IV of a diriv copy.
type secondEntry struct {
	name, plain string
	c           layout.Conflict
}

// madeUnderCopy reports whether the entry name was made under the IV of one of the diriv
// copies. Under a wrong IV a name still decrypts about once in 256 (its padding happens to
// check), so a name that decrypts under both IVs goes by which gives a plausible name
// (layout.PlausibleName: valid UTF-8 without control characters, as names people and programs
// give are); when that does not tell them apart, the folder's own IV wins (plain and realOK
// are what it gives). Guessing wrong would give the entry a garbled name for good once the
// folder is merged. The mount decides the same way (vfs gocryptfsTree.listed).
func (v *Vault) madeUnderCopy(dirfd int, name, plain string, realOK bool, copies []DirIVCopy) (secondEntry, bool) {
	if realOK && layout.PlausibleName(plain) {
		return secondEntry{}, false
	}
	for _, c := range copies {
		if c.iv == nil {
			continue
		}
		if p, err := layout.EntryUnderIV(dirfd, name, c.iv, v.Names); err == nil && (!realOK || layout.PlausibleName(p)) {
			return secondEntry{name: name, plain: p, c: c.Conflict}, true
		}
	}
	return secondEntry{}, false
}

// addConflicts places the entries whose names did not decrypt: sync tools' conflict copies show
// under a readable name beside their original (as in the mount); names that are not even
// base64 are foreign files (notes, not damage); the rest are damaged names. taken holds the
// names already shown in the directory. With badNames, damaged names are also visited under
// layout.BadName's name (reported all the same, with that path).
func (v *Vault) addConflicts(dirfd int, cdir, pdir string, iv []byte, nodes []format.Node, taken map[string]bool, failed []string, failedErr []error, problem func(format.Problem), badNames bool) []format.Node {
	for i, name := range failed {
		cpath := path.Join(cdir, name)
		c, plain, _, ok := layout.ConflictCopy(dirfd, name, iv, v.Names, cdir == "")
		switch {
		case ok && plain == "":
			problem(format.NewProblem(pdir, cpath, format.KindConflict, conflictOfFormatFile(c, cdir)))
		case ok:
			shown := layout.ConflictName(plain, c, func(s string) bool { return taken[s] })
			taken[shown] = true
			nodes = v.appendNode(nodes, dirfd, cdir, pdir, name, shown, &format.Conflict{Kind: format.ConflictCopyOfEntry, Of: path.Join(pdir, plain), Conflict: c}, problem)
		case layout.IsTemp(name):
			problem(format.NewProblem(pdir, cpath, format.KindTemp, "a directory the mount was making or removing when it stopped; it holds none of the vault's content and the mount hides it (safe to delete)"))
		case !looksEncrypted(name):
			problem(format.NewProblem(pdir, cpath, format.KindForeign, "not a name of the vault's format (a file put into the cipherdir by hand or by a sync tool); the mount hides it"))
		default:
			kind := format.KindName
			if crypto.IsLongName(name) {
				kind = format.KindLongName
			}
			p := format.NewProblem(pdir, cpath, kind, format.Detail(failedErr[i]))
			if shown := layout.BadName(name, iv, v.Names); badNames && !taken[shown] {
				taken[shown] = true
				p.Path = path.Join(pdir, shown)
				p.Detail += "; shown as " + strconv.Quote(shown)
				nodes = v.appendNode(nodes, dirfd, cdir, pdir, name, shown, nil, problem)
			}
			problem(p)
		}
	}
	return nodes
}

// appendNode stats the entry name in dirfd (shown as plain) and appends it to nodes.
func (v *Vault) appendNode(nodes []format.Node, dirfd int, cdir, pdir, name, plain string, c *format.Conflict, problem func(format.Problem)) []format.Node {
	cpath := path.Join(cdir, name)
	info, err := LstatAt(dirfd, name)
	if err != nil {
		problem(format.NewProblem(path.Join(pdir, plain), cpath, format.KindIO, err.Error()))
		return nodes
	}
	return append(nodes, format.Node{Path: path.Join(pdir, plain), CipherPath: cpath, Info: info, Conflict: c, Ref: Ref{dirfd, name}})
}

// PathNames maps this vault's paths between the plaintext view and the cipherdir.
func (v *Vault) PathNames() layout.PathNames {
	return layout.PathNames{Names: v.Names, PerDirIV: v.Config.Has(FlagDirIV)}
}

// DirIVAt returns the name IV of the directory open at dirfd.
func (v *Vault) DirIVAt(dirfd int) ([]byte, error) {
	if v.Config.DeterministicNames() {
		return make([]byte, crypto.DirIVLen), nil
	}
	return layout.ReadDirIV(dirfd)
}

// hidden reports whether the entry name in cipher directory cdir is part of
// the vault's machinery rather than content: gocryptfs.conf (and, with
// encrypted names, the temporary and backup copies gocryptfs and vaultui
// leave beside it at the root), gocryptfs.diriv and long-name .name files.
func (v *Vault) hidden(cdir, name string) bool {
	if v.Names == nil {
		return cdir == "" && name == crypto.ConfName
	}
	if cdir == "" && (name == crypto.ConfName || name == crypto.ConfName+".tmp" || name == crypto.ConfName+".bak") {
		return true
	}
	return name == crypto.DirIVName || crypto.IsLongNameFile(name)
}

// DecryptEntryName decrypts the entry name in the directory open at dirfd under iv (long
// names through their .name file).
func (v *Vault) DecryptEntryName(dirfd int, name string, iv []byte) (string, error) {
	encoded := name
	if crypto.IsLongName(name) {
		var err error
		if encoded, err = layout.ReadLongName(dirfd, name, v.Names); err != nil {
			return "", err
		}
	}
	plain, err := v.Names.DecryptEntry(name, encoded, iv)
	if err != nil {
		return "", fmt.Errorf("%w: %w", layout.ErrCorrupt, err)
	}
	return plain, nil
}

// readSymlink returns the plaintext target of symlink n.
func (v *Vault) readSymlink(n format.Node) (string, error) {
	target, err := readlinkAt(RefOf(n).Dirfd, RefOf(n).Name)
	if err != nil {
		return "", fmt.Errorf("vault: %w", err)
	}
	if v.Names == nil {
		return target, nil // plaintext names: gocryptfs stores targets as they are
	}
	t, err := v.Content.DecryptSymlink(target)
	if err != nil {
		return "", fmt.Errorf("%s: %w: %w", n.CipherPath, layout.ErrCorrupt, err)
	}
	return t, nil
}
