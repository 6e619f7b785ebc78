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
	"github.com/vaultui/vaultui/vault/cryptomator"
	"github.com/vaultui/vaultui/vault/format"
)

// unlocked is a vault whose keys the daemon holds while it is mounted.
type unlocked struct {
	volume vfs.Volume
	cipher string
	// notice is a one-line note for the user about how this vault runs here, or "".
	notice string
	// vault is the unlocked gocryptfs vault itself, for what the daemon does with the key
	// besides serving the mount (settling conflicts); nil for a Cryptomator vault.
	vault *vault.Vault
	// walk is the vault as fsck, export and the conflict listing read it (either format);
	// nil for a reverse view.
	walk  format.Volume
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
	if r.MasterKey != nil {
		return unlockMasterKey(r.CipherDir, r.MasterKey, r.ReadOnly)
	}
	return unlock(ctx, r.CipherDir, r.Password)
}

// unlockReverse unlocks the reverse config of the plaintext folder dir.
func unlockReverse(ctx context.Context, dir string, password []byte, rules []string) (*unlocked, error) {
	ex, err := exclude.Compile(rules)
	if err != nil {
		return nil, fmt.Errorf("reverse view of %s: %w", dir, err)
	}
	v, err := vault.UnlockReverse(ctx, dir, password)
	if err != nil {
		return nil, err
	}
	return &unlocked{
		reverse: true,
		rvolume: vfs.ReverseVolume{
			Dir:      v.Dir,
			Content:  v.Content,
			Names:    v.Names,
			PerDirIV: v.Config.Has(vault.FlagDirIV),
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
func (u *unlocked) using(fn func(vfs.Volume)) bool {
	u.mu.RLock()
	defer u.mu.RUnlock()
	if u.closed {
		return false
	}
	fn(u.volume)
	return true
}

func unlock(ctx context.Context, cipherDir string, password []byte) (*unlocked, error) {
	if vault.IsCryptomator(cipherDir) {
		v, err := vault.UnlockCryptomator(ctx, cipherDir, password)
		if err != nil {
			return nil, err
		}
		return cryptomatorUnlocked(v), nil
	}
	v, err := vault.Unlock(ctx, cipherDir, password)
	if err != nil {
		return nil, err
	}
	return unlockedOf(v), nil
}

// unlockMasterKey opens the vault with its master key (recovery). The key is checked on the
// vault's files first (vault.UnlockWithMasterKey). A vault that holds too little to check it
// is opened anyway only read-only, where a wrong key cannot damage anything (names do not
// decrypt, contents fail authentication), with a notice saying so; read-write it is refused.
func unlockMasterKey(cipherDir string, key []byte, readOnly bool) (*unlocked, error) {
	if vault.IsCryptomator(cipherDir) {
		v, err := vault.UnlockCryptomatorWithKey(cipherDir, key)
		if err != nil {
			return nil, err
		}
		return cryptomatorUnlocked(v), nil
	}
	v, err := vault.UnlockWithMasterKey(cipherDir, key)
	if errors.Is(err, vault.ErrKeyUnverifiable) && readOnly {
		if v, err = vault.OpenWithMasterKey(cipherDir, key); err != nil {
			return nil, err
		}
		u := unlockedOf(v)
		u.notice = joinNotices(u.notice, "the vault holds too little to verify the master key: if its files do not show, the key is wrong")
		return u, nil
	}
	if err != nil {
		return nil, err
	}
	return unlockedOf(v), nil
}

func joinNotices(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func unlockedOf(v *vault.Vault) *unlocked {
	return &unlocked{
		volume: vfs.Volume{
			Dir:        v.Dir,
			Content:    v.Content,
			Names:      v.Names,
			PerDirIV:   v.Config.Has(vault.FlagDirIV),
			XattrNames: v.XattrNames,
		},
		cipher: v.Content.Cipher().String(),
		notice: slowCipherNotice(v.Content.Cipher()),
		vault:  v,
		walk:   v.Volume(),
		close:  v.Close,
	}
}

func cryptomatorUnlocked(v *cryptomator.Vault) *unlocked {
	return &unlocked{
		volume: vfs.Volume{Dir: v.Dir(), Cryptomator: v},
		cipher: cryptomator.Describe(v.Config().Format, v.Config().CipherCombo),
		walk:   v.Volume(),
		close:  func() { v.Close() },
	}
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
