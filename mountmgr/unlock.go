package mountmgr

import (
	"github.com/vaultui/vaultui/mountmgr/vfs"
	"github.com/vaultui/vaultui/vault"
)

// unlocked is a vault whose keys the daemon holds while it is mounted.
type unlocked struct {
	volume vfs.Volume
	cipher string
	close  func()
}

// Close wipes the keys (best effort: Go may have copied them).
func (u *unlocked) Close() { u.close() }

func unlock(cipherDir string, password []byte) (*unlocked, error) {
	v, err := vault.Unlock(cipherDir, password)
	if err != nil {
		return nil, err
	}
	return &unlocked{
		volume: vfs.Volume{
			Dir:        v.Dir,
			Content:    v.Content,
			Names:      v.Names,
			DirIV:      v.Config.Has("DirIV"),
			XattrNames: v.XattrNames,
		},
		cipher: v.Content.Cipher().String(),
		close:  v.Close,
	}, nil
}
