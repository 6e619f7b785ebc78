package vfs

import (
	"errors"
	"path"
	"strings"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
	"golang.org/x/text/unicode/norm"

	"github.com/vaultui/vaultui/vault/cryptomator"
	"github.com/vaultui/vaultui/vault/layout"
)

// cryptomatorTree is Cryptomator's vault format 8 (vault/cryptomator's package doc has the
// format). A directory's entries live in a folder of its own, d/XX/YYYY, found from its ID:
// so a directory's key is its ID, and its folder is opened from the vault's root by the ID
// alone, however deep the directory is.
//
// A node's object is what Cryptomator itself takes attributes from: a file's content file, a
// directory's d/ folder (which renames never move, so a directory keeps its identity and its
// cached descriptor when it or an ancestor is renamed), a symlink's symlink.c9r, shown as a
// symlink. Entries are built under a temporary name (cryptomator.TempName, which readers
// skip) and renamed into place, and taken away by a rename before being emptied, so that a
// crash leaves each entry whole or absent.
type cryptomatorTree struct {
	f         *fsys
	names     *cryptomator.Names
	content   *cryptomator.Content
	threshold int
}

// openKnown opens a directory's folder from its ID alone.
func (t *cryptomatorTree) openKnown(id []byte) (int, bool) {
	fd, err := t.openByID(id)
	return fd, err == nil
}

// eventEntry: changes in an entry's folder come from its own watch (watch.go).
func (t *cryptomatorTree) eventEntry(name string) string { return name }

// entryFolder: a .c9s entry, a directory's and a symlink's entry are folders holding
// name.c9s, contents.c9r, dir.c9r or symlink.c9r.
func (t *cryptomatorTree) entryFolder(stored string, mode uint32) bool {
	return mode != syscall.S_IFREG || cryptomator.IsShortened(stored)
}

// beingMade: a folder entry holding no payload yet (cryptomator.ErrHalfMade).
func (t *cryptomatorTree) beingMade(dirfd int, stored string) bool {
	_, err := cryptomator.FolderKind(dirfd, stored)
	return errors.Is(err, cryptomator.ErrHalfMade)
}

// respelled: names are stored in NFC, as Cryptomator stores them, but a writer that does not
// normalize (rclone's backend) stores a name in NFD as given, and the listing shows it so.
func (t *cryptomatorTree) respelled(plain string) bool { return !norm.NFC.IsNormalString(plain) }

func (t *cryptomatorTree) chown(dirfd int, stored string, uid, gid int) error {
	typ, err := cryptomator.EntryType(dirfd, stored)
	if err != nil {
		return err
	}
	if typ == syscall.S_IFDIR {
		id, err := t.readDirID(dirfd, stored)
		if err != nil {
			return err
		}
		fd, err := t.openByID(id)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return unix.Fchownat(fd, "", uid, gid, unix.AT_EMPTY_PATH)
	}
	pfd, name, err := payload(dirfd, stored, typ)
	if err != nil {
		return err
	}
	defer closeIfOther(pfd, dirfd)
	return unix.Fchownat(pfd, name, uid, gid, unix.AT_SYMLINK_NOFOLLOW)
}

// readDirID reads the ID of the directory stored in dirfd from its dir.c9r.
func (t *cryptomatorTree) readDirID(dirfd int, stored string) ([]byte, error) {
	id, err := cryptomator.ReadDirID(dirfd, stored)
	return []byte(id), err
}

// openByID opens the folder of the directory with the given ID, refusing symlinks on the way.
func (t *cryptomatorTree) openByID(id []byte) (int, error) {
	return t.openBeneath(t.names.DirPath(string(id)), false)
}

func (t *cryptomatorTree) dirKey(n *node, fd int) ([]byte, error) {
	if n.IsRoot() {
		return []byte{}, nil // the root's ID is ""
	}
	d, stored, errno := n.parentFd()
	if errno != 0 {
		return nil, errno
	}
	defer d.close()
	return t.readDirID(d.fd, stored)
}

func (t *cryptomatorTree) openDir(parentfd int, stored string) (int, []byte, error) {
	id, err := t.readDirID(parentfd, stored)
	if err != nil {
		return -1, nil, err
	}
	fd, err := t.openByID(id)
	if err == unix.ENOENT {
		err = layout.ErrCorrupt // a dir.c9r naming no folder
	}
	return fd, id, err
}

