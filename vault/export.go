package vault

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/vault/format"
)

// ExportOptions configure ExportVolume.
type ExportOptions struct {
	// Progress (if not nil) is called after each entry.
	Progress func(FsckProgress)
	// Force exports what a damaged vault still holds, for recovery: blocks that do not
	// decrypt are written as zeros (never their unauthenticated decryption), entries whose
	// names do not decrypt are written under layout.BadName's name, and the export goes on;
	// Damaged gets each damaged item. Without Force the first damage stops the export.
	Force   bool
	Damaged func(Problem)
}

// ExportVolume writes the decrypted tree of the vault of any format into dest, which must be
// an empty directory or not exist yet (its parent must): directories, files, symlinks,
// named pipes and hard links, with permission bits (including setuid, setgid, sticky) and
// modification times, as far as the format keeps them. Zero blocks are written as holes, so
// sparse files stay sparse. Damage (a block, a name or a symlink that does not decrypt)
// stops the export with an error that wraps ErrCorrupt and names it, leaving what was
// written so far; with opts.Force it does not stop (see ExportOptions), and the error at the
// end wraps ErrCorrupt and counts the damaged items. opts.Progress (if not nil) is called as
// for FsckVolume, in bytes.
func ExportVolume(ctx context.Context, vol format.Volume, dest string, opts ExportOptions) error {
	if err := checkOutside(vol.Folder(), dest); err != nil {
		return err
	}
	if _, err := prepareEmptyDir(dest); err != nil {
		return err
	}
	m := newMeter(vol, opts.Progress)
	var problems []Problem
	add := func(p Problem) {
		if !p.Damage() { // conflict copies are exported under their names; foreign files are not ours
			return
		}
		problems = append(problems, p)
		if opts.Damaged != nil && opts.Force {
			opts.Damaged(p)
		}
	}
	// errDamage stops an export without Force at its first damage.
	errDamage := func() error {
		if opts.Force || len(problems) == 0 {
			return nil
		}
		return fmt.Errorf("%s: %w: %s; export stopped at the first damage", vol.Folder(), ErrCorrupt, problems[0])
	}
	type dirAttr struct {
		path string
		info fs.FileInfo
	}
	var dirs []dirAttr
	links := map[[2]uint64]string{} // (dev, inode) of multiply linked files -> exported path
	err := format.Walk(ctx, vol, func(n Node) error {
		if err := errDamage(); err != nil {
			return err
		}
		out := filepath.Join(dest, filepath.FromSlash(n.Path))
		damaged := len(problems)
		mode := n.Info.Mode()
		var err error
		skipped := false // nothing was made at out
		switch t := mode.Type(); {
		case t.IsDir():
			err = os.Mkdir(out, 0o700) // made accessible until its content is in
			dirs = append(dirs, dirAttr{out, n.Info})
		case t.IsRegular():
			st, _ := n.Info.Sys().(*syscall.Stat_t)
			if st != nil && st.Nlink > 1 {
				key := [2]uint64{uint64(st.Dev), st.Ino}
				if first, ok := links[key]; ok {
					err = os.Link(first, out)
					break
				}
				links[key] = out
			}
			err = exportFile(ctx, vol, n, out, add, m)
		case t == fs.ModeSymlink:
			target, terr := vol.Readlink(n)
			if terr != nil {
				add(newProblem(n.Path, n.CipherPath, format.KindSymlink, errDetail(terr)))
				skipped = true
				break
			}
			if err = os.Symlink(target, out); err == nil {
				err = setTimes(out, n.Info, true)
			}
		case format.IsSpecial(t):
			// FIFOs, sockets and device nodes hold no data; mknod remakes them (device nodes
			// need root, like anywhere else).
			st, _ := n.Info.Sys().(*syscall.Stat_t)
			if st == nil {
				err = fmt.Errorf("%s: no stat data", n.CipherPath)
			} else if err = unix.Mknod(out, st.Mode&(syscall.S_IFMT|0o777), int(st.Rdev)); err == nil {
				err = finishAttrs(out, n.Info)
			}
		default:
			add(newProblem(n.Path, n.CipherPath, format.KindType, fmt.Sprintf("not exported: file type %v", t)))
			skipped = true
		}
		if err == nil && !skipped {
			err = exportOwnerAndXattrs(vol, n, out, add)
		}
		if err != nil && ctx.Err() == nil {
			var pe *fs.PathError
			if errors.As(err, &pe) && pe.Path == out || errors.Is(err, syscall.ENOSPC) {
				return fmt.Errorf("vault: export: %w", err) // the destination fails: stop
			}
			add(newProblem(n.Path, n.CipherPath, format.KindIO, err.Error()))
		}
		if !opts.Force && len(problems) > damaged && mode.IsRegular() {
			os.Remove(out) // a file with zeros for its damage is not a copy of it
		}
		m.entry(n.Path, contentSize(n.Info))
		if err := ctx.Err(); err != nil {
			return err
		}
		return errDamage()
	}, add, opts.Force)
	if err == nil {
		err = errDamage() // damage after the last entry (a name in the last directory)
	}
	// Directory modes and times last, deepest first, so read-only
	// directories could be filled and their times are not disturbed.
	for i := len(dirs) - 1; i >= 0; i-- {
		if aerr := finishAttrs(dirs[i].path, dirs[i].info); aerr != nil && err == nil {
			err = fmt.Errorf("vault: export: %w", aerr)
		}
	}
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s: %w: exported with %d damaged item(s) zeroed or renamed, first: %s",
			vol.Folder(), ErrCorrupt, len(problems), problems[0])
	}
	return nil
}

