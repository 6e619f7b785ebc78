package convert

// The crash safety of a conversion (see the package doc): the work directory and its state
// file, the swap, and what a later run does with what an interrupted one left.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/internal/atomicfile"
	"github.com/vaultui/vaultui/vault"
)

// Names of the conversion's work directory beside the vault and what it holds.
const (
	workSuffix = ".vaultui-convert"
	stateFile  = "state.json"
	newDirName = "new"
)

// state is WORK/state.json: the two sides' ciphers (Side.Cipher) and formats (their IDs; ""
// is gocryptfs, the only format of the first state files), and where the old vault goes.
type state struct {
	From       string `json:"from"`
	To         string `json:"to"`
	Keep       string `json:"keep"`
	FromFormat string `json:"from_format,omitempty"`
	ToFormat   string `json:"to_format,omitempty"`

	from, to Side // parsed
}

// readState reads WORK/state.json; a missing work directory or state file wraps
// os.ErrNotExist.
func readState(work string) (*state, error) {
	p := filepath.Join(work, stateFile)
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("reading the state of an interrupted conversion: %w", err)
	}
	var st state
	err = json.Unmarshal(b, &st)
	if err == nil {
		st.from.Format, err = vault.FormatByID(st.FromFormat)
	}
	if err == nil {
		st.to.Format, err = vault.FormatByID(st.ToFormat)
	}
	if err != nil || st.From == "" || st.To == "" || st.Keep == "" {
		return nil, fmt.Errorf("%s: %w: the state of an interrupted conversion does not parse; move %s away and run again", p, vault.ErrCorrupt, work)
	}
	st.from.Cipher, st.to.Cipher = st.From, st.To
	return &st, nil
}

// swapped reports whether the interrupted conversion of the vault at dir got past the swap:
// the vault's place holds the new side and WORK/new the old one (after an exchange), or the
// vault's place is empty, the old vault is at its keeping place and WORK/new holds the new
// one (between the two renames). Any other mix is an error: nothing is touched then.
func (st *state) swapped(dir string) (bool, error) {
	from, to := st.from.key(), st.to.key()
	newDir := filepath.Join(dir+workSuffix, newDirName)
	atDir, atNew := sideAt(dir).key(), sideAt(newDir).key()
	_, dirErr := os.Lstat(dir)
	_, newErr := os.Lstat(newDir)
	switch {
	case errors.Is(dirErr, os.ErrNotExist) && atNew == to && sideAt(st.Keep).key() == from:
		return true, nil
	case atDir == to && (atNew == from || errors.Is(newErr, os.ErrNotExist)):
		return true, nil
	case atDir == from && atNew != from:
		return false, nil
	}
	return false, fmt.Errorf("%s: an interrupted conversion from %s to %s left a state vaultui does not recognise (%s: %q, %s: %q); nothing was changed: check both by hand",
		dir, st.from.Label(), st.to.Label(), dir, atDir, newDir, atNew)
}

// recoverWork deals with what an interrupted conversion left in dir's work directory: it
// finishes a swapped one (res, true) or removes a half-built tree (res.Cleaned). Without a
// work directory it does nothing.
func recoverWork(dir string) (res *Result, swapped bool, err error) {
	work := dir + workSuffix
	res = &Result{Dir: dir}
	st, err := readState(work)
	if errors.Is(err, os.ErrNotExist) {
		// Either no conversion, or one stopped before its state file was in place (only a
		// temporary state file can be there then) or after the old vault was moved away.
		names, rerr := readDirNames(unix.AT_FDCWD, work)
		if errors.Is(rerr, os.ErrNotExist) {
			return res, false, nil
		}
		if rerr != nil {
			return nil, false, &os.PathError{Op: "open", Path: work, Err: rerr}
		}
		for _, n := range names {
			if n != stateFile+".tmp" {
				return nil, false, fmt.Errorf("%s holds %s but no %s: not a conversion vaultui recognises; move it away and run again", work, n, stateFile)
			}
		}
		return res, false, removeWork(work)
	}
	if err != nil {
		return nil, false, err
	}
	res.From, res.To, res.OldDir = st.from, st.to, st.Keep
	if swapped, err = st.swapped(dir); err != nil {
		return nil, false, err
	}
	newDir := filepath.Join(work, newDirName)
	if !swapped {
		if err := removeTree(newDir); err != nil {
			return nil, false, fmt.Errorf("removing the half-built vault an interrupted conversion left in %s: %w", newDir, err)
		}
		res.Cleaned = true
		return res, false, removeWork(work)
	}
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		// Between the two renames of a file system without RENAME_EXCHANGE.
		res.Swap = SwapRenames
		if err := os.Rename(newDir, dir); err != nil {
			return nil, false, err
		}
		if err := syncDirs(filepath.Dir(dir), work); err != nil {
			return nil, false, err
		}
	} else if _, err := os.Lstat(newDir); err == nil {
		if err := moveOld(newDir, st.Keep); err != nil {
			return nil, false, err
		}
	}
	return res, true, removeWork(work)
}

