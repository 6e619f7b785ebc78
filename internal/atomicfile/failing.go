package atomicfile

import "os"

// Failing is, for tests, the real file system with one operation failing as a full disk or a
// crash would make it fail: At "write" the write stops half-way with Err, at "rename" the
// temporary file is complete and synced but the rename fails with Err (after Check, if set,
// has looked at the temporary file). With Tmp set, only the writes and renames of that
// temporary file fail (for a change that replaces several files).
type Failing struct {
	OS
	At    string
	Err   error
	Check func(tmp string)
	Tmp   string
}

// fails reports whether the operation At on the temporary file tmp fails.
func (f Failing) fails(at, tmp string) bool {
	return f.At == at && (f.Tmp == "" || f.Tmp == tmp)
}

func (f Failing) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	w, err := f.OS.OpenFile(name, flag, perm)
	if err != nil || !f.fails("write", name) {
		return w, err
	}
	return halfWriter{w, f.Err}, nil
}

func (f Failing) Rename(oldpath, newpath string) error {
	if !f.fails("rename", oldpath) {
		return f.OS.Rename(oldpath, newpath)
	}
	if f.Check != nil {
		f.Check(oldpath)
	}
	return f.Err
}

// halfWriter writes half of what it is given, then fails.
type halfWriter struct {
	File
	err error
}

func (h halfWriter) Write(b []byte) (int, error) {
	n, err := h.File.Write(b[:len(b)/2])
	if err != nil {
		return n, err
	}
	return n, h.err
}
