package vault

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/layout"
)

// Import encrypts the plaintext tree under src into the vault root, the
// offline counterpart of Export: directories (with their gocryptfs.diriv),
// files, symlinks and permission bits, writing entries exactly as gocryptfs
// does (long names with .name files, mode 0400; all-zero full blocks as
// holes). The vault root must not hold any entries yet. Other file types are
// refused. progress (if not nil) is called after each entry.
//
// No command uses it: tests in this package and in ui make vaults of known
// content with it, which is why it is exported rather than in a _test.go file.
func (v *Vault) Import(ctx context.Context, src string, progress func(FsckProgress)) error {
	ents, err := layout.ReadDirPath(v.Dir)
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	for _, e := range ents {
		if n := e.Name(); n != crypto.ConfName && n != crypto.DirIVName {
			return fmt.Errorf("%s: %w: import needs an empty vault", v.Dir, ErrNotEmpty)
		}
	}
	done := 0
	return v.importDir(ctx, src, "", &done, progress)
}

func (v *Vault) importDir(ctx context.Context, src, cdir string, done *int, progress func(FsckProgress)) error {
	ents, err := layout.ReadDirPath(src)
	if err != nil {
		return fmt.Errorf("vault: import: %w", err)
	}
	cabs := filepath.Join(v.Dir, cdir)
	iv, err := v.DirIV(cabs)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := e.Name()
		sp := filepath.Join(src, name)
		info, err := e.Info()
		if err != nil {
			return fmt.Errorf("vault: import: %w", err)
		}
		stored := name
		if v.Names != nil {
			var encoded string
			var long bool
			stored, encoded, long, err = v.Names.StoredName(name, iv)
			if err != nil {
				return fmt.Errorf("vault: import %s: %w", sp, err)
			}
			if long {
				if err := writeNew(filepath.Join(cabs, stored+crypto.LongNameSuffix), []byte(encoded), 0o400); err != nil {
					return err
				}
			}
		} else if cdir == "" && name == crypto.ConfName {
			return fmt.Errorf("vault: import %s: the name %s is reserved at the root", sp, crypto.ConfName)
		}
		cp := filepath.Join(cabs, stored)
		switch t := info.Mode().Type(); {
		case t.IsDir():
			if err := os.Mkdir(cp, 0o700); err != nil {
				return fmt.Errorf("vault: import: %w", err)
			}
			if v.Names != nil && !v.Config.DeterministicNames() {
				if err := writeDirIV(cp); err != nil {
					return err
				}
			}
			if err := v.importDir(ctx, sp, filepath.Join(cdir, stored), done, progress); err != nil {
				return err
			}
		case t.IsRegular():
			if err := v.importFile(sp, cp); err != nil {
				return err
			}
		case t == fs.ModeSymlink:
			target, err := os.Readlink(sp)
			if err != nil {
				return fmt.Errorf("vault: import: %w", err)
			}
			if v.Names != nil {
				target = v.Content.EncryptSymlink(target)
			}
			if err := os.Symlink(target, cp); err != nil {
				return fmt.Errorf("vault: import: %w", err)
			}
		default:
			return fmt.Errorf("vault: import %s: file type %v is not supported", sp, t)
		}
		if info.Mode().Type() != fs.ModeSymlink {
			if err := os.Chmod(cp, info.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)); err != nil {
				return fmt.Errorf("vault: import: %w", err)
			}
		}
		*done++
		if progress != nil {
			progress(FsckProgress{Done: *done, Path: sp})
		}
	}
	return nil
}

// importFile encrypts the file src into the new cipher file dst.
func (v *Vault) importFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("vault: import: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("vault: import: %w", err)
	}
	defer out.Close()
	if err := v.encryptInto(out, in); err != nil {
		return fmt.Errorf("vault: import: %w", err)
	}
	return out.Close()
}

// encryptInto writes the content read from in, encrypted, into the empty cipher file out as
// gocryptfs writes it: a header before the first block (none for an empty file), and full
// zero blocks left as holes.
func (v *Vault) encryptInto(out *os.File, in io.Reader) error {
	ce := v.Content
	plain := make([]byte, readChunkBlocks*crypto.BlockSize)
	cipher := make([]byte, 0, readChunkBlocks*ce.CipherBlockSize())
	defer crypto.Wipe(plain)
	var h crypto.FileHeader
	var size int64
	var err error
	for blk := int64(0); ; blk += readChunkBlocks {
		n, rerr := io.ReadFull(in, plain)
		if n > 0 {
			if blk == 0 {
				if h, err = crypto.NewFileHeader(); err != nil {
					return err
				}
				if _, err := out.Write(h.Bytes()); err != nil {
					return err
				}
			}
			// Encrypt runs of data blocks; full zero blocks stay holes.
			for i := 0; i < n; {
				j := i
				for j < n && !(j+crypto.BlockSize <= n && isZero(plain[j:j+crypto.BlockSize])) {
					j += crypto.BlockSize
				}
				j = min(j, n)
				if j > i {
					first := blk + int64(i/crypto.BlockSize)
					cipher = ce.EncryptBlocks(cipher[:0], plain[i:j], uint64(first), h.ID[:])
					if _, err := out.WriteAt(cipher, int64(ce.BlockCipherOffset(uint64(first)))); err != nil {
						return err
					}
				}
				i = j + crypto.BlockSize // skip the zero block
			}
			size += int64(n)
		}
		if rerr == io.EOF || errors.Is(rerr, io.ErrUnexpectedEOF) {
			break
		}
		if rerr != nil {
			return rerr
		}
	}
	return out.Truncate(int64(ce.CipherSize(uint64(size))))
}

// writeNew creates path with data and mode, failing if it exists.
func writeNew(path string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("vault: writing %s: %w", path, err)
	}
	return nil
}
