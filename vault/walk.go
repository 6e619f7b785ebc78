package vault

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/vaultui/vaultui/vault/format"
	"github.com/vaultui/vaultui/vault/layout"
)

// ConflictKind says what a conflict is (format.ConflictKind).
type ConflictKind = format.ConflictKind

const (
	ConflictCopyOfEntry        = format.ConflictCopyOfEntry
	ConflictFolderMadeTwice    = format.ConflictFolderMadeTwice
	ConflictMadeInSecondFolder = format.ConflictMadeInSecondFolder
)

// Problem is one defect found in a vault (format.Problem).
type Problem = format.Problem

var (
	newProblem = format.NewProblem
	errDetail  = format.Detail
)

// FsckProgress reports how far Fsck or Export is: Bytes of TotalBytes of file content
// (the cipher files' sizes, which is what takes the time), Done of Total entries, Path the
// plaintext path being processed. The first report comes at once, with Counting set while
// the cipherdir is counted (Total and TotalBytes grow); then after each entry and every
// progressStep bytes within a file.
type FsckProgress struct {
	Done, Total       int
	Bytes, TotalBytes int64
	Path              string `json:",omitempty"`
	Counting          bool   `json:",omitempty"`
}

// Fraction is how much of the walk is done, from 0 to 1: by content where there is any, else
// by entries.
func (p FsckProgress) Fraction() float64 {
	switch {
	case p.TotalBytes > 0:
		return float64(p.Bytes) / float64(p.TotalBytes)
	case p.Total > 0:
		return float64(p.Done) / float64(p.Total)
	}
	return 0
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

// WalkVolume visits every entry of the vault of any format below the root (format.Walk):
// depth first and in plaintext name order, a directory before its contents. Entries whose
// names it cannot decrypt, and directories it cannot read, go to problem (which may be nil)
// and are skipped; the walk goes on. An error from fn or ctx ends it and is returned.
func WalkVolume(ctx context.Context, vol format.Volume, fn func(Node) error, problem func(Problem)) error {
	return format.Walk(ctx, vol, fn, problem, false)
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
			problem(newProblem(n.Path, n.CipherPath, format.KindType, errDetail(err)))
		} else {
			problem(newProblem(n.Path, n.CipherPath, format.KindIO, err.Error()))
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
		problem(newProblem(n.Path, n.CipherPath, format.KindIO, err.Error()))
		return 0, err
	}
	fc, err := vol.OpenHeader(hdr)
	if err != nil {
		problem(newProblem(n.Path, n.CipherPath, format.KindHeader, errDetail(err)))
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
	problem(newProblem(n.Path, n.CipherPath, format.KindSize, errDetail(err)))
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
			problem(newProblem(n.Path, n.CipherPath, format.KindIO, err.Error()))
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
		problem(newProblem(n.Path, n.CipherPath, format.KindHeader, "no block opens with the file ID in the header"))
		return
	}
	for _, r := range bad {
		p := newProblem(n.Path, n.CipherPath, format.KindContent, "blocks do not authenticate")
		if r[0] == r[1] {
			p.Detail = "block does not authenticate"
		}
		p.FirstBlock, p.LastBlock = r[0], r[1]
		problem(p)
	}
}
