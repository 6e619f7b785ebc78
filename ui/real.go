package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/vault"
)

// Run starts the terminal app on the real backend in the alternate screen.
// Mounts keep running in the daemon after it returns, and it says so.
func Run() error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b, err := newRealBackend()
	if err != nil {
		return err
	}
	defer b.Close()
	m := New(ctx, b)
	final, err := tea.NewProgram(m, tea.WithAltScreen(), tea.WithContext(ctx)).Run()
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) {
		return fmt.Errorf("terminal app: %w", err)
	}
	if fm, ok := final.(*Model); ok {
		if msg := fm.goodbye(); msg != "" {
			fmt.Println(msg)
		}
	}
	return nil
}

// realBackend does what the TUI asks with the same packages the commands
// use: the registry and on-disk format in vault, ciphers in crypto, mounts
// through the mountmgr daemon (started on demand by Connect).
type realBackend struct {
	registryPath string
	// app is the product core: the use cases with their policies (passwords and the
	// keyring, conflicts); this backend only adapts its answers to the screens.
	app   *app.App
	speed *app.Speed

	mu     sync.Mutex
	client *mountmgr.Client
}

func newRealBackend() (*realBackend, error) {
	p, err := vault.DefaultRegistryPath()
	if err != nil {
		return nil, err
	}
	return &realBackend{registryPath: p, app: app.New(app.Options{}), speed: app.NewSpeed()}, nil
}

// Close drops the daemon connection; mounts stay with the daemon.
func (b *realBackend) Close() error {
	b.app.Close()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.client == nil {
		return nil
	}
	err := b.client.Close()
	b.client = nil
	return err
}

// conn returns the daemon client, connecting (and starting the daemon) on
// first use.
func (b *realBackend) conn(ctx context.Context) (*mountmgr.Client, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.client != nil {
		return b.client, nil
	}
	c, err := mountmgr.Connect(ctx)
	if err != nil {
		return nil, escaped(err)
	}
	b.client = c
	return c, nil
}