func (t *cryptomatorTree) storedEntry(plain string, id []byte, root bool) (storedEntry, syscall.Errno) {
	stored, long := cryptomator.StoredName(t.names.Encrypt(string(id), plain), t.threshold)
	return storedEntry{stored: stored, encoded: long, long: long != ""}, 0
}

func (t *cryptomatorTree) listed(s *dirStream, stored string, typ uint32) (string, storedEntry, uint32, bool, error) {
	dirfd, id := s.dir.fd, s.iv
	if cryptomator.Skipped(stored) {
		return "", storedEntry{}, 0, true, nil
	}
	enc, err := cryptomator.EncryptedName(dirfd, stored, stored, t.threshold)
	if err != nil {
		return "", storedEntry{}, 0, false, err
	}
	e := storedEntry{stored: stored, encoded: enc, long: cryptomator.IsShortened(stored)}
	plain, err := t.names.Decrypt(string(id), e.encoded)
	if err != nil {
		return "", storedEntry{}, 0, false, err
	}
	if typ == syscall.S_IFDIR {
		k, err := cryptomator.FolderKind(dirfd, stored)
		if err != nil {
			return "", storedEntry{}, 0, false, err
		}
		typ = k.Mode()
	}
	return plain, e, typ, false, nil
}

func (t *cryptomatorTree) stat(dirfd int, stored string) (entryID, []byte, error) {
	e, err := statAt(dirfd, stored)
	if err != nil || e.st.Mode&unix.S_IFMT != unix.S_IFDIR {
		if err == nil && (e.st.Mode&unix.S_IFMT != unix.S_IFREG || cryptomator.IsShortened(stored)) {
			err = layout.ErrCorrupt // a symlink or special file where an entry belongs
		}
		return e, nil, err
	}
	efd, err := cryptomator.OpenEntry(dirfd, stored)
	if err != nil {
		return entryID{}, nil, err
	}
	defer unix.Close(efd)
	payload, kind, err := cryptomator.PayloadIn(efd, stored)
	if errors.Is(err, cryptomator.ErrHalfMade) {
		return entryID{}, nil, unix.ENOENT
	}
	if err != nil {
		return entryID{}, nil, layout.ErrCorrupt
	}
	if kind == cryptomator.KindDir {
		id, err := layout.ReadSmall(efd, cryptomator.DirFile, cryptomator.MaxDirIDLen)
		if err != nil {
			return entryID{}, nil, err
		}
		fd, err := t.openByID(id)
		if err != nil {
			return entryID{}, nil, layout.ErrCorrupt
		}
		defer unix.Close(fd)
		e, err = statFd(fd)
		return e, id, err
	}
	// A symlink's target and a long-named file's content are regular files, as a .c9r file is.
	e, err = statAt(efd, payload)
	if err == nil && e.st.Mode&unix.S_IFMT != unix.S_IFREG {
		err = layout.ErrCorrupt
	}
	if kind == cryptomator.KindSymlink {
		e.st.Mode = syscall.S_IFLNK | 0o777
	}
	return e, nil, err
}

// place: a node's object is its entry's payload (cryptomator.Payload); a directory's is its
// own folder. A file under the name of a folder entry (a rename replaced the node's entry
// since the kernel looked it up) means the node's entry is gone: ENOENT, as for a deleted
// node.
func (t *cryptomatorTree) place(n *node, d dirRef, stored string) (dirRef, string, syscall.Errno) {
	if n.StableAttr().Mode == syscall.S_IFDIR {
		d.close()
		own, errno := n.dirFd()
		return own, ".", errno
	}
	fd, name, err := payload(d.fd, stored, n.StableAttr().Mode)
	if err == nil && fd == d.fd {
		return d, name, 0
	}
	d.close()
	if err == unix.ENOTDIR || err == unix.ELOOP {
		err = unix.ENOENT
	}
	if err != nil {
		return dirRef{}, "", fs2errno(err)
	}
	return dirRef{fd: fd, owned: true}, name, 0
}

func (t *cryptomatorTree) filePlace(dirfd int, stored string) (int, string, error) {
	return cryptomator.Payload(dirfd, stored, cryptomator.KindFile)
}

