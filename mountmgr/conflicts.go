package mountmgr

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/vault"
)

// Conflicts of a mounted vault. The daemon holds the vault's key, so it lists the sync
// tools' conflicts with vault.Conflicts, as for a locked vault. It settles one through the
// mount point, not in the cipherdir: the mount caches names and attributes, and the kernel
// caches what the mount answered, so a change made behind its back would show stale until
// those caches expire. Before it changes anything it makes the checks vault.Volume.Settle
// makes (vault.Volume.PlanSettle: the copy decrypts whole unless it is deleted), so a copy that
// does not authenticate never gets a clean name through the mount either.

// handleConflicts lists or settles conflicts for a client whose context is ctx (it ends when
// the client hangs up). Either walks the cipherdir with the key, which a big or hostile tree
// makes long: a keyUse, so the client leaving, an unmount or the daemon stopping ends it.
func (d *daemon) handleConflicts(ctx context.Context, req *request) *response {
	m, where, err := d.mountedVault(req.Target)
	if err != nil {
		return &response{Error: toWire(err)}
	}
	if m.v.walk == nil {
		return &response{Error: toWire(fmt.Errorf("%s is a reverse view: it has no sync conflicts to settle", where))}
	}
	use, err := d.useKeys(ctx, m)
	if err != nil {
		return &response{Error: toWire(err)}
	}
	defer use.release()
	ctx = use.ctx
	what := "settling of a conflict"
	if req.Op == opConflicts {
		what = "conflicts listing"
	}
	failed := func(err error) *response {
		err = use.ended(err, m.info.CipherDir, what)
		if use.clientLeft() {
			d.log.Printf("%s of %s: the client went away; stopped", req.Op, m.info.CipherDir)
		} else {
			// The error names plaintext paths: the log gets its kind only.
			d.log.Printf("%s of %s failed (%s)", req.Op, m.info.CipherDir, KindOf(err))
		}
		return &response{Error: toWire(err)}
	}
	if req.Op == opConflicts {
		list, err := m.v.walk.Conflicts(ctx)
		if err != nil {
			return failed(err)
		}
		return &response{Conflicts: wiredList(list)} // never nil: an empty list is no error
	}
	if req.Settle == nil {
		return &response{Error: &wireError{Code: codeBadRequest, Msg: "settle_conflict request without a conflict"}}
	}
	done, err := d.settleThroughMount(ctx, m, where, *req.Settle)
	if err != nil {
		return failed(err)
	}
	d.log.Printf("settled a conflict in %s through %s (kept %s)", m.info.CipherDir, where, req.Settle.Keep)
	return &response{Settled: &wired[vault.Settled]{done}}
}

// mountedVault returns the live mount of the vault target names (its cipherdir or mount
// point, by identity) and where it is mounted now.
func (d *daemon) mountedVault(target string) (*mount, string, error) {
	mp := d.findTarget(target)
	d.mu.Lock()
	m := d.mounts[mp]
	d.mu.Unlock()
	if mp == "" || m == nil || m.fs == nil {
		return nil, "", ErrorOf(ErrNotMounted, "%s is not mounted by this daemon", target)
	}
	where, here := d.locate(m)
	if !here {
		return nil, "", ErrorOf(ErrNotMounted, "%s is no longer mounted in this mount namespace", m.info.CipherDir)
	}
	return m, where, nil
}

// settleThroughMount checks the conflict s names with the mount's key, then renames or
// removes it through the mount at where. Every path is resolved beneath the mount's root, on
// the mount alone, without following symlinks: the listing's paths never cross one.
func (d *daemon) settleThroughMount(ctx context.Context, m *mount, where string, s settleRequest) (vault.Settled, error) {
	if m.info.ReadOnly {
		return vault.Settled{}, fmt.Errorf("%s is mounted read-only: unmount it, or mount it writable, to settle its conflicts", m.info.CipherDir)
	}
	plan, err := m.v.walk.PlanSettle(ctx, string(s.Path), s.Keep)
	if err != nil {
		return vault.Settled{}, err
	}
	if !plan.Mount {
		// Settled in the cipherdir in one step, which the mount sees as any change behind it.
		return m.v.walk.Settle(ctx, string(s.Path), s.Keep)
	}
	entry, made := plan.Entry, plan.Made
	root, err := unix.Open(where, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return vault.Settled{}, fmt.Errorf("opening the mount point %s: %w", where, err)
	}
	defer unix.Close(root)
	var st unix.Stat_t
	if err := unix.Fstat(root, &st); err != nil || (vault.ID{Dev: st.Dev, Ino: st.Ino}) != m.root {
		return vault.Settled{}, ErrorOf(ErrNotMounted, "%s is no longer the mount of %s", where, m.info.CipherDir)
	}
	mnt := beneath{root: root}
	if entry.Kind != vault.ConflictFolderMadeTwice {
		return vault.Settled{}, mnt.settle(entry, s.Keep)
	}
	// A folder made twice: each entry made under the copy's IV moves into the folder under
	// its own name, or keeps the name it shows under (with the marker) where the folder has
	// that name, as vault.Volume.Settle does. Then the copies of gocryptfs.diriv, which the
	// mount never shows, go in the cipherdir: with nothing left under them, that settle moves
	// nothing and only removes them.
	var done vault.Settled
	for _, e := range made {
		if err := ctx.Err(); err != nil {
			return done, err
		}
		to, renamed := e.Of, false
		err := mnt.rename(e.Path, e.Of, true)
		if errors.Is(err, unix.EEXIST) {
			to, renamed = e.Path, true
			err = mnt.settle(e, vault.KeepBoth)
		}
		if err != nil {
			return done, err
		}
		done.Moved = append(done.Moved, vault.MovedEntry{Path: e.Path, Of: e.Of, To: to, Renamed: renamed})
	}
	rest, err := m.v.walk.Settle(ctx, entry.Path, vault.KeepBoth)
	done.DirIVCopies = rest.DirIVCopies
	done.Moved = append(done.Moved, rest.Moved...) // made there meanwhile (a sync): moved in the cipherdir
	return done, err
}

