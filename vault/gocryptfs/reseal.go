package gocryptfs

// Resealing a gocryptfs vault under another content cipher, file by file (package vault's
// Capabilities.Reseal: what package vault/convert does for a conversion within the format).
//
// Only the content cipher changes: file contents, symlink targets and extended attribute
// values are sealed with it. Everything else is derived from the master key, the HKDF flag,
// Raw64 and the long-name settings, none of which a reseal touches: the EME name key
// (crypto.NewNameTransform), the directory IVs, the long-name hashes and .name files, the
// attribute names, and the sealed master key in conf (always AES-GCM under the
// scrypt KEK). So the new vault keeps every stored name byte for byte and the same
// conf except its feature flags: the password keeps working. The one pair where
// that would not hold is refused: a vault from before HKDF (gocryptfs < 1.3) cannot become
// AEGIS or XChaCha20-Poly1305, which require HKDF, because adding HKDF changes the name key.
// The old vault is only read.

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/atomicfile"
	"github.com/vaultui/vaultui/vault/format"
	"github.com/vaultui/vaultui/vault/layout"
)

// PlanReseal refuses a pair that would not keep the vault's names (a vault from before HKDF
// cannot become AEGIS or XChaCha20-Poly1305) and measures, without the key, what resealing
// the vault in dir to cipher to takes: plainBytes of content in files files, and needBytes of
// space for the new vault in blocks of blockSize.
func PlanReseal(dir string, to crypto.CipherID, blockSize uint64) (plainBytes int64, files int, needBytes uint64, err error) {
	c, err := LoadConfig(dir)
	if err != nil {
		return 0, 0, 0, err
	}
	if (to == crypto.AEGIS || to == crypto.XChaCha) && !c.Has(FlagHKDF) {
		return 0, 0, 0, fmt.Errorf("%s: %w: the vault predates HKDF key derivation (gocryptfs before 1.3), which %s requires; adding it would change the key every name is encrypted with (convert to gcm or siv, or copy the files into a new vault)",
			dir, format.ErrUnsupported, to)
	}
	return measureReseal(dir, c.Cipher(), to, blockSize, c.PlaintextNames())
}

// Resealed is what Reseal did: Bytes of content resealed; Unchanged, cipher paths of files
// that are not the vault's (desktop.ini and the like, which the mount hides), copied as they
// are; Dropped, what stays with the old vault only (copies of a key file that carry the old
// cipher).
type Resealed struct {
	Bytes              int64
	Unchanged, Dropped []string
}

// Reseal writes the vault in dir, unlocked with password and resealed under the content
// cipher to, into newDir (which must not exist) and opens it; the old vault is only read.
// progress, if not nil, gets the content bytes done.
func Reseal(ctx context.Context, dir string, password []byte, newDir string, to crypto.CipherID, progress func(done int64)) (*Vault, Resealed, error) {
	c, err := LoadConfig(dir)
	if err != nil {
		return nil, Resealed{}, err
	}
	mk, err := c.OpenMasterKey(ctx, dir, password)
	if err != nil {
		return nil, Resealed{}, err
	}
	defer crypto.Wipe(mk)
	old, err := OpenConfig(dir, c, mk)
	if err != nil {
		return nil, Resealed{}, err
	}
	defer old.Close()
	nc := *c
	nc.FeatureFlags = convertFlags(c.FeatureFlags, to)
	if err := nc.Validate(); err != nil {
		return nil, Resealed{}, fmt.Errorf("the converted config does not validate: %w", err)
	}
	newCE, err := crypto.NewContentEnc(to, mk, c.Has(FlagHKDF))
	if err != nil {
		return nil, Resealed{}, err
	}
	newCE.SetPaddedBase64(!c.Has(FlagRaw64))
	defer newCE.Wipe()
	cv := &converter{ctx: ctx, old: old, newCE: newCE, newRoot: newDir, progress: progress, links: map[[2]uint64]string{}}
	if err := cv.copyVault(dir, newDir, &nc); err != nil {
		return nil, Resealed{}, err
	}
	nv, err := OpenConfig(newDir, &nc, mk)
	return nv, Resealed{Bytes: cv.done, Unchanged: cv.unchanged, Dropped: cv.dropped}, err
}

