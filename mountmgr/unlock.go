package mountmgr

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/mountmgr/vfs"
	"github.com/vaultui/vaultui/mountmgr/vfs/exclude"
	"github.com/vaultui/vaultui/vault"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

// unlocked is a vault whose keys the daemon holds while it is mounted.
type unlocked struct {
	volume vfs.Volume
	cipher string
	// notice is a one-line note for the user about how this vault runs here, or "".
	notice string
	// walk is the vault for what the daemon does with its keys besides serving the mount
	// (fsck, export, conflicts, path mapping); nil for a reverse view.
	walk  vault.Volume
	close func()
	// mu keeps the keys from being wiped while a request other than the file system's own
	// uses them (path mapping, conflicts); closed is set once they are.
	mu     sync.RWMutex
	closed bool
	// stop is closed when Close begins, so that a long use of the keys (a fsck or export
	// through the daemon) ends rather than holds up the unmount; see stopped.
	stopInit, stopClose sync.Once
	stop                chan struct{}
	// reverse: volume is unused and rvolume is served instead.
	reverse bool
	rvolume vfs.ReverseVolume
}

// mount serves the unlocked vault at mountPoint: the plaintext view, or the encrypted view of
// a reverse vault.
func (u *unlocked) mount(mountPoint string, opts vfs.Options) (*vfs.Mounted, error) {
	if u.reverse {
		return vfs.MountReverse(mountPoint, u.rvolume, opts)
	}
	return vfs.Mount(mountPoint, u.volume, opts)
}

// unlockRequest unlocks what r asks to mount. The key derivation stops when ctx ends, and
// costs no more than ctx allows (crypto.WithCostBound).
func unlockRequest(ctx context.Context, r *MountRequest) (*unlocked, error) {
	if r.Reverse {
		return unlockReverse(ctx, r.CipherDir, r.Password, r.Exclude)
	}
	if len(r.Exclude) > 0 {
		return nil, errors.New("exclusion rules are for reverse mode only")
	}
	f, err := vault.Open(r.CipherDir)
	if err != nil {
		return nil, err
	}
	if r.MasterKey != nil {
		return unlockMasterKey(f, r.MasterKey, r.ReadOnly)
	}
	v, err := f.Unlock(ctx, r.Password)
	if err != nil {
		return nil, err
	}
	return unlockedOf(v)
}

// unlockReverse unlocks the reverse config of the plaintext folder dir.
func unlockReverse(ctx context.Context, dir string, password []byte, rules []string) (*unlocked, error) {
	ex, err := exclude.Compile(rules)
	if err != nil {
		return nil, fmt.Errorf("reverse view of %s: %w", dir, err)
	}
	v, err := gocryptfs.UnlockReverse(ctx, dir, password)
	if err != nil {
		return nil, err
	}
	return &unlocked{
		reverse: true,
		rvolume: vfs.ReverseVolume{
			Dir:      v.Dir,
			Content:  v.Content,
			Names:    v.Names,
			PerDirIV: v.Config.Has(gocryptfs.FlagDirIV),
			Exclude:  ex,
		},
		cipher: v.Content.Cipher().String(),
		close:  v.Close,
	}, nil
}

// Close wipes the keys (best effort: Go may have copied them), once no using call runs.
func (u *unlocked) Close() {
	u.stopped()
	u.stopClose.Do(func() { close(u.stop) })
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.closed {
		u.closed = true
		u.close()
	}
}

// stopped is closed once Close begins: a long user of the keys stops then.
func (u *unlocked) stopped() <-chan struct{} {
	u.stopInit.Do(func() { u.stop = make(chan struct{}) })
	return u.stop
}

// using runs fn with the vault's volume unless its keys are wiped already (false).
func (u *unlocked) using(fn func(*unlocked)) bool {
	u.mu.RLock()
	defer u.mu.RUnlock()
	if u.closed {
		return false
	}
	fn(u)
	return true
}

// unlockMasterKey unlocks the vault f with its master key (recovery). The key is checked on the
// vault's files first (vault.Folder.UnlockWithKey). A vault that holds too little to check it
// is opened anyway only read-only, where a wrong key cannot damage anything (names do not
// decrypt, contents fail authentication), with a notice saying so; read-write it is refused.
func unlockMasterKey(f *vault.Folder, key []byte, readOnly bool) (*unlocked, error) {
	v, err := f.UnlockWithKey(key, false)
	unverified := errors.Is(err, vault.ErrKeyUnverifiable) && readOnly
	if unverified {
		v, err = f.UnlockWithKey(key, true)
	}
	if err != nil {
		return nil, err
	}
	u, err := unlockedOf(v)
	if err == nil && unverified {
		if u.notice != "" {
			u.notice += "; "
		}
		u.notice += "the vault holds too little to verify the master key: if its files do not show, the key is wrong"
	}
	return u, err
}

func unlockedOf(v vault.Volume) (*unlocked, error) {
	mv, err := vfs.VolumeOf(v)
	if err != nil {
		v.Close()
		return nil, err
	}
	return &unlocked{
		volume: mv,
		cipher: cipherLabel(v),
		notice: slowCipherNotice(v.ContentCipher()),
		walk:   v,
		close:  v.Close,
	}, nil
}

// cipherLabel is what status shows as a mount's cipher: the content cipher, or where the
// format fixes it, the format's own name for it ("Cryptomator vault format 8, SIV_GCM").
func cipherLabel(v vault.Volume) string {
	if c := v.ContentCipher(); c != "" {
		return c.String()
	}
	return v.FormatName()
}

// slowCipherNotice warns when a vault's cipher has no hardware kernel on this CPU (an AEGIS
// vault synced to a machine without the AES instructions its kernels use), with the speed
// measured here, so a slow mount is explained rather than a mystery.
func slowCipherNotice(c crypto.CipherID) string {
	impl, hardware := crypto.Implementation(c)
	if hardware {
		return ""
	}
	mbps, err := crypto.Measure(context.Background(), c, 100*time.Millisecond)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s runs on its %s code on this CPU (no AES instructions its kernels use): about %.0f MB/s; for new vaults here, AES-256-GCM or XChaCha20-Poly1305 are faster",
		c, impl, mbps)
}
