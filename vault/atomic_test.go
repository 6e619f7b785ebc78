package vault

import "os"

// failingFiles is the real file system with one operation failing as a full disk or a crash
// would make it fail: at "write" the write stops half-way with err, at "rename" the temporary
// file is complete and synced but the rename fails with err (after check, if set, has looked
// at the temporary file).
type failingFiles struct {
	osFiles
	at    string
	err   error
	check func(tmp string)
}

func (f failingFiles) OpenFile(name string, flag int, perm os.FileMode) (writeFile, error) {
	w, err := f.osFiles.OpenFile(name, flag, perm)
	if err != nil || f.at != "write" {
		return w, err
	}
	return halfWriter{w, f.err}, nil
}

func (f failingFiles) Rename(oldpath, newpath string) error {
	if f.at != "rename" {
		return f.osFiles.Rename(oldpath, newpath)
	}
	if f.check != nil {
		f.check(oldpath)
	}
	return f.err
}

// halfWriter writes half of what it is given, then fails.
type halfWriter struct {
	writeFile
	err error
}

func (h halfWriter) Write(b []byte) (int, error) {
	n, err := h.writeFile.Write(b[:len(b)/2])
	if err != nil {
		return n, err
	}
	return n, h.err
}