// into does what every conversion does around building its new vault: it removes what an
// interrupted run left before its swap, records the conversion in the work directory's
// state file, has build make and check the new vault in WORK/new, syncs it, swaps it in and
// removes the work directory. Until the swap, an error (or a crash, on the next run) removes
// what was built; the old vault is only read.
func into(cipherdir string, plan *Plan, opts Options, res *Result, build func(newDir string) error) (err error) {
	dir := plan.Dir
	r, _, err := recoverWork(dir)
	if err != nil {
		return err
	}
	res.Cleaned = r.Cleaned
	work := plan.Work
	if err := os.Mkdir(work, 0o700); err != nil {
		return fmt.Errorf("creating the work directory: %w", err)
	}
	st, err := json.Marshal(state{From: plan.From.Cipher, To: plan.To.Cipher, Keep: plan.KeepOld,
		FromFormat: plan.From.Format.ID, ToFormat: plan.To.Format.ID})
	if err != nil {
		return err
	}
	statePath := filepath.Join(work, stateFile)
	if err := atomicfile.Replace(atomicfile.OS{}, statePath, statePath+".tmp", st, 0o600); err != nil {
		removeWork(work)
		return fmt.Errorf("writing %s: %w", statePath, err)
	}
	if err := syncDirs(work, filepath.Dir(work)); err != nil {
		removeWork(work)
		return err
	}

	newDir := filepath.Join(work, newDirName)
	swapped := false
	defer func() {
		if err != nil && !swapped {
			// The old vault was only read: remove what was built, keep the error.
			if rerr := removeTree(newDir); rerr == nil {
				removeWork(work)
			}
		}
	}()
	if err = build(newDir); err != nil {
		return err
	}
	if opts.Progress != nil {
		opts.Progress(Progress{Phase: PhaseSwap})
	}
	// Everything of the new vault reaches the disk before it becomes the vault.
	if err = syncFS(newDir); err != nil {
		return err
	}
	if err = checkMounted(cipherdir, dir, opts.MountedAt); err != nil {
		return err
	}
	res.Swap, err = swapIn(dir, newDir, plan.KeepOld)
	swapped = res.Swap != ""
	if err == nil {
		err = removeWork(work)
	}
	if err != nil && swapped {
		// Stopping here leaves what a crash here would: the state file says what is left to
		// do, or, once removeWork has taken it, an empty work directory; the next run
		// finishes or removes it.
		return fmt.Errorf("%s: the conversion to %s stopped after its swap: %w; nothing is lost: run convert again to finish it", dir, plan.To, err)
	}
	return err
}

// syncFS flushes the file system holding dir (syncfs): one call for the whole new tree.
func syncFS(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	defer unix.Close(fd)
	if err := unix.Syncfs(fd); err != nil {
		return fmt.Errorf("syncfs %s: %w", dir, err)
	}
	return nil
}

