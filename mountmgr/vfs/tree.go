package vfs

import (
	"strings"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/layout"
)

// The FUSE operations (node*.go, readdir.go, file.go) are written once for every vault
// format. What a format decides is behind tree: what a directory's names are encrypted
// under, what a plaintext name is stored as, where an entry's object is (the file, folder or
// symlink whose attributes and content are the node's), and how entries are made, removed
// and renamed so that a crash leaves the old or the new state. gocryptfsTree (below) is the
// gocryptfs format; cryptomatorTree (tree_cryptomator.go) is Cryptomator's vault format 8.
//
// Everything runs relative to directory descriptors (dirs.go): a tree method gets the
// descriptor of the folder holding an entry and the entry's stored name in it.
type tree interface {
	// dirKey returns what the names in directory node n are encrypted under (gocryptfs: its
	// IV; Cryptomator: its directory ID); fd is n's folder.
	dirKey(n *node, fd int) ([]byte, error)
	// openDir opens the folder of the directory stored in parentfd (O_PATH).
	openDir(parentfd int, stored string) (fd int, key []byte, err error)
	// storedEntry returns what plain is stored as in a directory of key key.
	storedEntry(plain string, key []byte, root bool) (storedEntry, syscall.Errno)
	// listed turns a stored name read by listing s (its folder s.dir, key s.iv) into the
	// name and type the mount shows; hide is set for the format's own files, and err for
	// names that do not decrypt. typ is the stored entry's own type, as listed.
	listed(s *dirStream, stored string, typ uint32) (plain string, e storedEntry, shown uint32, hide bool, err error)
	// stat stats the object of the entry stored in dirfd, typed as the mount shows it; key
	// is a directory's key when stat had to read it (else nil).
	stat(dirfd int, stored string) (e entryID, key []byte, err error)
	// place returns where the object of the node n, stored in dirfd, is: a directory
	// descriptor (d, borrowed from the caller or owned) and a name in it.
	place(n *node, d dirRef, stored string) (dirRef, string, syscall.Errno)
	// symlinkLen is the length of a symlink target from its stored size, if it tells.
	symlinkLen(size int64) (int, bool)
	// readlink returns the plaintext target of the symlink object name in dirfd.
	readlink(dirfd int, name string) ([]byte, error)
	// filePlace returns where the contents of the regular file stored in dirfd are: dirfd or
	// a descriptor of the entry's folder (closeIfOther closes it), and a name in it.
	filePlace(dirfd int, stored string) (int, string, error)

	// create makes a regular file and returns a descriptor of it (flags and mode as openat
	// takes them; O_CREAT included).
	create(dirfd int, e storedEntry, flags int, mode uint32) (int, error)
	// mkdir makes a directory and returns its key.
	mkdir(dirfd int, e storedEntry, mode uint32) ([]byte, error)
	symlink(dirfd int, e storedEntry, target string) error
	// unlink removes a file or symlink; rmdir an empty directory.
	unlink(dirfd int, e storedEntry) error
	rmdir(dirfd int, e storedEntry) error
	// rename moves src in sd to dst in dd with renameat2's flags.
	rename(sd int, src storedEntry, dd int, dst storedEntry, flags uint32) error
	// chown changes the owner of the object of the entry stored in dirfd.
	chown(dirfd int, stored string, uid, gid int) error
	// openKnown opens the folder of a directory whose key is key from the vault's root, when
	// the key names it (a Cryptomator ID), without its ancestors; false when it cannot.
	openKnown(key []byte) (int, bool)
	// respelled reports whether an entry of the plaintext name may be stored under another
	// spelling than storedEntry gives, found by listing its directory (a Cryptomator name
	// not in NFC, which an unnormalizing writer stored as given).
	respelled(plain string) bool
	// conflicts returns the entries that show those of listing s whose names did not
	// decrypt and are sync tools' conflict copies (under layout.ConflictName's names), and
	// records their stored entries in found; the others stay hidden and are logged.
	conflicts(s *dirStream, found map[string]storedEntry) []fuse.DirEntry

	// makeEntry makes an entry with mk (a hard link, a special file) and what the format
	// stores beside it (gocryptfs: a long name's .name file); only called where the format
	// has hardLinks or specialFiles.
	makeEntry(dirfd int, e storedEntry, mk func() error) error
	// configFile reports whether name, in the root directory's folder, is the vault's
	// configuration, which the view does not show.
	configFile(name string) bool

	// eventEntry returns the stored name of the entry that a change of name in a
	// directory's folder is about (watch.go): gocryptfs's .name file is its long name's.
	eventEntry(name string) string
	// entryFolder reports whether the entry stored as stored, of type mode, is a folder of
	// the format's that says what the entry is or holds its object (Cryptomator: a .c9s
	// folder, a directory's or a symlink's folder): the watch follows its changes too.
	entryFolder(stored string, mode uint32) bool
	// beingMade reports whether the entry stored in dirfd is a folder that does not hold
	// what makes it an entry yet (Cryptomator: a folder without its payload, as a sync tool
	// makes one before the files in it): the watch follows it until it does.
	beingMade(dirfd int, stored string) bool

	// Capabilities: the format stores hard links and special files (FIFOs, sockets, devices).
	hardLinks() bool
	specialFiles() bool
}