// convertFlags returns the feature flags of the vault with flags converted to cipher to: the
// content cipher's flags replaced, every other flag kept, in gocryptfs's order.
func convertFlags(flags []string, to crypto.CipherID) []string {
	cipherFlags := []string{FlagGCMIV128, FlagAESSIV, FlagXChaCha20Poly1305, FlagAEGIS256X2}
	out := slices.DeleteFunc(slices.Clone(flags), func(f string) bool { return slices.Contains(cipherFlags, f) })
	main := FlagGCMIV128
	switch to {
	case crypto.XChaCha:
		main = FlagXChaCha20Poly1305
	case crypto.AEGIS:
		main = FlagAEGIS256X2
	}
	at := 0
	if i := slices.Index(out, FlagHKDF); i >= 0 {
		at = i + 1
	}
	out = slices.Insert(out, at, main)
	if to == crypto.AESSIV {
		out = append(out, FlagAESSIV)
	}
	return out
}

// measureReseal walks the cipherdir dir (cipher entries only, no key needed) for the
// plaintext bytes to reseal from cipher from to cipher to, and the space the new vault takes
// in blocks of bsize.
func measureReseal(dir string, from, to crypto.CipherID, bsize uint64, plaintextNames bool) (plainBytes int64, files int, needBytes uint64, err error) {
	oldOver, newOver := uint64(from.BlockOverhead()), uint64(to.BlockOverhead())
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() || filepath.Dir(p) == dir && strings.HasPrefix(d.Name(), crypto.ConfName) {
			needBytes += bsize
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		size := uint64(fi.Size())
		if size > crypto.HeaderLen && (plaintextNames || !isMachineryName(d.Name())) {
			blocks := (size - crypto.HeaderLen + uint64(crypto.BlockSize) + oldOver - 1) / (uint64(crypto.BlockSize) + oldOver)
			plain := size - crypto.HeaderLen - min(size-crypto.HeaderLen, blocks*oldOver)
			size = crypto.HeaderLen + plain + blocks*newOver
			plainBytes += int64(plain)
			files++
		}
		needBytes += (size + bsize - 1) / bsize * bsize
		return nil
	})
	if err != nil {
		return plainBytes, files, needBytes, fmt.Errorf("%s: %w", dir, err)
	}
	return plainBytes, files, needBytes, nil
}

// converter copies an unlocked vault into a new tree with another content cipher.
type converter struct {
	ctx       context.Context
	old       *Vault
	newCE     *crypto.ContentEnc
	newRoot   string
	progress  func(done int64) // may be nil
	done      int64
	links     map[[2]uint64]string // (dev, inode) of multiply linked files -> new cipher path
	unchanged []string
	dropped   []string
}

func (cv *converter) report() {
	if cv.progress != nil {
		cv.progress(cv.done)
	}
}