func (t *cryptomatorTree) symlinkLen(size int64) (int, bool) {
	n, ok := t.content.Geometry().PlainSize(size)
	return int(n), ok
}

func (t *cryptomatorTree) readlink(dirfd int, name string) ([]byte, error) {
	b, err := t.content.DecryptSmall(dirfd, name, cryptomator.MaxSymlinkLen)
	if err == nil && len(b) == 0 {
		err = layout.ErrCorrupt
	}
	return b, err
}

// longName is e's full encrypted name if it is stored shortened (a .c9s folder), else "".
func (e storedEntry) longName() string {
	if e.long {
		return e.encoded
	}
	return ""
}

func (t *cryptomatorTree) create(dirfd int, e storedEntry, flags int, mode uint32) (int, error) {
	open := func(dfd int, name string) (int, error) { return t.f.openNew(dfd, name, flags, mode) }
	if !e.long {
		fd, err := open(dirfd, e.stored)
		if err == unix.EISDIR && cryptomator.ClearHalfMade(dirfd, e.stored) {
			fd, err = open(dirfd, e.stored)
		}
		return fd, err
	}
	fd := -1
	err := cryptomator.MakeEntry(dirfd, e.stored, e.longName(), cryptomator.KindFile, func(efd int, name string) (err error) {
		fd, err = open(efd, name)
		return err
	})
	if err != nil {
		if fd >= 0 {
			unix.Close(fd)
		}
		return -1, err
	}
	return fd, nil
}

// mkdir makes the directory's folder, with its dirid.c9r, before its entry, so that a crash
// leaves an unreferenced folder at worst, never an entry naming no folder.
func (t *cryptomatorTree) mkdir(dirfd int, e storedEntry, mode uint32) ([]byte, error) {
	id, err := cryptomator.NewDirID()
	if err != nil {
		return nil, err
	}
	backup, err := t.content.Seal([]byte(id))
	if err != nil {
		return nil, err
	}
	rel := t.names.DirPath(id) // d/XX/YYYY
	parent, name := path.Split(rel)
	pfd, err := t.openBeneath(strings.TrimSuffix(parent, "/"), true)
	if err != nil {
		return nil, err
	}
	defer unix.Close(pfd)
	if err := cryptomator.MakeDirFolder(pfd, name, backup, mode); err != nil {
		return nil, err
	}
	if err := cryptomator.MakeEntry(dirfd, e.stored, e.longName(), cryptomator.KindDir, writeNew([]byte(id))); err != nil {
		cryptomator.RemoveShell(pfd, name)
		return nil, err
	}
	return []byte(id), nil
}

// openat2 retries what openat2 asks to retry: EAGAIN when a rename elsewhere raced the
// RESOLVE_BENEATH walk, EINTR.
func openat2(dirfd int, rel string, how *unix.OpenHow) (int, error) {
	for {
		fd, err := unix.Openat2(dirfd, rel, how)
		if err != unix.EAGAIN && err != unix.EINTR {
			return fd, err
		}
	}
}