// gocryptfsTree is the gocryptfs format: an entry is stored under its encrypted name in its
// parent's folder (a name too long for the file system as a hash, with a .name file beside
// it), a directory is a folder with its IV in gocryptfs.diriv, a symlink a symlink to its
// encrypted target. With PlaintextNames (f.names nil) names and targets are stored as they
// are.
type gocryptfsTree struct{ f *fsys }

func (t gocryptfsTree) openKnown([]byte) (int, bool) { return -1, false }

func (t gocryptfsTree) eventEntry(name string) string {
	if t.f.names == nil {
		return name
	}
	return strings.TrimSuffix(name, crypto.LongNameSuffix) // a long name's .name file
}

// entryFolder: an entry is its object itself (a directory's folder is the directory).
func (t gocryptfsTree) entryFolder(string, uint32) bool { return false }

// beingMade: an entry is whole as soon as its name is there.
func (t gocryptfsTree) beingMade(int, string) bool { return false }

func (t gocryptfsTree) respelled(string) bool { return false }

func (t gocryptfsTree) chown(dirfd int, stored string, uid, gid int) error {
	return unix.Fchownat(dirfd, stored, uid, gid, unix.AT_SYMLINK_NOFOLLOW)
}

func (t gocryptfsTree) dirKey(n *node, fd int) ([]byte, error) {
	if !t.f.perDirIV {
		return t.f.zeroIV, nil
	}
	return layout.ReadDirIV(fd)
}

func (t gocryptfsTree) openDir(parentfd int, stored string) (int, []byte, error) {
	fd, err := layout.OpenDirPath(parentfd, stored)
	return fd, nil, err
}

func (t gocryptfsTree) storedEntry(plain string, iv []byte, root bool) (storedEntry, syscall.Errno) {
	if t.f.names == nil {
		if root && plain == crypto.ConfName {
			return storedEntry{}, syscall.EPERM
		}
		return storedEntry{stored: plain}, 0
	}
	stored, encoded, long, err := t.f.names.StoredName(plain, iv)
	if err != nil {
		// ValidName refused it: the kernel never sends "", "." or names with '/' or NUL.
		return storedEntry{}, syscall.EINVAL
	}
	return storedEntry{stored: stored, encoded: encoded, long: long}, 0
}

func (t gocryptfsTree) listed(s *dirStream, stored string, typ uint32) (string, storedEntry, uint32, bool, error) {
	f := t.f
	if f.names == nil {
		return stored, storedEntry{stored: stored}, typ, false, nil
	}
	if stored == crypto.DirIVName || crypto.IsLongNameFile(stored) || layout.IsTemp(stored) {
		return "", storedEntry{}, 0, true, nil // a directory half made or removed (layout.MakeDir)
	}
	encoded := stored
	if crypto.IsLongName(stored) {
		var err error
		if encoded, err = layout.ReadLongName(s.dir.fd, stored, f.names); err != nil {
			return "", storedEntry{}, 0, false, err
		}
	}
	plain, err := f.names.DecryptEntry(stored, encoded, s.iv)
	if err != nil {
		return "", storedEntry{}, 0, false, err
	}
	e := storedEntry{stored: stored, encoded: encoded, long: stored != encoded}
	if !layout.PlausibleName(plain) && t.madeUnderOtherIV(s, stored) {
		return "", storedEntry{}, 0, false, &byChance{plain: plain, e: e}
	}
	return plain, e, typ, false, nil
}

// byChance is the error for a name that decrypts under its directory's IV only by chance: to a
// name no one gives (layout.PlausibleName), where under the IV of a copy of the directory's
// gocryptfs.diriv it decrypts to a plausible one. Names carry no authentication, so a name
// made under another IV decrypts about once in 256; vault's walk places such a name by the
// same rule (Vault.madeUnderCopy), and so does "vaultui conflicts", which renames it through
// the mount by the name the walk gave it. conflicts shows it under that name.
type byChance struct {
	plain string      // what it decrypts to under the directory's IV
	e     storedEntry // as stored
}

