package vfs

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
)

// rfile is an open file of the reverse view: the plaintext file, encrypted block by block as
// it is read, with its header and nonces derived from its cipher path.
type rfile struct {
	fs     *rfs
	fd     int
	header []byte // version 2 and the path-derived file ID
	fileID []byte
	block0 []byte
}

var (
	_ = (fs.FileReader)((*rfile)(nil))
	_ = (fs.FileReleaser)((*rfile)(nil))
)

func newRFile(f *rfs, fd int, cipherPath string) *rfile {
	var h crypto.FileHeader
	id := crypto.PathIV(cipherPath, crypto.PurposeFileID)
	copy(h.ID[:], id)
	return &rfile{fs: f, fd: fd, header: h.Bytes(), fileID: id,
		block0: crypto.PathIV(cipherPath, crypto.PurposeBlock0IV)}
}

// Read returns the ciphertext at off: the header, then the blocks that cover the range,
// encrypted from the plaintext read now. An empty plaintext file is an empty cipher file.
func (r *rfile) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if off < 0 {
		return nil, r.fs.op(syscall.EINVAL)
	}
	if len(dest) == 0 {
		return fuse.ReadResultData(nil), r.fs.op(0)
	}
	cbs := int64(r.fs.Content.CipherBlockSize())
	end := off + int64(len(dest))
	first := max(off-crypto.HeaderLen, 0) / cbs
	last := (max(end-crypto.HeaderLen, 1) - 1) / cbs // inclusive
	plain := make([]byte, (last-first+1)*crypto.BlockSize)
	n, err := pread(r.fd, plain, first*crypto.BlockSize)
	if err != nil {
		r.fs.log.Printf("vfs: reverse view of %s: read: %v", r.fs.Dir, err)
		return nil, r.fs.op(fs.ToErrno(err))
	}
	if n == 0 && first == 0 {
		return fuse.ReadResultData(nil), r.fs.op(0) // empty file: no header either
	}
	start := crypto.HeaderLen + first*cbs // offset of buf in the cipher file
	var buf []byte
	if first == 0 {
		buf = append(buf, r.header...)
		start = 0
	}
	buf = r.fs.Content.EncryptBlocksIV(buf, plain[:n], uint64(first), r.fileID, r.block0)
	lo, hi := off-start, min(end-start, int64(len(buf)))
	if lo >= hi {
		return fuse.ReadResultData(nil), r.fs.op(0)
	}
	r.fs.stats.BytesRead.Add(uint64(hi - lo))
	return fuse.ReadResultData(buf[lo:hi]), r.fs.op(0)
}

func (r *rfile) Release(ctx context.Context) syscall.Errno {
	return r.fs.op(fs.ToErrno(unix.Close(r.fd)))
}

// rconf is the open gocryptfs.conf of a reverse view: the folder's .gocryptfs.reverse.conf,
// read as it is (and released as an rfile).
type rconf struct{ *rfile }

var (
	_ = (fs.FileReader)(rconf{})
	_ = (fs.FileReleaser)(rconf{})
)

func (c rconf) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	n, err := pread(c.fd, dest, off)
	if err != nil {
		return nil, c.fs.op(fs.ToErrno(err))
	}
	return fuse.ReadResultData(dest[:n]), c.fs.op(0)
}

// op counts one operation of the reverse view.
func (f *rfs) op(errno syscall.Errno) syscall.Errno {
	f.stats.Ops.Add(1)
	if errno != 0 && errno != syscall.ENOENT {
		f.stats.Errors.Add(1)
	}
	return errno
}
