package atomicfile

import "os"

// Failing is, for tests, the real file system with one operation failing as a full disk or a
// crash would make it fail: At "write" the write stops half-way with Err, at "rename" the
// temporary file is complete and synced but the rename fails with Err (after Check, if set,
// has looked at the temporary file).
type Failing struct {
	OS
	At    string
	Err   error
	Check func(tmp string)
}

func (f Failing) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	w, err := f.OS.OpenFile(name, flag, perm)
	if err != nil || f.At != "write" {
		return w, err
	}
	return halfWriter{w, f.Err}, nil
}

func (f Failing) Rename(oldpath, newpath string) error {
	if f.At != "rename" {
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