func (b *byChance) Error() string {
	return "decrypts by chance (to a name that is not plausible): made under the IV of a copy of gocryptfs.diriv"
}

// madeUnderOtherIV reports whether the stored name, which decrypts under the directory's IV to
// a name that is not plausible, decrypts to a plausible one under the IV of a copy of the
// directory's gocryptfs.diriv. The copies are looked for once per listing, and only in a
// listing that has such a name, so a directory without them costs nothing more.
func (t gocryptfsTree) madeUnderOtherIV(s *dirStream, stored string) bool {
	if !t.f.perDirIV {
		return false // no gocryptfs.diriv files, so no copies of one
	}
	if !s.otherIVsRead {
		s.otherIVs, s.otherIVsRead = dirIVCopies(s.dir.fd), true
	}
	for _, o := range s.otherIVs {
		if p, err := layout.EntryUnderIV(s.dir.fd, stored, o.IV, t.f.names); err == nil && layout.PlausibleName(p) {
			return true
		}
	}
	return false
}

// dirIVCopies returns the IVs of the sync tools' copies of the gocryptfs.diriv of the directory
// open at dirfd, in listing order, as conflicts finds them; nil when it cannot be listed (its
// names then go by the directory's IV alone, as they would without copies).
func dirIVCopies(dirfd int) []layout.OtherIV {
	var out []layout.OtherIV
	layout.ScanDirNames(dirfd, func(name string) {
		if !mayBeCopyOf(name, crypto.DirIVName) {
			return // most names: spares a large directory five regular expressions a name
		}
		c, ok := layout.ParseConflict(name, func(base string) bool { return base == crypto.DirIVName })
		if !ok {
			return
		}
		if iv, err := layout.ReadDirIVFile(dirfd, name); err == nil {
			out = append(out, layout.OtherIV{IV: iv, Conflict: c})
		}
	})
	return out
}

// mayBeCopyOf reports whether name could be base with a marker inserted somewhere (as
// layout.ParseConflict takes one out): it starts with a part of base and ends with the rest.
func mayBeCopyOf(name, base string) bool {
	if len(name) <= len(base) {
		return false
	}
	pre := 0
	for pre < len(base) && name[pre] == base[pre] {
		pre++
	}
	suf := 0
	for suf < len(base) && name[len(name)-1-suf] == base[len(base)-1-suf] {
		suf++
	}
	return pre+suf >= len(base)
}

func (t gocryptfsTree) stat(dirfd int, stored string) (entryID, []byte, error) {
	e, err := statAt(dirfd, stored)
	return e, nil, err
}

func (t gocryptfsTree) place(n *node, d dirRef, stored string) (dirRef, string, syscall.Errno) {
	return d, stored, 0
}

func (t gocryptfsTree) filePlace(dirfd int, stored string) (int, string, error) {
	return dirfd, stored, nil
}

func (t gocryptfsTree) symlinkLen(size int64) (int, bool) {
	if t.f.names == nil {
		return int(size), true // PlaintextNames: targets are stored as they are
	}
	return t.f.enc.SymlinkTargetLen(int(size))
}

func (t gocryptfsTree) readlink(dirfd int, name string) ([]byte, error) {
	buf, err := layout.Readlink(dirfd, name)
	if err != nil || t.f.names == nil {
		return buf, err
	}
	target, err := t.f.enc.DecryptSymlink(string(buf))
	if err != nil {
		return nil, err
	}
	return []byte(target), nil
}

// makeEntry creates the entry e with mk. A long name's .name file is written first and
// removed again when mk fails, so a .name file is never left without its entry; mk cleans up
// after itself.
func (t gocryptfsTree) makeEntry(dirfd int, e storedEntry, mk func() error) error {
	createdName := false
	if e.long {
		var err error
		if createdName, err = layout.WriteLongName(dirfd, e.stored, e.encoded); err != nil {
			return err
		}
	}
	if err := mk(); err != nil {
		if createdName {
			t.removeLongName(dirfd, e)
		}
		return err
	}
	return nil
}