// copyVault copies the vault at src into the new directory dst and writes its config c.
func (cv *converter) copyVault(src, dst string, c *Config) error {
	sfd, err := unix.Open(src, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	defer unix.Close(sfd)
	if err := os.Mkdir(dst, 0o700); err != nil {
		return err
	}
	dfd, err := unix.Open(dst, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", dst, err)
	}
	defer unix.Close(dfd)
	cv.report()
	if err := cv.copyDir(sfd, dfd, ""); err != nil {
		return err
	}
	if err := WriteConfig(atomicfile.OS{}, dst, c); err != nil {
		return fmt.Errorf("%s: %w", dst, err)
	}
	// The root's own attributes last: writing the config changes its times.
	var st unix.Stat_t
	if err := unix.Fstat(sfd, &st); err != nil {
		return err
	}
	return cv.finishEntry(sfd, dfd, ".", &st)
}

// copyDir copies the directory open at src (cipher path cdir) into the one open at dst.
func (cv *converter) copyDir(src, dst int, cdir string) error {
	names, err := layout.ReadDirNames(src)
	if err != nil {
		return fmt.Errorf("%s: %w", cdir, err)
	}
	slices.Sort(names)
	for _, name := range names {
		if err := cv.ctx.Err(); err != nil {
			return err
		}
		cpath := path.Join(cdir, name)
		if cdir == "" && strings.HasPrefix(name, crypto.ConfName) {
			// The new config is written at the end. Backups and sync conflict copies of the
			// old one carry the old cipher's flags: they stay with the old vault only.
			if name != crypto.ConfName && name != crypto.ConfName+".tmp" {
				cv.dropped = append(cv.dropped, cpath)
			}
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstatat(src, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return fmt.Errorf("%s: %w", cpath, err)
		}
		if err := cv.copyEntry(src, dst, cdir, name, &st); err != nil {
			return err
		}
	}
	return nil
}

// copyEntry copies one entry and its attributes.
func (cv *converter) copyEntry(src, dst int, cdir, name string, st *unix.Stat_t) error {
	cpath := path.Join(cdir, name)
	var err error
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		if err := unix.Mkdirat(dst, name, 0o700); err != nil {
			return fmt.Errorf("%s: %w", cpath, err)
		}
		sfd, err := layout.OpenDir(src, name)
		if err != nil {
			return fmt.Errorf("%s: %w", cpath, err)
		}
		defer unix.Close(sfd)
		dfd, err := layout.OpenDir(dst, name)
		if err != nil {
			return fmt.Errorf("%s: %w", cpath, err)
		}
		defer unix.Close(dfd)
		if err := cv.copyDir(sfd, dfd, cpath); err != nil {
			return err
		}
		return cv.finishEntry(sfd, dfd, ".", st)
	case unix.S_IFREG:
		if st.Nlink > 1 {
			key := [2]uint64{uint64(st.Dev), uint64(st.Ino)}
			if first, ok := cv.links[key]; ok {
				if err := unix.Linkat(unix.AT_FDCWD, filepath.Join(cv.newRoot, first), dst, name, 0); err != nil {
					return fmt.Errorf("%s: hard link: %w", cpath, err)
				}
				return nil
			}
			cv.links[key] = cpath
		}
		ok := false
		if cv.old.Names == nil || !isMachineryName(name) {
			if ok, err = cv.resealFile(src, dst, name, st); err != nil {
				break
			}
			if !ok {
				if err := cv.foreign(src, cdir, name); err != nil {
					return err
				}
			}
		}
		if !ok {
			err = copyRaw(src, dst, name)
		}
	case unix.S_IFLNK:
		var target string
		if target, err = readlinkAt(src, name); err != nil {
			break
		}
		if cv.old.Names != nil { // plaintext names: targets are stored as they are
			plain, derr := cv.old.Content.DecryptSymlink(target)
			if derr == nil {
				target = cv.newCE.EncryptSymlink(plain)
			} else if err := cv.foreign(src, cdir, name); err != nil {
				return err
			}
		}
		err = unix.Symlinkat(target, dst, name)
	default: // FIFOs, sockets, device nodes: only their names are encrypted
		err = unix.Mknodat(dst, name, st.Mode&(unix.S_IFMT|0o777), int(st.Rdev))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", cpath, err)
	}
	return cv.finishEntry(src, dst, name, st)
}

// isMachineryName reports whether name is, in a vault with encrypted names, one of the
// format's own small files that are the same under any content cipher: diriv, long names'
// .name files, and sync tools' conflict copies of them.
func isMachineryName(name string) bool {
	own := func(base string) bool { return base == crypto.DirIVName || crypto.IsLongNameFile(base) }
	if own(name) {
		return true
	}
	_, ok := layout.ParseConflict(name, own)
	return ok
}

// foreign decides about an entry whose content does not authenticate: if its name is one of
// the vault's (it decrypts, or is a sync tool's conflict copy of one), the vault is damaged
// and the conversion stops; otherwise it is a file put there by hand or by a sync tool, which
// the mount hides, and it is copied unchanged.
func (cv *converter) foreign(dirfd int, cdir, name string) error {
	cpath := path.Join(cdir, name)
	damaged := fmt.Errorf("%s: %w: content does not authenticate; nothing was changed (run vaultui fsck for details)", cpath, layout.ErrCorrupt)
	if cv.old.Names == nil {
		return damaged
	}
	if iv, err := cv.old.DirIVAt(dirfd); err == nil {
		if _, err := cv.old.DecryptEntryName(dirfd, name, iv); err == nil {
			return damaged
		}
		if _, _, _, ok := layout.ConflictCopy(dirfd, name, iv, cv.old.Names, cdir == ""); ok {
			return damaged
		}
	}
	cv.unchanged = append(cv.unchanged, cpath)
	return nil
}

// resealFile re-encrypts the regular file name from src into a new file in dst, block by
// block, under a fresh file ID. ok is false (and nothing is left in dst) when the old file's
// size, header or a block does not authenticate; err is for I/O errors.
func (cv *converter) resealFile(src, dst int, name string, st *unix.Stat_t) (ok bool, err error) {
	sfd, err := layout.OpenFile(src, name, unix.O_RDONLY, 0, nil)
	if err != nil {
		return false, err
	}
	in := os.NewFile(uintptr(sfd), name)
	defer in.Close()
	dfd, err := unix.Openat(dst, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return false, err
	}
	out := os.NewFile(uintptr(dfd), name)
	defer func() {
		out.Close()
		if !ok || err != nil {
			unix.Unlinkat(dst, name, 0)
		}
	}()
	oc, nc := cv.old.Content, cv.newCE
	csize := uint64(st.Size)
	psize, perr := oc.PlainSize(csize)
	if perr != nil {
		return false, nil
	}
	if csize == 0 {
		return true, nil
	}
	var hdr [crypto.HeaderLen]byte
	if _, err := in.ReadAt(hdr[:], 0); err != nil {
		return false, err
	}
	oh, herr := crypto.ParseFileHeader(hdr[:])
	if herr != nil {
		return false, nil
	}
	if psize == 0 {
		return true, nil // only a header (an interrupted first write): an empty file
	}
	nh, err := crypto.NewFileHeader()
	if err != nil {
		return false, err
	}
	if _, err := out.Write(nh.Bytes()); err != nil {
		return false, err
	}
	ocbs := int64(oc.CipherBlockSize())
	nblocks := (int64(csize) - crypto.HeaderLen + ocbs - 1) / ocbs
	cbuf := make([]byte, chunkBlocks*ocbs)
	pbuf := make([]byte, 0, chunkBlocks*crypto.BlockSize)
	obuf := make([]byte, 0, chunkBlocks*nc.CipherBlockSize())
	defer crypto.Wipe(pbuf[:cap(pbuf)])
	for first := int64(0); first < nblocks; first += chunkBlocks {
		if err := cv.ctx.Err(); err != nil {
			return false, err
		}
		off := crypto.HeaderLen + first*ocbs
		chunk := cbuf[:min(chunkBlocks*ocbs, int64(csize)-off)]
		if _, err := in.ReadAt(chunk, off); err != nil {
			return false, err
		}
		plain, derr := oc.DecryptBlocks(pbuf[:0], chunk, uint64(first), oh.ID[:])
		if derr != nil {
			return false, nil
		}
		if obuf, err = writeBlocks(out, nc, obuf, plain, uint64(first), nh.ID[:]); err != nil {
			return false, err
		}
		cv.done += int64(len(plain))
		cv.report()
	}
	if err := out.Truncate(int64(nc.CipherSize(psize))); err != nil {
		return false, err
	}
	return true, nil
}

// copyRaw copies the regular file name from src to a new file in dst byte for byte.
func copyRaw(src, dst int, name string) error {
	sfd, err := layout.OpenFile(src, name, unix.O_RDONLY, 0, nil)
	if err != nil {
		return err
	}
	in := os.NewFile(uintptr(sfd), name)
	defer in.Close()
	dfd, err := unix.Openat(dst, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	out := os.NewFile(uintptr(dfd), name)
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		unix.Unlinkat(dst, name, 0)
	}
	return err
}

// readlinkAt is layout.Readlink as a string.
func readlinkAt(dirfd int, name string) (string, error) {
	b, err := layout.Readlink(dirfd, name)
	return string(b), err
}

// finishEntry gives the new entry name in dst the extended attributes (values re-sealed),
// owner (as root), permission bits and times of the old one in src (st).
func (cv *converter) finishEntry(src, dst int, name string, st *unix.Stat_t) error {
	isLink := st.Mode&unix.S_IFMT == unix.S_IFLNK
	if !isLink {
		if err := cv.copyXattrs(procPath(src, name), procPath(dst, name)); err != nil {
			return err
		}
	}
	if os.Geteuid() == 0 {
		if err := unix.Fchownat(dst, name, int(st.Uid), int(st.Gid), unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if !isLink {
		if err := unix.Fchmodat(dst, name, st.Mode&0o7777, 0); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	ts := []unix.Timespec{st.Atim, st.Mtim}
	if err := unix.UtimesNanoAt(dst, name, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// copyXattrs copies the extended attributes of sp to dp: the vault's own (user.*)
// with their values opened with the old cipher and sealed with the new one (their names do
// not depend on the cipher), POSIX ACLs and other programs' user.* attributes as they are.
func (cv *converter) copyXattrs(sp, dp string) error {
	list, err := xattrList(sp)
	if err != nil || len(list) == 0 {
		return nil // a file system without attributes has none to copy
	}
	for _, attr := range list {
		ours := strings.HasPrefix(attr, crypto.XattrPrefix)
		if !ours && !strings.HasPrefix(attr, "user.") && attr != "system.posix_acl_access" && attr != "system.posix_acl_default" {
			continue
		}
		val, err := xattrGet(sp, attr)
		if err != nil {
			return fmt.Errorf("attribute %q: %w", attr, err)
		}
		if ours {
			plain, err := cv.old.Content.DecryptXattrValue(val)
			if err != nil {
				return fmt.Errorf("%w: attribute %q of %s does not authenticate; nothing was changed (run vaultui fsck)", layout.ErrCorrupt, attr, sp)
			}
			val = cv.newCE.EncryptXattrValue(plain)
			crypto.Wipe(plain)
		}
		if err := unix.Lsetxattr(dp, attr, val, 0); err != nil {
			return fmt.Errorf("attribute %q: %w", attr, err)
		}
	}
	return nil
}
