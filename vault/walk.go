package vault

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/layout"
	"golang.org/x/sys/unix"
)

// Problem kinds reported by Fsck and Export.
const (
	KindDirIV    = "diriv"    // a directory's gocryptfs.diriv is missing or malformed
	KindName     = "name"     // an entry name does not decrypt
	KindLongName = "longname" // a long name's .name file is missing, too big or does not match
	KindHeader   = "header"   // a file header is malformed or its file ID opens no block
	KindContent  = "content"  // blocks that do not authenticate (FirstBlock..LastBlock)
	KindSize     = "size"     // a ciphertext size no plaintext size maps to
	KindSymlink  = "symlink"  // a symlink target does not decrypt
	KindType     = "type"     // an entry of a type a vault cannot hold (irregular files)
	KindIO       = "io"       // the cipherdir could not be read

	// Notes, not damage (Problem.Damage is false): the vault reads fine.
	KindConflict = "conflict" // a sync tool's conflict copy
	KindForeign  = "foreign"  // a file whose name is not of the vault's format
	KindTemp     = "temp"     // a directory a crash left half made or half removed (layout.IsTemp)
)

// Damage reports whether p is damage (fsck's exit code 4) rather than a note about a
// conflict copy or a foreign file.
func (p Problem) Damage() bool {
	return p.Kind != KindConflict && p.Kind != KindForeign && p.Kind != KindTemp
}

// Conflict is what a sync tool's conflict left: see Kind. Of is the plaintext path of the
// entry it concerns.
type Conflict struct {
	Kind ConflictKind
	Of   string
	layout.Conflict
}

// ConflictKind says what a conflict is, and so how it can be settled.
type ConflictKind string