// removeLongName removes the .name file of a long name whose entry is gone. The operation
// has done what was asked either way, so a failure is only logged, as gocryptfs does:
// listings never show the .name file left behind, only the log can tell that it is there.
func (t gocryptfsTree) removeLongName(dirfd int, e storedEntry) {
	if !e.long {
		return
	}
	if err := layout.RemoveLongName(dirfd, e.stored); err != nil {
		t.f.log.Printf("vfs: removing %s%s: %v", e.stored, crypto.LongNameSuffix, err)
	}
}

func (t gocryptfsTree) create(dirfd int, e storedEntry, flags int, mode uint32) (fd int, err error) {
	err = t.makeEntry(dirfd, e, func() error {
		fd, err = t.f.openNew(dirfd, e.stored, flags, mode)
		return err
	})
	return fd, err
}

// openNew creates and opens the regular file name in dirfd (flags and mode as openat takes
// them, O_CREAT included). Where this process's umask strips bits of mode that the caller's
// did not, the mode is set again; if that fails the new file goes.
func (f *fsys) openNew(dirfd int, name string, flags int, mode uint32) (int, error) {
	fd, err := layout.OpenFile(dirfd, name, flags, mode&07777, nil)
	if err == nil && mode&f.umask != 0 {
		if err = unix.Fchmod(fd, mode&07777); err != nil {
			unix.Close(fd)
			unix.Unlinkat(dirfd, name, 0)
		}
	}
	return fd, err
}

func (t gocryptfsTree) mkdir(dirfd int, e storedEntry, mode uint32) (iv []byte, err error) {
	err = t.makeEntry(dirfd, e, func() error {
		// Built out of sight and renamed into place, so that a crash never leaves it without
		// its diriv. The kernel holds the parent locked, so nobody creates the name meanwhile.
		iv, err = layout.MakeDir(dirfd, e.stored, mode&07777, t.f.perDirIV)
		return err
	})
	return iv, err
}

func (t gocryptfsTree) symlink(dirfd int, e storedEntry, target string) error {
	stored := target
	if t.f.names != nil {
		stored = t.f.enc.EncryptSymlink(target)
	}
	return t.makeEntry(dirfd, e, func() error { return unix.Symlinkat(stored, dirfd, e.stored) })
}

func (t gocryptfsTree) unlink(dirfd int, e storedEntry) error {
	if err := unix.Unlinkat(dirfd, e.stored, 0); err != nil {
		return err
	}
	t.removeLongName(dirfd, e)
	return nil
}

func (t gocryptfsTree) rmdir(dirfd int, e storedEntry) error {
	if err := t.rmdirIfEmpty(dirfd, e.stored); err != nil {
		return err
	}
	t.removeLongName(dirfd, e)
	return nil
}

// rmdirIfEmpty removes the cipher directory stored in dirfd if it holds nothing but its
// diriv (its .name file stays; layout.RemoveDir says what a crash leaves).
func (t gocryptfsTree) rmdirIfEmpty(dirfd int, stored string) error {
	cfd, names, done, err := listForRemoval(dirfd, stored)
	if err != nil {
		return err
	}
	defer done()
	return layout.RemoveDir(dirfd, cfd, stored, names, t.f.perDirIV)
}

// listForRemoval opens the folder stored in dirfd (openDirForRemoval) and lists it; done
// closes it and gives it its mode back.
func listForRemoval(dirfd int, stored string) (cfd int, names []string, done func(), err error) {
	cfd, restore, err := openDirForRemoval(dirfd, stored)
	if err != nil {
		return -1, nil, nil, err
	}
	done = func() { unix.Close(cfd); restore() }
	if names, err = layout.ReadDirNames(cfd); err != nil {
		done()
		return -1, nil, nil, err
	}
	return cfd, names, done, nil
}