// openBeneath opens the folder rel (slash-separated, below the vault's folder), refusing
// symlinks on the way; with mk its last component is made if missing (d/XX, the first
// directory whose ID hashes to XX).
func (t *cryptomatorTree) openBeneath(rel string, mk bool) (int, error) {
	how := &unix.OpenHow{
		Flags:   uint64(unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC),
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	fd, err := openat2(t.f.rootFd, rel, how)
	i := strings.LastIndexByte(rel, '/')
	if err != unix.ENOENT || !mk || i < 0 {
		return fd, err
	}
	pfd, err := openat2(t.f.rootFd, rel[:i], how)
	if err != nil {
		return -1, err
	}
	defer unix.Close(pfd)
	if err := unix.Mkdirat(pfd, rel[i+1:], 0o700); err != nil && err != unix.EEXIST {
		return -1, err
	}
	return cryptomator.OpenEntry(pfd, rel[i+1:])
}

func (t *cryptomatorTree) symlink(dirfd int, e storedEntry, target string) error {
	if len(target) > cryptomator.MaxSymlinkLen {
		return unix.ENAMETOOLONG
	}
	sealed, err := t.content.Seal([]byte(target))
	if err != nil {
		return err
	}
	return cryptomator.MakeEntry(dirfd, e.stored, e.longName(), cryptomator.KindSymlink, writeNew(sealed))
}

// writeNew writes a new payload holding b, durably.
func writeNew(b []byte) func(efd int, name string) error {
	return func(efd int, name string) error { return layout.WriteNew(efd, name, b, 0o600, true) }
}

// unlink removes a file or symlink (cryptomator.RemoveEntry).
func (t *cryptomatorTree) unlink(dirfd int, e storedEntry) error {
	return cryptomator.RemoveEntry(dirfd, e.stored, t.left)
}

// left logs a folder a removal left behind (under a temporary name, or half-made).
func (t *cryptomatorTree) left(name string, err error) {
	t.f.log.Printf("vfs: removing %s: %v", name, err)
}

// rmdir removes an empty directory (cryptomator.RemoveDir).
func (t *cryptomatorTree) rmdir(dirfd int, e storedEntry) error {
	id, err := t.readDirID(dirfd, e.stored)
	if err != nil {
		return err
	}
	rel := t.names.DirPath(string(id))
	i := strings.LastIndexByte(rel, '/')
	pfd, err := t.openBeneath(rel[:i], false)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	cfd, names, done, err := listForRemoval(pfd, rel[i+1:])
	if err != nil {
		return err
	}
	defer done()
	unlink := func() error { return cryptomator.TakeAway(dirfd, e.stored, t.left) }
	if copied, err := cryptomator.RemoveCopyOfDir(dirfd, e.stored, string(id), names, unlink); copied {
		return err
	}
	return cryptomator.RemoveDir(pfd, rel[i+1:], cfd, names, unlink, t.left)
}

// rename moves src in sd to dst in dd (cryptomator.Rename: an editor's save, a file
// replacing a file, is atomic under either length of name); RENAME_EXCHANGE swaps the
// entries (exchange).
func (t *cryptomatorTree) rename(sd int, src storedEntry, dd int, dst storedEntry, flags uint32) error {
	if flags == unix.RENAME_EXCHANGE {
		return t.exchange(sd, src, dd, dst)
	}
	if flags&^uint32(unix.RENAME_NOREPLACE) != 0 {
		return unix.EINVAL
	}
	return cryptomator.Rename(sd, src.stored, src.long, dd, dst.stored, dst.longName(), flags&unix.RENAME_NOREPLACE != 0, func(typ uint32) error {
		if typ == syscall.S_IFDIR {
			return t.rmdir(dd, dst)
		}
		return t.unlink(dd, dst)
	}, t.left)
}

// exchange swaps the entries src in sd and dst in dd (RENAME_EXCHANGE), in one system call,
// so that a crash leaves both old or both new:
//   - two short names (.c9r): the entries themselves swap, whatever they are;
//   - two files: their content files swap (a .c9r file, a .c9s folder's contents.c9r), so a
//     file keeps its content under a name of the other length class too;
//   - two long names (.c9s) of one kind: their payloads (dir.c9r, symlink.c9r) swap;
//   - a directory or symlink under a short name and one under a long name: the folders
//     swap, the short one given the long name's name.c9s beforehand (a short entry's
//     folder may hold one: readers, Cryptomator's and ours, look only for the payload), and
//     the copy left under the short name is removed afterwards.
//
// What is left, a file and a directory or symlink, one of them long, or a directory and a
// symlink both long, needs a payload to change its name or a folder its shape, which no one
// system call does: refused with EINVAL, as a file system without the flag refuses it.
func (t *cryptomatorTree) exchange(sd int, src storedEntry, dd int, dst storedEntry) error {
	typ := func(dirfd int, stored string) (uint32, error) {
		typ, err := cryptomator.EntryType(dirfd, stored)
		if errors.Is(err, cryptomator.ErrHalfMade) {
			err = unix.ENOENT
		}
		return typ, err
	}
	srcTyp, err := typ(sd, src.stored)
	if err != nil {
		return err
	}
	dstTyp, err := typ(dd, dst.stored)
	if err != nil {
		return err
	}
	swapPayloads := func() error {
		from, fromName, err := payload(sd, src.stored, srcTyp)
		if err != nil {
			return err
		}
		defer closeIfOther(from, sd)
		to, toName, err := payload(dd, dst.stored, dstTyp)
		if err != nil {
			return err
		}
		defer closeIfOther(to, dd)
		return unix.Renameat2(from, fromName, to, toName, unix.RENAME_EXCHANGE)
	}
	switch {
	case !src.long && !dst.long:
		return unix.Renameat2(sd, src.stored, dd, dst.stored, unix.RENAME_EXCHANGE)
	case srcTyp == syscall.S_IFREG && dstTyp == syscall.S_IFREG,
		src.long && dst.long && srcTyp == dstTyp:
		return swapPayloads()
	case srcTyp != syscall.S_IFREG && dstTyp != syscall.S_IFREG && src.long != dst.long:
		sfd, short, long := sd, src, dst
		if src.long {
			sfd, short, long = dd, dst, src
		}
		if err := t.lendName(sfd, short.stored, long.encoded); err != nil {
			return err
		}
		if err := unix.Renameat2(sd, src.stored, dd, dst.stored, unix.RENAME_EXCHANGE); err != nil {
			t.dropName(sfd, short.stored)
			return err
		}
		t.dropName(sfd, short.stored) // the long name's folder's, now under the short name
		return nil
	}
	return unix.EINVAL
}

// lendName gives the folder of the short entry stored in dirfd the name.c9s of a long name
// encoded, durably, before the folder moves to that name.
func (t *cryptomatorTree) lendName(dirfd int, stored, encoded string) error {
	efd, err := cryptomator.OpenEntry(dirfd, stored)
	if err != nil {
		return err
	}
	defer unix.Close(efd)
	unix.Unlinkat(efd, cryptomator.NameFile, 0) // one a crash left
	if err := layout.WriteNew(efd, cryptomator.NameFile, []byte(encoded), 0o600, true); err != nil {
		return err
	}
	return cryptomator.SyncFolder(efd)
}

// dropName removes the name.c9s from the folder of the short entry stored in dirfd; one left
// behind is harmless, so a failure is only logged.
func (t *cryptomatorTree) dropName(dirfd int, stored string) {
	efd, err := cryptomator.OpenEntry(dirfd, stored)
	if err == nil {
		err = unix.Unlinkat(efd, cryptomator.NameFile, 0)
		unix.Close(efd)
	}
	if err != nil && err != unix.ENOENT {
		t.f.log.Printf("vfs: removing %s/%s: %v", stored, cryptomator.NameFile, err)
	}
}

// payload returns where the payload of an entry of type typ stored in dirfd is, or goes
// (cryptomator.Payload; closeIfOther closes it).
func payload(dirfd int, stored string, typ uint32) (int, string, error) {
	return cryptomator.Payload(dirfd, stored, cryptomator.KindOf(typ))
}

func closeIfOther(fd, other int) {
	if fd != other {
		unix.Close(fd)
	}
}

// conflicts shows a sync tool's copy of an entry (a marker before .c9r or .c9s: Syncthing's
// "X.sync-conflict-….c9r", Dropbox's "X (conflicted copy …).c9r", Cryptomator's own
// "X (1).c9r") beside its original, under layout.ConflictName's name, as a gocryptfs mount
// shows them.
func (t *cryptomatorTree) conflicts(s *dirStream, found map[string]storedEntry) []fuse.DirEntry {
	n, dirfd, id := s.n, s.dir.fd, string(s.iv)
	taken := s.taken(found)
	var out []fuse.DirEntry
	for _, e := range s.failed {
		c, plain, ok := cryptomator.ParseCopy(dirfd, t.names, id, e.Name, t.threshold)
		if !ok {
			s.hidden(e)
			continue
		}
		de := e.DirEntry
		if de.Mode&syscall.S_IFMT == syscall.S_IFDIR {
			k, err := cryptomator.FolderKind(dirfd, e.Name)
			if err != nil {
				n.fsys.log.Printf("vfs: directory inode %d: conflict copy %q: %v", n.StableAttr().Ino, e.Name, err)
				continue
			}
			de.Mode, de.Ino = k.Mode(), 0
		}
		de.Name = layout.ConflictName(plain, c, taken)
		found[de.Name] = storedEntry{stored: e.Name, long: cryptomator.IsShortened(c.Base)}
		out = append(out, de)
	}
	return out
}