// ErrInsideVault: a destination for plaintext (Export's) is the vault's cipherdir or lies
// inside it, where the plaintext would sit beside the cipher files (and go wherever the sync
// tool takes them).
var ErrInsideVault = errors.New("inside the vault's cipherdir")

// checkOutside refuses a destination dest for plaintext that is the vault's cipherdir or
// lies inside it, by identity (see Inside): a symlink or a second spelling does not hide it.
func checkOutside(cipherdir, dest string) error {
	abs, err := filepath.Abs(dest)
	if err != nil {
		return err
	}
	id, err := IDOf(cipherdir)
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	inside, err := Inside(abs, id)
	if err != nil {
		return fmt.Errorf("vault: export to %s: %w", dest, err)
	}
	if inside {
		return fmt.Errorf("vault: export to %s: %w %s: the plaintext would be written among the cipher files",
			dest, ErrInsideVault, cipherdir)
	}
	return nil
}

// exportFile decrypts one file into out, leaving holes for zero blocks.
func exportFile(ctx context.Context, vol format.Volume, n Node, out string, problem func(Problem), m *meter) error {
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	var werr error
	bs := vol.Geometry().BlockSize
	size, rerr := decryptVolumeFile(ctx, vol, n, func(off int64, b []byte) error {
		for i := 0; i < len(b); i += bs {
			blk := b[i:min(i+bs, len(b))]
			if isZero(blk) {
				continue // a hole
			}
			if _, err := f.WriteAt(blk, off+int64(i)); err != nil {
				werr = err
				return err
			}
		}
		return nil
	}, problem, m)
	if werr != nil {
		f.Close()
		return werr
	}
	if rerr == nil {
		werr = f.Truncate(size)
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return werr
	}
	return finishAttrs(out, n.Info)
}

// exportOwnerAndXattrs gives the exported entry out its user.* extended attributes and, when
// run as root, its owner. A chown drops setuid/setgid, so the mode is set again after it.
func exportOwnerAndXattrs(vol format.Volume, n Node, out string, problem func(Problem)) error {
	for name, value := range vol.Xattrs(n, problem) {
		if !strings.HasPrefix(name, "user.") {
			continue // trusted.* and security.* need privileges and mean nothing elsewhere
		}
		if err := unix.Lsetxattr(out, name, value, 0); err != nil {
			problem(newProblem(n.Path, n.CipherPath, format.KindIO, fmt.Sprintf("attribute %q not exported: %v", name, err)))
		}
	}
	st, ok := n.Info.Sys().(*syscall.Stat_t)
	if !ok || os.Geteuid() != 0 {
		return nil
	}
	if err := os.Lchown(out, int(st.Uid), int(st.Gid)); err != nil {
		return err
	}
	if m := n.Info.Mode(); m&(fs.ModeSetuid|fs.ModeSetgid) != 0 && m.Type() != fs.ModeSymlink {
		return os.Chmod(out, m&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky))
	}
	return nil
}

func isZero(b []byte) bool { return len(bytes.TrimLeft(b, "\x00")) == 0 }

// finishAttrs copies permission bits and times from info to p.
func finishAttrs(p string, info fs.FileInfo) error {
	m := info.Mode()
	if err := os.Chmod(p, m&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)); err != nil {
		return err
	}
	return setTimes(p, info, false)
}

// setTimes copies access and modification times (of the link itself when
// noFollow).
func setTimes(p string, info fs.FileInfo, noFollow bool) error {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	ts := []unix.Timespec{unix.NsecToTimespec(st.Atim.Nano()), unix.NsecToTimespec(st.Mtim.Nano())}
	flags := 0
	if noFollow {
		flags = unix.AT_SYMLINK_NOFOLLOW
	}
	return unix.UtimesNanoAt(unix.AT_FDCWD, p, ts, flags)
}