// dropConn forgets a client whose daemon went away, so the next call
// reconnects (and restarts the daemon).
func (b *realBackend) dropConn(c *mountmgr.Client, err error) {
	if !errors.Is(err, mountmgr.ErrDaemon) {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.client == c {
		c.Close()
		b.client = nil
	}
}

// escaped returns err with vault-controlled text (names, config fields) escaped for the
// terminal; errors.Is and As still see the original.
func escaped(err error) error {
	if err == nil {
		return nil
	}
	return &escapedError{err}
}

// escapedError shows an error with vault-controlled text (names, config fields) escaped for
// the terminal (vault.EscapeControl); errors.Is and As still see the original.
type escapedError struct{ err error }

func (e *escapedError) Error() string { return vault.EscapeControl(e.err.Error()) }
func (e *escapedError) Unwrap() error { return e.err }

func (b *realBackend) registry() (*vault.Registry, error) {
	return vault.LoadRegistry(b.registryPath)
}

// vaultOf names the vault at cipherDir for the core, by its registry name when it has one
// (the keyring's label shows it).
func (b *realBackend) vaultOf(cipherDir string) app.Vault {
	if reg, err := b.registry(); err == nil {
		if e, ok := reg.Lookup(cipherDir); ok {
			return app.VaultOf(e)
		}
	}
	return app.Vault{CipherDir: cipherDir}
}

// StoredPassword asks the keyring whether it holds the vault's password.
func (b *realBackend) StoredPassword(ctx context.Context, cipherDir string) (bool, error) {
	return b.app.HasStoredPassword(ctx, app.Vault{CipherDir: cipherDir})
}

func (b *realBackend) Vaults() ([]Vault, error) {
	reg, err := b.registry()
	if err != nil {
		return nil, err
	}
	out := make([]Vault, 0, len(reg.Vaults))
	for _, e := range reg.Vaults {
		v := Vault{Name: e.Name, CipherDir: e.CipherDir, MountPoint: e.MountPoint, ReadOnly: e.ReadOnly, Idle: e.Idle,
			Automount: e.MountAtStart, Lock: e.LockPolicy()}
		if cfg, err := vault.LoadConfig(e.CipherDir); err != nil {
			v.Problem = err.Error()
		} else {
			v.Cipher = cfg.Cipher().String()
		}
		out = append(out, v)
	}
	return out, nil
}

func (b *realBackend) DefaultMountPoint(name string) string {
	mp, err := vault.DefaultMountPoint(name)
	if err != nil {
		return ""
	}
	return mp
}

func (b *realBackend) CheckNewCipherDir(dir string) error {
	err := vault.CheckNewCipherDir(dir)
	if errors.Is(err, vault.ErrNotEmpty) {
		return escaped(fmt.Errorf("%w (to register an existing vault, use a)", err))
	}
	return err
}

func (b *realBackend) CreateVault(ctx context.Context, req CreateRequest) ([]byte, error) {
	c, err := crypto.ParseCipher(req.Cipher)
	if err != nil {
		return nil, err
	}
	key, err := vault.CreateRegistered(b.registryPath,
		vault.Entry{Name: req.Name, CipherDir: req.CipherDir, MountPoint: req.MountPoint, Lock: req.Lock},
		req.Password, vault.CreateOptions{
			Cipher:             c,
			ScryptLogN:         req.ScryptLogN,
			PlaintextNames:     req.PlaintextNames,
			DeterministicNames: req.DeterministicNames,
			LongNameMax:        req.LongNameMax,
			Creator:            "vaultui",
		})
	var inc *vault.IncompleteError
	switch {
	case errors.As(err, &inc):
		crypto.Wipe(key)
		if inc.Register != nil {
			return nil, fmt.Errorf("%w (add it with a)", err)
		}
		return nil, err
	case err != nil:
		return nil, escaped(err)
	}
	return key, nil
}

func (b *realBackend) AddVault(v Vault) error {
	if _, err := vault.LoadConfig(v.CipherDir); err != nil {
		return fmt.Errorf("%s is not a vault: %w", v.CipherDir, err)
	}
	_, err := vault.UpdateRegistry(b.registryPath, func(reg *vault.Registry) error {
		return reg.Add(vault.Entry{Name: v.Name, CipherDir: v.CipherDir, MountPoint: v.MountPoint, ReadOnly: v.ReadOnly, Idle: v.Idle, Lock: v.Lock})
	})
	return err
}

func (b *realBackend) LockPolicyWorks(ctx context.Context) error {
	return mountmgr.LockPolicyWorks(ctx)
}

func (b *realBackend) Forget(name string) error {
	_, err := vault.UpdateRegistry(b.registryPath, func(reg *vault.Registry) error { return reg.Remove(name) })
	return err
}

func (b *realBackend) Info(ctx context.Context, dir string) ([]Field, error) {
	info, err := vault.ReadInfo(dir)
	if err != nil {
		return nil, escaped(err)
	}
	return infoFields(info), nil
}

func (b *realBackend) ChangePassword(ctx context.Context, dir string, oldPassword, newPassword []byte) error {
	_, err := b.app.ChangePassword(ctx, app.ChangePasswordRequest{Vault: b.vaultOf(dir), OldPassword: oldPassword, NewPassword: newPassword})
	return escaped(err)
}

func (b *realBackend) Fsck(ctx context.Context, dir string, password []byte, progress func(FsckProgress)) ([]Problem, error) {
	v, _, err := b.app.Unlock(ctx, b.vaultOf(dir), password)
	if err != nil {
		return nil, escaped(err)
	}
	defer v.Close()
	problems, err := v.Fsck(ctx, func(p vault.FsckProgress) {
		progress(FsckProgress{Done: p.Done, Total: p.Total, Bytes: p.Bytes, TotalBytes: p.TotalBytes,
			Path: vault.EscapeControl(p.Path), Counting: p.Counting})
	})
	out := make([]Problem, 0, len(problems))
	for _, p := range problems {
		detail := p.Detail
		switch {
		case p.FirstBlock < 0:
		case p.FirstBlock == p.LastBlock:
			detail += fmt.Sprintf(" (block %d)", p.FirstBlock)
		default:
			detail += fmt.Sprintf(" (blocks %d-%d)", p.FirstBlock, p.LastBlock)
		}
		path := p.Path
		if path == "" {
			path = "/" + p.CipherPath
		}
		out = append(out, Problem{Path: vault.EscapeControl(path), Kind: p.Kind, Detail: vault.EscapeControl(detail), Note: !p.Damage()})
	}
	return out, escaped(err)
}

func uiCipher(c crypto.CipherID) Cipher { return Cipher{ID: string(c), Name: c.String()} }

func (b *realBackend) Ciphers() []Cipher {
	out := make([]Cipher, 0, len(crypto.Ciphers))
	for _, c := range crypto.Ciphers {
		out = append(out, uiCipher(c))
	}
	return out
}

func (b *realBackend) SpeedTest(ctx context.Context, report func(app.SpeedReport)) (app.SpeedReport, error) {
	return b.speed.Run(ctx, "", report)
}

func (b *realBackend) CachedSpeed() (app.SpeedReport, bool) { return b.speed.Cached("") }

func uiMount(m mountmgr.MountInfo) Mount {
	return Mount{
		CipherDir: m.CipherDir, MountPoint: m.MountPoint, Cipher: m.Cipher, ReadOnly: m.ReadOnly,
		Since: m.Since, Idle: m.Idle, Stale: m.Stale, Detached: m.Detached,
		BytesRead: m.Stats.BytesRead, BytesWritten: m.Stats.BytesWritten, Ops: m.Stats.Ops, Errs: m.Stats.Errors,
		ReadBps: m.Stats.ReadBps, WriteBps: m.Stats.WriteBps, OpsPerSec: m.Stats.OpsPerSec,
	}
}

func (b *realBackend) Mount(ctx context.Context, req MountRequest) (Mount, error) {
	pw := req.Password
	if req.FromKeyring {
		pw = nil
	} else if pw == nil {
		pw = []byte{}
	}
	m, err := b.app.Mount(ctx, app.MountRequest{
		Vault: app.Vault{Name: req.Name, CipherDir: req.CipherDir}, MountPoint: req.MountPoint,
		Password: pw, Remember: req.Remember, ReadOnly: req.ReadOnly, Idle: req.Idle,
	})
	if err != nil {
		return Mount{}, escaped(err)
	}
	out := uiMount(m.MountInfo)
	out.KeyringNote = keyringNote(m.Keyring)
	return out, nil
}

// keyringNote says what became of the keyring entry after a mount, or "".
func keyringNote(c app.KeyringChange) string {
	switch c.Action {
	case app.KeyringStored:
		return "Password stored in the keyring."
	case app.KeyringReplaced:
		return "The keyring's password was updated."
	case app.KeyringFailed:
		return "The password was not remembered: " + vault.EscapeControl(c.Err.Error())
	}
	return ""
}

func (b *realBackend) Unmount(ctx context.Context, target string, lazy bool) error {
	c, err := b.conn(ctx)
	if err != nil {
		return err
	}
	err = c.Unmount(ctx, target, lazy)
	b.dropConn(c, err)
	return escaped(err)
}

func (b *realBackend) Watch(ctx context.Context, each func([]Mount)) error {
	c, err := b.conn(ctx)
	if err != nil {
		return err
	}
	err = c.Watch(ctx, func(ms []mountmgr.MountInfo) {
		out := make([]Mount, 0, len(ms))
		for _, m := range ms {
			out = append(out, uiMount(m))
		}
		each(out)
	})
	b.dropConn(c, err)
	return escaped(err)
}

// infoFields lists a vault's on-disk facts for the info screen.
func infoFields(info vault.Info) []Field {
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	names := "encrypted (EME, per-directory IV)"
	switch {
	case info.PlaintextNames:
		names = "plaintext (not encrypted)"
	case info.DeterministicNames:
		names = "encrypted (EME, deterministic: no per-directory IV)"
	}
	longNames := "off"
	if info.LongNames {
		longNames = fmt.Sprintf("on, names over %d characters are hashed", info.LongNameMax)
	}
	return []Field{
		{"Cipher", info.CipherName},
		{"Opens in", app.OpensIn(info.Cipher).Detail()},
		{"Format", app.Format(info.Version, info.Cipher) + ", created by " + vault.EscapeControl(info.Creator)},
		{"File names", names},
		{"Long names", longNames},
		{"HKDF", yes(info.HKDF)},
		{"scrypt", fmt.Sprintf("N=2^%d r=%d p=%d (key %d bytes, salt %d bytes)", info.ScryptLogN, info.ScryptR, info.ScryptP, info.ScryptKeyLen, info.ScryptSaltLen)},
		{"Feature flags", strings.Join(info.FeatureFlags, " ")},
	}
}
