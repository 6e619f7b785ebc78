package cryptomator

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/format"
	"github.com/vaultui/vaultui/vault/layout"
)

// Volume returns v as the offline walker reads it (format.Volume): the walker of package
// vault checks and exports it as it does gocryptfs vaults.
func (v *Vault) Volume() *Volume { return &Volume{v: v} }

// Volume is a Cryptomator vault as the walker reads it. A format.Dir's Ref is a Dir, a
// format.Node's an Entry.
type Volume struct{ v *Vault }

// FormatName names the vault's format and cipher combo.
func (w *Volume) FormatName() string { return Describe(w.v.config.Format, w.v.config.CipherCombo) }

// Close wipes the keys.
func (w *Volume) Close() { w.v.Close() }

func (w *Volume) Folder() string                         { return w.v.dir }
func (w *Volume) Geometry() format.Geometry              { return w.v.content.geo }
func (w *Volume) CloseDir(format.Dir)                    {}
func (w *Volume) Readlink(n format.Node) (string, error) { return w.v.ReadLink(n.Ref.(Entry)) }

// Xattrs: Cryptomator stores no extended attributes.
func (w *Volume) Xattrs(format.Node, func(format.Problem)) map[string][]byte { return nil }

// chunks is one file's content key, opened from its header.
type chunks struct {
	c *Content
	h *FileHeader
}

func (f chunks) OpenBlocks(dst, cipher []byte, first uint64, bad func(uint64)) []byte {
	return f.c.OpenChunksZeroing(dst, cipher, first, f.h, func(be *crypto.BlockError) { bad(be.Block) })
}

func (w *Volume) OpenHeader(b []byte) (format.FileCipher, error) {
	h, err := w.v.content.OpenHeader(b)
	if err != nil {
		return nil, err
	}
	return chunks{w.v.content, h}, nil
}

func (w *Volume) Root() (format.Dir, error) {
	r := w.v.Root()
	return format.Dir{CipherPath: r.Path, Ref: r, Key: r.Path}, nil
}

// ReadDir lists d, after checking its dirid.c9r (a missing or foreign one is damage, though
// the names still decrypt). Names that do not decrypt are reported; showBadNames has no
// name to show them under here.
func (w *Volume) ReadDir(d format.Dir, _ bool, problem func(format.Problem)) ([]format.Node, error) {
	dir := d.Ref.(Dir)
	if err := w.v.CheckDirIDBackup(dir); err != nil {
		rel := dir.Path + "/" + dirIDBackup
		detail := w.detail(err, rel)
		if errors.Is(err, fs.ErrNotExist) {
			detail = "missing: the backup of the directory's ID, which recovery needs (its names still decrypt)"
		}
		problem(format.NewProblem(d.Path, rel, format.KindDirID, detail))
	}
	ents, err := w.v.readDir(dir, func(stored, kind string, err error) {
		rel := dir.Path + "/" + stored
		problem(format.NewProblem(d.Path, rel, kind, w.detail(err, rel)))
	})
	if err != nil {
		kind := format.KindIO
		if errors.Is(err, layout.ErrCorrupt) {
			kind = format.KindDirID
		}
		problem(format.NewProblem(d.Path, dir.Path, kind, w.detail(err, dir.Path)))
		return nil, nil
	}
	nodes := make([]format.Node, 0, len(ents))
	taken := map[string]bool{}
	for _, e := range ents {
		if e.Conflict == nil {
			taken[e.Name] = true
		}
	}
	for _, e := range ents {
		name := e.Name
		var c *format.Conflict
		if e.Conflict != nil {
			name = layout.ConflictName(e.Name, *e.Conflict, func(s string) bool { return taken[s] })
			taken[name] = true
			c = &format.Conflict{Kind: format.ConflictCopyOfEntry, Of: path.Join(d.Path, e.Name), Conflict: *e.Conflict}
		}
		p := path.Join(d.Path, name)
		rel := e.node()
		if e.Kind == KindFile {
			rel = e.contentPath()
		}
		st, err := w.v.root.Lstat(rel)
		if err != nil {
			problem(format.NewProblem(p, rel, format.KindIO, w.detail(err, rel)))
			continue
		}
		var info fs.FileInfo = st
		if e.Kind == KindSymlink {
			info = symlinkInfo{st}
		}
		nodes = append(nodes, format.Node{Path: p, CipherPath: e.node(), Info: info, Conflict: c, Ref: e})
	}
	slices.SortFunc(nodes, func(a, b format.Node) int { return strings.Compare(a.Path, b.Path) })
	return nodes, nil
}

// detail is err's message for a problem whose cipher path is rel: without the vault's
// folder, which every problem's label omits, the leading rel the problem names already, and
// "vault is corrupt: ", which its kind says.
func (w *Volume) detail(err error, rel string) string {
	s := strings.ReplaceAll(err.Error(), w.v.dir+string(os.PathSeparator), "")
	s = strings.TrimPrefix(s, rel+": ")
	return strings.ReplaceAll(s, layout.ErrCorrupt.Error()+": ", "")
}

// symlinkInfo is a symlink's folder (holding symlink.c9r) shown as the symlink it stores.
type symlinkInfo struct{ fs.FileInfo }

func (symlinkInfo) Mode() fs.FileMode { return fs.ModeSymlink | 0o777 }
func (symlinkInfo) IsDir() bool       { return false }

// OpenDir opens the directory n names through its dir.c9r; one that names no folder is
// damage (format.KindDirID). Its Key is its folder's path, which its ID gives: nothing
// authenticates a dir.c9r, so one may name an ancestor's ID or another folder's (the walker
// enters a folder once).
func (w *Volume) OpenDir(_ format.Dir, n format.Node) (format.Dir, error) {
	sub, err := w.v.OpenDir(n.Ref.(Entry))
	if err != nil {
		if errors.Is(err, layout.ErrCorrupt) {
			return format.Dir{}, &format.Error{Kind: format.KindDirID, Err: errors.New(w.detail(err, ""))}
		}
		return format.Dir{}, err
	}
	return format.Dir{Path: n.Path, CipherPath: sub.Path, Ref: sub, Key: sub.Path}, nil
}

func (w *Volume) OpenFile(n format.Node) (*os.File, error) {
	return w.v.openRegular(n.Ref.(Entry).contentPath())
}

// Count counts the entries of every directory's folder (d/XX/YYYY/*.c9r, *.c9s) with the
// size of a file's content. Folders are opened as directories (listEntries): a FIFO swapped
// in for one is skipped, never waited on.
func (w *Volume) Count(counted func(size int64)) {
	for _, xx := range w.v.listEntries("d") {
		if !xx.IsDir() {
			continue
		}
		for _, yy := range w.v.listEntries("d/" + xx.Name()) {
			if !yy.IsDir() {
				continue
			}
			folder := "d/" + xx.Name() + "/" + yy.Name()
			for _, de := range w.v.listEntries(folder) {
				name := de.Name()
				var size int64
				switch {
				case strings.HasSuffix(name, suffixC9R) && de.Type().IsRegular():
					if info, err := de.Info(); err == nil {
						size = info.Size()
					}
				case strings.HasSuffix(name, suffixC9S):
					if info, err := w.v.root.Lstat(folder + "/" + name + "/" + ContentsFile); err == nil && info.Mode().IsRegular() {
						size = info.Size()
					}
				default:
					continue
				}
				counted(size)
			}
		}
	}
}

// Vault is the vault the volume reads, for what changes it (settling conflicts).
func (w *Volume) Vault() *Vault { return w.v }