// openDirForRemoval opens the folder stored in dirfd for listing and removing its entries.
// One not readable (mode 0, say) may still be removed when empty, as on a local file system:
// it is made accessible, and restore gives it its mode back if it is still there.
func openDirForRemoval(dirfd int, stored string) (cfd int, restore func(), err error) {
	restore = func() {}
	cfd, err = layout.OpenDir(dirfd, stored)
	if err != unix.EACCES {
		return cfd, restore, err
	}
	e := entry{fd: -1, dirfd: dirfd, name: stored}
	var st unix.Stat_t
	if unix.Fstatat(dirfd, stored, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || e.chmod(0o700) != 0 {
		return -1, restore, err
	}
	restore = func() { e.chmod(st.Mode & 07777) }
	if cfd, err = layout.OpenDir(dirfd, stored); err != nil {
		restore()
	}
	return cfd, restore, err
}

func (t gocryptfsTree) rename(sd int, src storedEntry, dd int, dst storedEntry, flags uint32) error {
	return t.makeEntry(dd, dst, func() error {
		err := unix.Renameat2(sd, src.stored, dd, dst.stored, uint(flags))
		if (err == unix.ENOTEMPTY || err == unix.EEXIST) && flags&(unix.RENAME_NOREPLACE|unix.RENAME_EXCHANGE) == 0 {
			// The target directory may be empty but for its gocryptfs.diriv: remove it the
			// way rmdir does (ENOTEMPTY if it really is not empty), then try again (with
			// RENAME_WHITEOUT too).
			if t.rmdirIfEmpty(dd, dst.stored) == nil {
				err = unix.Renameat2(sd, src.stored, dd, dst.stored, uint(flags))
			}
		}
		if err == nil && flags&(unix.RENAME_EXCHANGE|unix.RENAME_WHITEOUT) == 0 {
			// With RENAME_EXCHANGE both entries still exist under their names, .name files
			// included; with RENAME_WHITEOUT the whiteout takes the old name, and keeps its
			// .name file, or a listing could not show it nor rm remove it.
			t.removeLongName(sd, src)
		}
		return err
	})
}

// conflicts returns the entries that show the failed entries which are conflict copies (of
// an entry, or entries made under the IV of a copy of the directory's gocryptfs.diriv, those
// that decrypt under its own IV by chance included: byChance), or bad names the mount shows
// (Options.BadNames), and records them in conflicts.
func (t gocryptfsTree) conflicts(s *dirStream, conflicts map[string]storedEntry) []fuse.DirEntry {
	n, dirfd, iv := s.n, s.dir.fd, s.iv
	var out []fuse.DirEntry
	taken := s.taken(conflicts)
	show := func(e fuse.DirEntry, plain string, c layout.Conflict, long bool) {
		shown := layout.ConflictName(plain, c, taken)
		conflicts[shown] = storedEntry{stored: e.Name, long: long}
		e.Name = shown
		out = append(out, e)
	}
	var others []layout.OtherIV
	var rest []failedEntry
	for _, e := range s.failed {
		if _, ok := e.err.(*byChance); ok {
			rest = append(rest, e) // it decrypts: no copy of anything
			continue
		}
		c, plain, nameFile, ok := layout.ConflictCopy(dirfd, e.Name, iv, n.fsys.names, n.IsRoot())
		switch {
		case !ok:
			rest = append(rest, e)
		case c.Base == crypto.DirIVName:
			if other, err := layout.ReadDirIVFile(dirfd, e.Name); err == nil {
				others = append(others, layout.OtherIV{IV: other, Conflict: c})
			}
		case plain != "":
			show(e.DirEntry, plain, c, nameFile)
		}
		// Other copies of the format's own files stay hidden: fsck and "vaultui conflicts"
		// report them.
	}
	for _, e := range rest {
		chance, _ := e.err.(*byChance)
		shown := false
		for _, o := range others {
			// The first copy's IV it decrypts under, as vault's walk takes; one that also
			// decrypts under the directory's IV takes the first that gives a plausible name.
			if plain, err := layout.EntryUnderIV(dirfd, e.Name, o.IV, n.fsys.names); err == nil && (chance == nil || layout.PlausibleName(plain)) {
				show(e.DirEntry, plain, o.Conflict, crypto.IsLongName(e.Name)) // a long name has its own .name file
				if chance != nil {
					if _, ok := conflicts[chance.plain]; !ok {
						// What it decrypts to by chance is no name of it: nothing reaches
						// it so (node.storedEntry).
						conflicts[chance.plain] = storedEntry{}
					}
				}
				shown = true
				break
			}
		}
		if !shown && chance != nil {
			// The copy went meanwhile: it shows under what it decrypts to, as without one.
			n.cacheName(iv, chance.plain, chance.e)
			e.Name = chance.plain
			out = append(out, e.DirEntry)
			continue
		}
		if !shown && n.fsys.showsBadName(e.Name) {
			// Shown as gocryptfs's -badname does; its stored name is all the log gets.
			if name := layout.BadName(e.Name, iv, n.fsys.names); !taken(name) {
				n.fsys.log.Printf("vfs: directory inode %d: entry %q does not decrypt, shown as a bad name: %v", n.StableAttr().Ino, e.Name, e.err)
				conflicts[name] = storedEntry{stored: e.Name, long: crypto.IsLongName(e.Name)}
				e.Name = name
				out = append(out, e.DirEntry)
				shown = true
			}
		}
		if !shown {
			s.hidden(e)
		}
	}
	return out
}