const (
	// ConflictCopyOfEntry is a tool's conflict copy of the entry Of (its Base is that entry's
	// stored name): the copy's content or tree is a second version of Of.
	ConflictCopyOfEntry ConflictKind = "copy"
	// ConflictFolderMadeTwice is a folder made on two computers: the tool kept the second
	// computer's gocryptfs.diriv as a conflict copy (Base is gocryptfs.diriv), and what was made
	// in the folder there is encrypted under the copy's IV. It is settled as a whole, by moving
	// those entries under the folder's own IV.
	ConflictFolderMadeTwice ConflictKind = "folder made twice"
	// ConflictMadeInSecondFolder is an entry made in a folder made twice, on the computer whose
	// gocryptfs.diriv the tool kept as a copy: its name is encrypted under the copy's IV, so
	// gocryptfs does not show it. Of is the name it has there, which the folder may also hold;
	// it is not a copy of a file and its Base (gocryptfs.diriv) is never a name to settle onto.
	ConflictMadeInSecondFolder ConflictKind = "made in second folder"
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

// Problem is one defect found in a vault. Path is the plaintext path
// (slash-separated, relative to the vault root; for an entry whose name does
// not decrypt, its directory's plaintext path); CipherPath is the path in
// the cipherdir. FirstBlock and LastBlock give the affected block range for
// content problems and are -1 otherwise.
type Problem struct {
	Path, CipherPath, Kind, Detail string
	FirstBlock, LastBlock          int64
}

func (p Problem) String() string {
	s := p.Path
	if s == "" {
		s = "/" + p.CipherPath
	}
	s += ": " + p.Kind + ": " + p.Detail
	if p.FirstBlock >= 0 {
		if p.FirstBlock == p.LastBlock {
			s += fmt.Sprintf(" (block %d)", p.FirstBlock)
		} else {
			s += fmt.Sprintf(" (blocks %d-%d)", p.FirstBlock, p.LastBlock)
		}
	}
	return s
}

func newProblem(p, cp, kind, detail string) Problem {
	return Problem{Path: p, CipherPath: cp, Kind: kind, Detail: detail, FirstBlock: -1, LastBlock: -1}
}

// FsckProgress reports how far Fsck or Export is: Bytes of TotalBytes of file content
// (the cipher files' sizes, which is what takes the time), Done of Total entries, Path the
// plaintext path being processed. The first report comes at once, with Counting set while
// the cipherdir is counted (Total and TotalBytes grow); then after each entry and every
// progressStep bytes within a file.
type FsckProgress struct {
	Done, Total       int
	Bytes, TotalBytes int64
	Path              string
	Counting          bool
}

// progressStep is how much file content is read between two reports within a file, so a
// big file moves the progress instead of holding it for minutes.
const progressStep = 8 << 20

// countReportEvery is how many entries the count goes through between two reports.
const countReportEvery = 1000

// meter measures a walk's progress (Fsck, Export) and reports it (see FsckProgress).
type meter struct {
	report func(FsckProgress) // may be nil
	p      FsckProgress
	start  int64 // Bytes when the current entry began
	next   int64 // Bytes at which the next report within a file is due
}

// newMeter reports at once, counts what the walk will visit (reporting as it goes), and
// reports the totals.
func newMeter(v *Vault, report func(FsckProgress)) *meter {
	m := &meter{report: report, p: FsckProgress{Counting: true}}
	m.send()
	if fd, err := unix.Open(v.Dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
		v.countIn(fd, "", m)
		unix.Close(fd)
	}
	m.p.Counting = false
	m.send()
	return m
}

func (m *meter) send() {
	if m.report != nil {
		m.report(m.p)
	}
}

// counted adds an entry of size bytes (0 but for regular files) to the totals.
func (m *meter) counted(size int64) {
	m.p.Total++
	m.p.TotalBytes += size
	if m.p.Total%countReportEvery == 0 {
		m.send()
	}
}

// read adds n bytes of the file at path to the progress.
func (m *meter) read(path string, n int64) {
	m.p.Bytes += n
	m.p.Path = path
	m.p.TotalBytes = max(m.p.TotalBytes, m.p.Bytes)
	if m.p.Bytes >= m.next {
		m.next = m.p.Bytes + progressStep
		m.send()
	}
}

// entry counts the entry at path done; size is its content (a regular file's size, whether
// or not all of it could be read).
func (m *meter) entry(path string, size int64) {
	m.p.Done++
	m.p.Path = path
	m.p.Bytes = m.start + size
	m.start = m.p.Bytes
	m.p.Total = max(m.p.Total, m.p.Done)
	m.p.TotalBytes = max(m.p.TotalBytes, m.p.Bytes)
	m.send()
}

// contentSize is what an entry adds to FsckProgress.Bytes.
func contentSize(info fs.FileInfo) int64 {
	if info.Mode().IsRegular() {
		return info.Size()
	}
	return 0
}

// Node is one entry of the decrypted tree.
type Node struct {
	Path       string      // plaintext path, slash-separated, relative to the root
	CipherPath string      // path in the cipherdir, slash-separated (a label: it may exceed PATH_MAX)
	Info       fs.FileInfo // Lstat of the cipher entry
	// Conflict is set for a sync tool's conflict copy; Path is then the name it shows under.
	Conflict *Conflict

	// dirfd and name reach the cipher entry during the walk's call for it (see package
	// layout: no string paths into the cipherdir).
	dirfd int
	name  string
}

// Walk visits every entry of the vault below the root, depth first and in
// plaintext name order, a directory before its contents, decrypting names
// with each directory's IV (deterministic and plaintext names as the config
// says, long names through their .name files). Entries it cannot decrypt
// the name of, and directories whose IV it cannot read, go to problem (which
// may be nil) and are skipped; the walk goes on. An error from fn or ctx ends
// it and is returned.
func (v *Vault) Walk(ctx context.Context, fn func(Node) error, problem func(Problem)) error {
	return v.walk(ctx, fn, problem, nil)
}

// WalkShowingBadNames is Walk that also visits the entries whose names do not decrypt (still
// reported to problem), under layout.BadName's name, as export --force writes them.
func (v *Vault) WalkShowingBadNames(ctx context.Context, fn func(Node) error, problem func(Problem)) error {
	return v.walkWith(ctx, fn, problem, nil, true)
}

// splitFolder is a folder made on two computers, as the walk found it (see
// ConflictFolderMadeTwice): its directory, the tool's copies of its gocryptfs.diriv and the
// entries made under them. dirfd is valid during the callback only.
type splitFolder struct {
	path, cipherPath string // the folder's plaintext and cipher paths
	copies           []dirIVCopy
	entries          []Node // Kind ConflictMadeInSecondFolder
	dirfd            int
}

// dirIVCopy is a sync tool's conflict copy of a directory's gocryptfs.diriv.
type dirIVCopy struct {
	name string
	iv   []byte // nil when the copy is not 16 bytes: then no entry is placed under it
	info fs.FileInfo
	layout.Conflict
}

// walk is Walk that also calls folder (if not nil) for each folder made on two computers,
// after the folder's own node and before its entries.
func (v *Vault) walk(ctx context.Context, fn func(Node) error, problem func(Problem), folder func(splitFolder) error) error {
	return v.walkWith(ctx, fn, problem, folder, false)
}

// walkWith is walk that, with badNames, visits the entries whose names do not decrypt.
func (v *Vault) walkWith(ctx context.Context, fn func(Node) error, problem func(Problem), folder func(splitFolder) error, badNames bool) error {
	if problem == nil {
		problem = func(Problem) {}
	}
	fd, err := unix.Open(v.Dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		problem(newProblem("", "", KindIO, err.Error()))
		return nil
	}
	defer unix.Close(fd)
	return v.walkDir(ctx, fd, "", "", fn, problem, folder, badNames)
}

// walkDir walks the directory open at dirfd, whose cipher and plaintext paths are cdir and pdir.
func (v *Vault) walkDir(ctx context.Context, dirfd int, cdir, pdir string, fn func(Node) error, problem func(Problem), folder func(splitFolder) error, badNames bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	nodes, split, ok := v.readDir(dirfd, cdir, pdir, problem, badNames)
	if !ok {
		return nil
	}
	if split != nil && folder != nil {
		if err := folder(*split); err != nil {
			return err
		}
	}
	for _, n := range nodes {
		if err := fn(n); err != nil {
			return err
		}
		if n.Info.IsDir() {
			cfd, err := layout.OpenDir(dirfd, n.name)
			if err != nil {
				problem(newProblem(n.Path, n.CipherPath, KindIO, err.Error()))
				continue
			}
			err = v.walkDir(ctx, cfd, n.CipherPath, n.Path, fn, problem, folder, badNames)
			unix.Close(cfd)
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// readDir lists the directory open at dirfd (cipher and plaintext paths cdir and pdir) in
// plaintext name order, with its conflict copies; split is set when the folder was made on
// two computers. ok is false when its names cannot be read at all (reported to problem).
// badNames adds the entries whose names do not decrypt (see addConflicts).
func (v *Vault) readDir(dirfd int, cdir, pdir string, problem func(Problem), badNames bool) (nodes []Node, split *splitFolder, ok bool) {
	names, err := layout.ReadDirNames(dirfd)
	if err != nil {
		problem(newProblem(pdir, cdir, KindIO, err.Error()))
		return nil, nil, false
	}
	var iv []byte
	if v.Names != nil {
		if iv, err = v.dirIVAt(dirfd); err != nil {
			problem(newProblem(pdir, path.Join(cdir, crypto.DirIVName), KindDirIV,
				"cannot decrypt the names in this directory: "+errDetail(err)))
			return nil, nil, false
		}
	}
	copies := v.dirIVCopies(dirfd, cdir, pdir, names, problem)
	nodes = make([]Node, 0, len(names))
	var failed []string
	var failedErr []error
	var second []secondEntry
names:
	for _, name := range names {
		if v.hidden(cdir, name) {
			continue
		}
		plain := name
		if v.Names != nil {
			for _, c := range copies {
				if name == c.name {
					continue names
				}
			}
			plain, err = v.decryptEntryName(dirfd, name, iv)
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
		split = &splitFolder{path: pdir, cipherPath: cdir, copies: copies, dirfd: dirfd}
		for _, e := range second {
			shown := layout.ConflictName(e.plain, e.c, func(s string) bool { return taken[s] })
			taken[shown] = true
			before := len(nodes)
			nodes = v.appendNode(nodes, dirfd, cdir, pdir, e.name, shown,
				&Conflict{Kind: ConflictMadeInSecondFolder, Of: path.Join(pdir, e.plain), Conflict: e.c}, problem)
			if len(nodes) > before {
				split.entries = append(split.entries, nodes[len(nodes)-1])
			}
		}
	}
	slices.SortFunc(nodes, func(a, b Node) int { return strings.Compare(a.Path, b.Path) })
	return nodes, split, true
}

// dirIVCopies finds the sync tools' conflict copies of the directory's gocryptfs.diriv among
// names (a folder made on two computers) and notes each for fsck.
func (v *Vault) dirIVCopies(dirfd int, cdir, pdir string, names []string, problem func(Problem)) []dirIVCopy {
	if v.Names == nil || v.Config.DeterministicNames() {
		return nil // no gocryptfs.diriv files, so no copies of one
	}
	var out []dirIVCopy
	for _, name := range names {
		c, ok := layout.ParseConflict(name, func(base string) bool { return base == crypto.DirIVName })
		if !ok {
			continue
		}
		problem(newProblem(pdir, path.Join(cdir, name), KindConflict, conflictOfFormatFile(c, cdir)))
		info, err := lstatAt(dirfd, name)
		if err != nil {
			problem(newProblem(pdir, path.Join(cdir, name), KindIO, err.Error()))
			continue
		}
		iv, _ := layout.ReadDirIVFile(dirfd, name)
		out = append(out, dirIVCopy{name: name, iv: iv, info: info, Conflict: c})
	}
	return out
}

// secondEntry is an entry whose name is encrypted under the IV of a diriv copy.
type secondEntry struct {
	name, plain string
	c           layout.Conflict
}

// madeUnderCopy reports whether the entry name was made under the IV of one of the diriv
// copies. Under a wrong IV a name still decrypts about once in 300 (its padding happens to
// check), so a name that decrypts under both IVs goes by which gives valid UTF-8, as every
// name a person types is; when that does not tell them apart, the folder's own IV wins (plain
// and realOK are what it gives). Guessing wrong would give the entry a garbled name for good
// once the folder is merged.
func (v *Vault) madeUnderCopy(dirfd int, name, plain string, realOK bool, copies []dirIVCopy) (secondEntry, bool) {
	if realOK && utf8.ValidString(plain) {
		return secondEntry{}, false
	}
	for _, c := range copies {
		if c.iv == nil {
			continue
		}
		if p, err := layout.EntryUnderIV(dirfd, name, c.iv, v.Names); err == nil && (!realOK || utf8.ValidString(p)) {
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
func (v *Vault) addConflicts(dirfd int, cdir, pdir string, iv []byte, nodes []Node, taken map[string]bool, failed []string, failedErr []error, problem func(Problem), badNames bool) []Node {
	for i, name := range failed {
		cpath := path.Join(cdir, name)
		c, plain, _, ok := layout.ConflictCopy(dirfd, name, iv, v.Names, cdir == "")
		switch {
		case ok && plain == "":
			problem(newProblem(pdir, cpath, KindConflict, conflictOfFormatFile(c, cdir)))
		case ok:
			shown := layout.ConflictName(plain, c, func(s string) bool { return taken[s] })
			taken[shown] = true
			nodes = v.appendNode(nodes, dirfd, cdir, pdir, name, shown, &Conflict{Kind: ConflictCopyOfEntry, Of: path.Join(pdir, plain), Conflict: c}, problem)
		case layout.IsTemp(name):
			problem(newProblem(pdir, cpath, KindTemp, "a directory the mount was making or removing when it stopped; it holds none of the vault's content and the mount hides it (safe to delete)"))
		case !looksEncrypted(name):
			problem(newProblem(pdir, cpath, KindForeign, "not a name of the vault's format (a file put into the cipherdir by hand or by a sync tool); the mount hides it"))
		default:
			kind := KindName
			if crypto.IsLongName(name) {
				kind = KindLongName
			}
			p := newProblem(pdir, cpath, kind, errDetail(failedErr[i]))
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
func (v *Vault) appendNode(nodes []Node, dirfd int, cdir, pdir, name, plain string, c *Conflict, problem func(Problem)) []Node {
	cpath := path.Join(cdir, name)
	info, err := lstatAt(dirfd, name)
	if err != nil {
		problem(newProblem(path.Join(pdir, plain), cpath, KindIO, err.Error()))
		return nodes
	}
	return append(nodes, Node{Path: path.Join(pdir, plain), CipherPath: cpath, Info: info, Conflict: c, dirfd: dirfd, name: name})
}

// PathNames maps this vault's paths between the plaintext view and the cipherdir.
func (v *Vault) PathNames() layout.PathNames {
	return layout.PathNames{Names: v.Names, PerDirIV: v.Config.Has(FlagDirIV)}
}

// dirIVAt returns the name IV of the directory open at dirfd.
func (v *Vault) dirIVAt(dirfd int) ([]byte, error) {
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

// decryptEntryName decrypts the entry name in the directory open at dirfd.
func (v *Vault) decryptEntryName(dirfd int, name string, iv []byte) (string, error) {
	encoded := name
	if crypto.IsLongName(name) {
		var err error
		if encoded, err = layout.ReadLongName(dirfd, name, v.Names); err != nil {
			return "", err
		}
	}
	plain, err := v.Names.DecryptName(encoded, iv)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return plain, nil
}

// errDetail is err's message without the leading "vault is corrupt: " and
// "crypto: " prefixes, for Problem.Detail.
func errDetail(err error) string {
	s := err.Error()
	for _, p := range []string{ErrCorrupt.Error() + ": ", "crypto: "} {
		s = strings.ReplaceAll(s, p, "")
	}
	return s
}

// readSymlink returns the plaintext target of symlink n.
func (v *Vault) readSymlink(n Node) (string, error) {
	buf := make([]byte, 4096)
	for {
		m, err := unix.Readlinkat(n.dirfd, n.name, buf)
		if err != nil {
			return "", fmt.Errorf("vault: %w", err)
		}
		if m < len(buf) {
			buf = buf[:m]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	if v.Names == nil {
		return string(buf), nil // plaintext names: gocryptfs stores targets as they are
	}
	t, err := v.Content.DecryptSymlink(string(buf))
	if err != nil {
		return "", fmt.Errorf("%s: %w: %w", n.CipherPath, ErrCorrupt, err)
	}
	return t, nil
}

// readChunkBlocks is how many blocks decryptFile reads at once (128 KiB).
const readChunkBlocks = 32

// decryptFile decrypts the file n block by block, calling data (if not nil) with each run
// of plaintext at its offset; blocks that do not authenticate are reported as problems and
// given to data as zeros. It returns the plaintext size, or an error when the file cannot be
// read at all (an I/O error, a bad header; each also reported as a problem), ctx is done or
// data fails.
func (v *Vault) decryptFile(ctx context.Context, n Node, data func(off int64, b []byte) error, problem func(Problem)) (int64, error) {
	return v.decryptFileMetered(ctx, n, data, problem, nil)
}

// decryptFileMetered is decryptFile telling m (if not nil) of every run of cipher data read.
func (v *Vault) decryptFileMetered(ctx context.Context, n Node, data func(off int64, b []byte) error, problem func(Problem), m *meter) (int64, error) {
	fd, err := unix.Openat(n.dirfd, n.name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		problem(newProblem(n.Path, n.CipherPath, KindIO, err.Error()))
		return 0, err
	}
	f := os.NewFile(uintptr(fd), n.CipherPath)
	defer f.Close()
	csize, psize, err := v.readableSize(n, problem)
	if csize == 0 {
		return 0, err
	}
	var hdr [crypto.HeaderLen]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		problem(newProblem(n.Path, n.CipherPath, KindIO, err.Error()))
		return 0, err
	}
	h, err := crypto.ParseFileHeader(hdr[:])
	if err != nil {
		problem(newProblem(n.Path, n.CipherPath, KindHeader, errDetail(err)))
		return 0, err
	}
	cbs := int64(v.Content.CipherBlockSize())
	nblocks := (int64(csize) - crypto.HeaderLen + cbs - 1) / cbs
	bad, err := v.decryptBlocks(ctx, f, n, h.ID[:], int64(csize), data, problem, m)
	if err != nil {
		return 0, err
	}
	reportBadBlocks(n, bad, nblocks, problem)
	return int64(psize), nil
}

// readableSize returns the cipher size of the file n to read and its plaintext size. A size
// no file of the format has is reported as a problem; then what is there is read: the header
// and the full blocks, or nothing (csize 0, with the error) without a whole header.
func (v *Vault) readableSize(n Node, problem func(Problem)) (csize, psize uint64, err error) {
	csize = uint64(n.Info.Size())
	if csize == 0 {
		return 0, 0, nil
	}
	psize, err = v.Content.PlainSize(csize)
	if err == nil {
		return csize, psize, nil
	}
	problem(newProblem(n.Path, n.CipherPath, KindSize, errDetail(err)))
	if csize < crypto.HeaderLen {
		return 0, 0, err
	}
	cbs := uint64(v.Content.CipherBlockSize())
	full := (csize - crypto.HeaderLen) / cbs
	return crypto.HeaderLen + full*cbs, full * crypto.BlockSize, nil
}

// decryptBlocks reads and decrypts the blocks of f (the file n with the ID fileID, csize
// bytes of it to read) readChunkBlocks at a time, giving each run of plaintext to data, with
// zeros for the blocks that do not authenticate; it returns those as ranges of block numbers.
func (v *Vault) decryptBlocks(ctx context.Context, f *os.File, n Node, fileID []byte, csize int64,
	data func(off int64, b []byte) error, problem func(Problem), m *meter) (bad [][2]int64, err error) {
	ce := v.Content
	cbs := int64(ce.CipherBlockSize())
	nblocks := (csize - crypto.HeaderLen + cbs - 1) / cbs
	cbuf := make([]byte, readChunkBlocks*cbs)
	pbuf := make([]byte, 0, readChunkBlocks*crypto.BlockSize)
	for first := int64(0); first < nblocks; first += readChunkBlocks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cnt := min(readChunkBlocks, nblocks-first)
		off := crypto.HeaderLen + first*cbs
		clen := min(cnt*cbs, csize-off)
		chunk := cbuf[:clen]
		if _, err := f.ReadAt(chunk, off); err != nil {
			problem(newProblem(n.Path, n.CipherPath, KindIO, err.Error()))
			return nil, err
		}
		if m != nil {
			m.read(n.Path, clen)
		}
		pbuf = ce.DecryptBlocksZeroing(pbuf[:0], chunk, uint64(first), fileID, func(be *crypto.BlockError) {
			b := int64(be.Block)
			if k := len(bad); k > 0 && bad[k-1][1] == b-1 {
				bad[k-1][1] = b
			} else {
				bad = append(bad, [2]int64{b, b})
			}
		})
		if data != nil {
			if err := data(first*crypto.BlockSize, pbuf); err != nil {
				return nil, err
			}
		}
	}
	return bad, nil
}

// reportBadBlocks reports the ranges of blocks of n (nblocks of them) that did not
// authenticate: one problem per range, or one with the header when every block fails.
func reportBadBlocks(n Node, bad [][2]int64, nblocks int64, problem func(Problem)) {
	if len(bad) == 1 && nblocks > 1 && bad[0] == [2]int64{0, nblocks - 1} {
		// Every block fails: the file ID they are bound to is what is damaged.
		problem(newProblem(n.Path, n.CipherPath, KindHeader, "no block opens with the file ID in the header"))
		return
	}
	for _, r := range bad {
		p := newProblem(n.Path, n.CipherPath, KindContent, "blocks do not authenticate")
		if r[0] == r[1] {
			p.Detail = "block does not authenticate"
		}
		p.FirstBlock, p.LastBlock = r[0], r[1]
		problem(p)
	}
}

// isSpecial reports whether t is a FIFO, socket or device node: entries that gocryptfs (and a
// vaultui mount) create with only their names encrypted.
func isSpecial(t fs.FileMode) bool {
	return t == fs.ModeNamedPipe || t == fs.ModeSocket || t&fs.ModeDevice != 0
}