// swapIn puts the new vault at newDir in dir's place and the old one at keep: one
// renameat2(RENAME_EXCHANGE) then a rename, or, where the file system cannot exchange, two
// renames. method is set as soon as the old vault has left dir's place, even with an error:
// from then on only finishing (a later run) is safe, not removing newDir.
func swapIn(dir, newDir, keep string) (method string, err error) {
	err = unix.Renameat2(unix.AT_FDCWD, newDir, unix.AT_FDCWD, dir, unix.RENAME_EXCHANGE)
	switch err {
	case nil:
		if err := syncDirs(filepath.Dir(dir), filepath.Dir(newDir)); err != nil {
			return SwapExchange, err
		}
		return SwapExchange, moveOld(newDir, keep)
	case unix.EINVAL, unix.ENOSYS, unix.EOPNOTSUPP:
		if err := os.Rename(dir, keep); err != nil {
			return "", fmt.Errorf("moving the old vault to %s: %w", keep, err)
		}
		if err := syncDirs(filepath.Dir(keep)); err != nil {
			return SwapRenames, fmt.Errorf("%w (the old vault is at %s; run convert again to finish)", err, keep)
		}
		if err := os.Rename(newDir, dir); err != nil {
			return SwapRenames, fmt.Errorf("moving the new vault to %s: %w (the old vault is at %s; run convert again to finish)", dir, err, keep)
		}
		return SwapRenames, syncDirs(filepath.Dir(dir))
	}
	return "", fmt.Errorf("renameat2 RENAME_EXCHANGE %s %s: %w", newDir, dir, err)
}

// moveOld renames the old vault (at from, after the swap) to keep.
func moveOld(from, keep string) error {
	if err := os.Rename(from, keep); err != nil {
		return fmt.Errorf("moving the old vault to %s: %w (it is still at %s)", keep, err, from)
	}
	if err := syncDirs(filepath.Dir(keep), filepath.Dir(from)); err != nil {
		return fmt.Errorf("the old vault is at %s, but the move may not be on disk: %w", keep, err)
	}
	return nil
}

// removeWork removes the state file and the work directory, in that order: a crash between
// leaves an empty work directory, which the next run removes.
func removeWork(work string) error {
	for _, n := range []string{stateFile + ".tmp", stateFile} {
		if err := os.Remove(filepath.Join(work, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if err := syncDirs(work); err != nil {
		return err
	}
	if err := os.Remove(work); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing %s: %w", work, err)
	}
	return syncDirs(filepath.Dir(work))
}

// syncDirs fsyncs each directory in dirs, making the renames, creations and removals in them
// durable; it stops at the first error. Each error counts: a conversion that went on after
// one could report success for a swap that is not on disk. Stopping leaves what a crash at
// that point leaves, which the next run finishes or cleans up (TestConvertKilled).
func syncDirs(dirs ...string) error {
	for _, d := range dirs {
		if err := atomicfile.SyncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// readDirNames lists the directory name in dirfd (AT_FDCWD: a path); a FIFO is ENOTDIR, no hang.
func readDirNames(dirfd int, name string) ([]string, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	return f.Readdirnames(-1)
}

// removeTree removes the tree at dir, which a conversion built: directories it left
// read-only are made writable first. A missing dir is not an error.
func removeTree(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	err = removeContents(fd)
	unix.Close(fd)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if err := os.Remove(dir); err != nil {
		return err
	}
	return syncDirs(filepath.Dir(dir))
}

func removeContents(dirfd int) error {
	unix.Fchmod(dirfd, 0o700)
	names, err := readDirNames(dirfd, ".")
	if err != nil {
		return err
	}
	for _, name := range names {
		err := unix.Unlinkat(dirfd, name, 0)
		if err == unix.EISDIR || err == unix.EPERM {
			cfd, oerr := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if oerr != nil {
				// No read permission: make it readable first.
				unix.Fchmodat(dirfd, name, 0o700, 0)
				if cfd, oerr = unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); oerr != nil {
					return fmt.Errorf("%s: %w", name, oerr)
				}
			}
			err = removeContents(cfd)
			unix.Close(cfd)
			if err != nil {
				return err
			}
			err = unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR)
		}
		if err != nil && err != unix.ENOENT {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}
