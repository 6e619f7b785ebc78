package vaulttest

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/format"
	"github.com/vaultui/vaultui/vault/gocryptfs"
	"github.com/vaultui/vaultui/vault/layout"
)

// Import encrypts the plaintext tree under src into the root of v, which must hold no entries
// yet, through the vault's Builder: directories, files (all-zero full blocks as holes),
// symlinks, and their permission bits and times, written exactly as gocryptfs writes them.
// Other file types are refused. Tests make vaults of known content with it.
func Import(ctx context.Context, v *gocryptfs.Vault, src string) error {
	ents, err := layout.ReadDirPath(v.Dir)
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	for _, e := range ents {
		if n := e.Name(); n != crypto.ConfName && n != crypto.DirIVName {
			return fmt.Errorf("%s: %w: import needs an empty vault", v.Dir, format.ErrNotEmpty)
		}
	}
	b := v.Builder()
	return importDir(ctx, b, b.Root(), src)
}

// importDir makes the entries of the plaintext directory src in dir.
func importDir(ctx context.Context, b format.Builder, dir format.Made, src string) error {
	ents, err := layout.ReadDirPath(src)
	if err != nil {
		return fmt.Errorf("vault: import: %w", err)
	}
	for _, e := range ents {
		if err := ctx.Err(); err != nil {
			return err
		}
		sp := filepath.Join(src, e.Name())
		info, err := e.Info()
		if err != nil {
			return fmt.Errorf("vault: import: %w", err)
		}
		var m format.Made
		switch t := info.Mode().Type(); {
		case t.IsDir():
			if m, err = b.Mkdir(dir, e.Name()); err == nil {
				err = importDir(ctx, b, m, sp)
			}
		case t.IsRegular():
			var f *os.File
			if f, err = os.Open(sp); err == nil {
				m, err = b.WriteFile(dir, e.Name(), f)
				f.Close()
			}
		case t == fs.ModeSymlink:
			var target string
			if target, err = os.Readlink(sp); err == nil {
				m, err = b.Symlink(dir, e.Name(), target)
			}
		default:
			return fmt.Errorf("vault: import %s: file type %v is not supported", sp, t)
		}
		if err == nil {
			err = b.SetAttrs(m, info)
		}
		if err != nil {
			return fmt.Errorf("vault: import %s: %w", sp, err)
		}
	}
	return nil
}