// beneath reaches paths of a mount relative to its root directory.
type beneath struct{ root int }

// parent opens the directory of the slash-separated path p beneath the root and returns it
// with p's last element.
func (b beneath) parent(p string) (int, string, error) {
	dir, name := path.Split(strings.Trim(p, "/"))
	if name == "" || name == "." || name == ".." {
		return -1, "", fmt.Errorf("%q: not a path in the vault", p)
	}
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		dir = "."
	}
	fd, err := unix.Openat2(b.root, filepath.FromSlash(dir), &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_XDEV,
	})
	if err != nil {
		return -1, "", fmt.Errorf("opening the folder of a conflict copy: %w", err)
	}
	return fd, name, nil
}

// rename renames from to to beneath the root; noReplace fails with EEXIST if to exists.
func (b beneath) rename(from, to string, noReplace bool) error {
	ffd, fname, err := b.parent(from)
	if err != nil {
		return err
	}
	defer unix.Close(ffd)
	tfd, tname, err := b.parent(to)
	if err != nil {
		return err
	}
	defer unix.Close(tfd)
	var flags uint
	if noReplace {
		flags = unix.RENAME_NOREPLACE
	}
	if err := unix.Renameat2(ffd, fname, tfd, tname, flags); err != nil {
		return fmt.Errorf("renaming a conflict copy through the mount: %w", err)
	}
	return nil
}

// settle settles the conflict copy e (not a folder made twice) with keep.
func (b beneath) settle(e vault.ConflictEntry, keep vault.Keep) error {
	switch keep {
	case vault.KeepOriginal:
		fd, name, err := b.parent(e.Path)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		if err := unix.Unlinkat(fd, name, 0); err != nil {
			return fmt.Errorf("removing a conflict copy through the mount: %w", err)
		}
		return nil
	case vault.KeepCopy:
		return b.rename(e.Path, e.Of, false)
	}
	// Keep both: the copy keeps the name it shows under, stored properly. A rename onto the
	// same name changes nothing, so it goes through a temporary name; neither step replaces
	// anything, and after a crash between them the copy is a file of its own.
	dir, name := path.Split(e.Path)
	tmp := dir + strings.Replace(name, " (conflict ", " (kept conflict ", 1)
	if tmp == e.Path {
		tmp = e.Path + " (kept)"
	}
	if err := b.rename(e.Path, tmp, true); err != nil {
		return err
	}
	if err := b.rename(tmp, e.Path, true); err != nil {
		return fmt.Errorf("kept both, but the copy is now %s: %w", path.Base(tmp), err)
	}
	return nil
}

// Conflicts lists the sync tools' conflicts of the vault mounted from or at target, with
// the key the daemon holds (see vault.Volume.Conflicts).
func (c *Client) Conflicts(ctx context.Context, target string) ([]vault.ConflictEntry, error) {
	resp, err := c.call(ctx, request{Op: opConflicts, Target: target})
	if err != nil {
		return nil, err
	}
	if resp.Conflicts == nil {
		return nil, nil
	}
	list := make([]vault.ConflictEntry, len(resp.Conflicts))
	for i, e := range resp.Conflicts {
		list[i] = e.v
	}
	return list, nil
}

// SettleConflict settles the conflict listed at path p of the vault mounted from or at
// target, through the mount, after the checks vault.Volume.Settle makes.
func (c *Client) SettleConflict(ctx context.Context, target, p string, keep vault.Keep) (vault.Settled, error) {
	resp, err := c.call(ctx, request{Op: opSettleConflict, Target: target, Settle: &settleRequest{Path: wireText(p), Keep: keep}})
	if err != nil {
		return vault.Settled{}, err
	}
	if resp.Settled == nil {
		return vault.Settled{}, fmt.Errorf("%w: settle reply without a result", ErrDaemon)
	}
	return resp.Settled.v, nil
}
