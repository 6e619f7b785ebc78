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

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/format"
	"github.com/vaultui/vaultui/vault/layout"
	"golang.org/x/sys/unix"
)

// Problem kinds reported by Fsck and Export (see package format).
const (
	KindDirIV    = format.KindDirIV
	KindDirID    = format.KindDirID
	KindName     = format.KindName
	KindLongName = format.KindLongName
	KindHeader   = format.KindHeader
	KindContent  = format.KindContent
	KindSize     = format.KindSize
	KindSymlink  = format.KindSymlink
	KindType     = format.KindType
	KindIO       = format.KindIO
	KindDirTwice = format.KindDirTwice

	KindConflict = format.KindConflict
	KindForeign  = format.KindForeign
	KindTemp     = format.KindTemp
)

// Conflict is what a sync tool's conflict left (format.Conflict).
type Conflict = format.Conflict

// ConflictKind says what a conflict is (format.ConflictKind).
type ConflictKind = format.ConflictKind

const (
	ConflictCopyOfEntry        = format.ConflictCopyOfEntry
	ConflictFolderMadeTwice    = format.ConflictFolderMadeTwice
	ConflictMadeInSecondFolder = format.ConflictMadeInSecondFolder
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

// Problem is one defect found in a vault (format.Problem).
type Problem = format.Problem

var newProblem = format.NewProblem

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

// newMeter reports at once, counts what the walk of vol will visit (reporting as it goes),
// and reports the totals.
func newMeter(vol format.Volume, report func(FsckProgress)) *meter {
	m := &meter{report: report, p: FsckProgress{Counting: true}}
	m.send()
	vol.Count(m.counted)
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

// Node is one entry of the decrypted tree (format.Node).
type Node = format.Node

// Walk visits every entry of the vault below the root, depth first and in
// plaintext name order, a directory before its contents, decrypting names
// with each directory's IV (deterministic and plaintext names as the config
// says, long names through their .name files). Entries it cannot decrypt
// the name of, and directories whose IV it cannot read, go to problem (which
// may be nil) and are skipped; the walk goes on. An error from fn or ctx ends
// it and is returned.
func (v *Vault) Walk(ctx context.Context, fn func(Node) error, problem func(Problem)) error {
	return WalkVolume(ctx, v.Volume(), fn, problem)
}

// WalkShowingBadNames is Walk that also visits the entries whose names do not decrypt (still
// reported to problem), under layout.BadName's name, as export --force writes them.
func (v *Vault) WalkShowingBadNames(ctx context.Context, fn func(Node) error, problem func(Problem)) error {
	return walkVolume(ctx, v.Volume(), fn, problem, true)
}

// WalkVolume is Walk for a vault of any format.
func WalkVolume(ctx context.Context, vol format.Volume, fn func(Node) error, problem func(Problem)) error {
	return walkVolume(ctx, vol, fn, problem, false)
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
	return walkVolume(ctx, gocryptfsVolume{v: v, folder: folder}, fn, problem, false)
}

// walkVolume is format.Walk, the one walk of every format, with vault's Problem and Node.
func walkVolume(ctx context.Context, vol format.Volume, fn func(Node) error, problem func(Problem), badNames bool) error {
	return format.Walk(ctx, vol, fn, problem, badNames)
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
// copies. Under a wrong IV a name still decrypts about once in 256 (its padding happens to
// check), so a name that decrypts under both IVs goes by which gives a plausible name
// (layout.PlausibleName: valid UTF-8 without control characters, as names people and programs
// give are); when that does not tell them apart, the folder's own IV wins (plain and realOK
// are what it gives). Guessing wrong would give the entry a garbled name for good once the
// folder is merged. The mount decides the same way (vfs gocryptfsTree.listed).
func (v *Vault) madeUnderCopy(dirfd int, name, plain string, realOK bool, copies []dirIVCopy) (secondEntry, bool) {
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
	return append(nodes, Node{Path: path.Join(pdir, plain), CipherPath: cpath, Info: info, Conflict: c, Ref: gocryptfsRef{dirfd, name}})
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
	plain, err := v.Names.DecryptEntry(name, encoded, iv)
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
	at := refOf(n)
	buf := make([]byte, 4096)
	for {
		m, err := unix.Readlinkat(at.dirfd, at.name, buf)
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

// readChunkBlocks is how many blocks decryptVolumeFile reads at once (128 KiB of gocryptfs's,
// 1 MiB of Cryptomator's).
const readChunkBlocks = 32

// decryptVolumeFile decrypts the file n of vol block by block, calling data (if not nil)
// with each run of plaintext at its offset; blocks that do not authenticate are reported as
// problems and given to data as zeros. It tells m (if not nil) of every run of cipher data
// read. It returns the plaintext size, and an error when the file was not readable at all
// (a bad header or an I/O error, each also reported as a problem), ctx is done or data fails.
func decryptVolumeFile(ctx context.Context, vol format.Volume, n Node, data func(off int64, b []byte) error, problem func(Problem), m *meter) (int64, error) {
	f, err := vol.OpenFile(n)
	if err != nil {
		if layout.IsNotRegular(err) {
			problem(newProblem(n.Path, n.CipherPath, KindType, errDetail(err)))
		} else {
			problem(newProblem(n.Path, n.CipherPath, KindIO, err.Error()))
		}
		return 0, err
	}
	defer f.Close()
	g := vol.Geometry()
	csize, psize, err := readableSize(g, n, problem)
	if csize == 0 {
		return 0, err
	}
	hdr := make([]byte, g.HeaderLen)
	if _, err := io.ReadFull(f, hdr); err != nil {
		problem(newProblem(n.Path, n.CipherPath, KindIO, err.Error()))
		return 0, err
	}
	fc, err := vol.OpenHeader(hdr)
	if err != nil {
		problem(newProblem(n.Path, n.CipherPath, KindHeader, errDetail(err)))
		return 0, err
	}
	cbs := int64(g.CipherBlockSize())
	nblocks := (csize - int64(g.HeaderLen) + cbs - 1) / cbs
	bad, err := decryptBlocks(ctx, g, f, fc, n, csize, data, problem, m)
	if err != nil {
		return 0, err
	}
	reportBadBlocks(n, bad, nblocks, problem)
	return psize, nil
}

// readableSize returns the cipher size of the file n to read and its plaintext size. A size
// no file of the format has is reported as a problem; then what is there is read: the header
// and the full blocks, or nothing (csize 0, with the error) without a whole header.
func readableSize(g format.Geometry, n Node, problem func(Problem)) (csize, psize int64, err error) {
	csize = n.Info.Size()
	if csize == 0 {
		return 0, 0, nil
	}
	psize, ok := g.PlainSize(csize)
	if ok {
		return csize, psize, nil
	}
	hlen, cbs := int64(g.HeaderLen), int64(g.CipherBlockSize())
	err = fmt.Errorf("%w: impossible ciphertext size: %d bytes is not a %d-byte header followed by blocks of %d bytes, the last holding more than its %d-byte overhead",
		ErrCorrupt, csize, hlen, cbs, g.BlockOverhead)
	problem(newProblem(n.Path, n.CipherPath, KindSize, errDetail(err)))
	if csize < hlen {
		return 0, 0, err
	}
	full := (csize - hlen) / cbs
	return hlen + full*cbs, full * int64(g.BlockSize), nil
}

// decryptBlocks reads and decrypts the blocks of f (the file n, sealed under fc, csize bytes
// of it to read) readChunkBlocks at a time, giving each run of plaintext to data, with zeros
// for the blocks that do not authenticate; it returns those as ranges of block numbers.
func decryptBlocks(ctx context.Context, g format.Geometry, f *os.File, fc format.FileCipher, n Node, csize int64,
	data func(off int64, b []byte) error, problem func(Problem), m *meter) (bad [][2]int64, err error) {
	hlen, bs, cbs := int64(g.HeaderLen), int64(g.BlockSize), int64(g.CipherBlockSize())
	nblocks := (csize - hlen + cbs - 1) / cbs
	cbuf := make([]byte, readChunkBlocks*cbs)
	pbuf := make([]byte, 0, readChunkBlocks*bs)
	for first := int64(0); first < nblocks; first += readChunkBlocks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cnt := min(readChunkBlocks, nblocks-first)
		off := hlen + first*cbs
		clen := min(cnt*cbs, csize-off)
		chunk := cbuf[:clen]
		if _, err := f.ReadAt(chunk, off); err != nil {
			problem(newProblem(n.Path, n.CipherPath, KindIO, err.Error()))
			return nil, err
		}
		if m != nil {
			m.read(n.Path, clen)
		}
		// Zeros in place of bad blocks, recorded as ranges.
		pbuf = fc.OpenBlocks(pbuf[:0], chunk, uint64(first), func(block uint64) {
			b := int64(block)
			if k := len(bad); k > 0 && bad[k-1][1] == b-1 {
				bad[k-1][1] = b
			} else {
				bad = append(bad, [2]int64{b, b})
			}
		})
		if data != nil {
			if err := data(first*bs, pbuf); err != nil {
				return nil, err
			}
		}
	}
	return bad, nil
}

// reportBadBlocks reports the ranges bad of the nblocks blocks of n as problems: every block
// bad is a damaged header, else each range is reported by its block numbers.
func reportBadBlocks(n Node, bad [][2]int64, nblocks int64, problem func(Problem)) {
	if len(bad) == 1 && nblocks > 1 && bad[0] == [2]int64{0, nblocks - 1} {
		// Every block fails: the file ID (or key) in the header they are bound to is what is damaged.
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
