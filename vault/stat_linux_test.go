package vault

import (
	"io/fs"
	"syscall"
)

// allocated returns the bytes the file system allocated for a file.
func allocated(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return fi.Size()
}
