package gocryptfs

import (
	"path/filepath"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/atomicfile"
)

// WriteConfig replaces cipherdir/gocryptfs.conf atomically (see atomicfile.Replace) through
// gocryptfs.conf.tmp, mode 0400, as gocryptfs does.
func WriteConfig(fsys atomicfile.FS, cipherdir string, c *Config) error {
	return writeConfigNamed(fsys, cipherdir, crypto.ConfName, c)
}

// writeConfigNamed is WriteConfig for the config file name in dir.
func writeConfigNamed(fsys atomicfile.FS, cipherdir, name string, c *Config) error {
	data, err := c.Marshal()
	if err != nil {
		return err
	}
	final := filepath.Join(cipherdir, name)
	if err := atomicfile.Replace(fsys, final, final+".tmp", data, 0o400); err != nil {
		return err
	}
	return fsys.SyncDir(cipherdir)
}
