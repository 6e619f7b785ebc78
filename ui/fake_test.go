package ui

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/registry"
	"github.com/vaultui/vaultui/vault"
	"github.com/vaultui/vaultui/vault/convert"
)

func init() {
	// Deterministic views: no colour codes (the cursor: see newModel).
	lipgloss.SetColorProfile(termenv.Ascii)
	time.Local = time.UTC // views print local times
}

// testNow is the fake clock of every test.
var testNow = time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)

var (
	gcm     = crypto.AESGCM
	aegis   = crypto.AEGIS
	xchacha = crypto.XChaCha
	siv     = crypto.AESSIV
)

// fakeBackend is a deterministic Backend: one password opens everything,
// speed results are fixed, mounts are a list in memory.
type fakeBackend struct {
	mu           sync.Mutex
	password     string
	vaults       []Vault
	mounts       []mountmgr.MountInfo
	created      []createCall
	mountReqs    []app.MountRequest
	infoOf       []registry.Entry // the vaults Info was asked about
	addReqs      []app.NewEntry
	unmounts     []string
	lazyUnmounts []string
	busy         bool  // unmounts without lazy fail with ErrBusy
	mountErr     error // the next mount fails with it
	checkErr     error // CheckMount's answer
	problems     []app.Finding
	speedCalls   int
	cachedSpeed  app.SpeedReport   // what CachedSpeed returns; none without ciphers
	stored       map[string]string // the fake keyring: cipherdir -> password
	storedErr    error             // StoredPassword fails with it (a keyring that timed out)
	storedWait   chan struct{}     // StoredPassword waits for it to close (a slow keyring)
	forgotten    []string
	watch        chan []mountmgr.MountInfo // Watch forwards these until ctx is done
	// conflicts are the conflict copies by cipherdir; settled records
	// "path keep" for each Settle, settleErr fails the next one.
	conflicts map[string][]vault.ConflictEntry
	settled   []string
	settleErr error
	splitDirs map[string]int  // CountConflicts's SplitDirs by cipherdir
	nonEmpty  map[string]bool // folders CheckNewCipherDir finds not empty
	lockErr   error           // LockPolicyWorks's answer (no logind)
	counts    int             // CountConflicts calls
	sessions  int             // open conflict sessions
	converted []string        // "cipherdir cipher" of each conversion
}

func newFake() *fakeBackend {
	return &fakeBackend{password: "hunter22"}
}

func (f *fakeBackend) Vaults() ([]Vault, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Vault(nil), f.vaults...), nil
}

func (f *fakeBackend) DefaultMountPoint(name string) string { return "/home/u/Vaults/" + name }

func (f *fakeBackend) CheckNewCipherDir(dir string) error {
	if filepath.Base(dir) == "full" || f.nonEmpty[dir] {
		return fmt.Errorf("%s: %w", dir, ErrNotEmpty)
	}
	return nil
}

// CheckCreate answers as app.CheckCreate for what the wizard's tests need: options that go
// together (the core's rule, vault.CreateOptions.Validate), a valid name not registered, a
// mount point outside the folder.
func (f *fakeBackend) CheckCreate(ctx context.Context, r app.NewVault) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := r.Options.Validate(); err != nil {
		return err
	}
	if err := registry.ValidateName(r.Name); err != nil {
		return err
	}
	for _, v := range f.vaults {
		if v.Name == r.Name {
			return fmt.Errorf("vault name %q: %w", r.Name, registry.ErrDuplicate)
		}
	}
	if r.MountPoint != "" && (r.MountPoint == r.CipherDir || strings.HasPrefix(r.MountPoint, r.CipherDir+"/")) {
		return fmt.Errorf("mount point %s and the new vault's cipherdir %s are nested", r.MountPoint, r.CipherDir)
	}
	return nil
}

// createCall is one CreateVault: the request and its password.
type createCall struct {
	app.NewVault
	Password []byte
}

func (f *fakeBackend) CreateVault(ctx context.Context, r app.NewVault, password []byte) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.created = append(f.created, createCall{NewVault: r, Password: append([]byte(nil), password...)})
	format, err := vault.FormatByID(r.Options.Format)
	if err != nil {
		return nil, err
	}
	name := app.Kind{Format: format, Cipher: r.Options.Cipher}.Label()
	f.vaults = append(f.vaults, Vault{Entry: registry.Entry{Name: r.Name, CipherDir: r.CipherDir, MountPoint: r.MountPoint, Lock: r.Lock}, Cipher: name})
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i * 7)
	}
	return key, nil
}

// AddVault answers as app.Add: empty fields take their defaults, a taken name is refused.
func (f *fakeBackend) AddVault(ctx context.Context, r app.NewEntry) (Vault, error, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.addReqs = append(f.addReqs, r)
	if filepath.Base(r.CipherDir) == "notavault" {
		return Vault{}, nil, fmt.Errorf("%s: no gocryptfs.conf", r.CipherDir)
	}
	v := Vault{Entry: registry.Entry{Name: r.Name, CipherDir: r.CipherDir, MountPoint: r.MountPoint, Lock: r.Lock,
		Reverse: r.Reverse}, Cipher: "AES-256-GCM"}
	if v.Name == "" {
		v.Name = app.DefaultName(r.CipherDir)
	}
	if v.MountPoint == "" {
		v.MountPoint = f.DefaultMountPoint(v.Name)
	}
	var note error
	if v.Lock == "" {
		v.Lock = app.DefaultLock(f.lockErr)
		if f.lockErr != nil {
			note = fmt.Errorf("lock policy %s: %w", v.Lock, f.lockErr)
		}
	}
	for _, o := range f.vaults {
		if o.Name == v.Name {
			return Vault{}, nil, fmt.Errorf("vault name %q: %w", v.Name, registry.ErrDuplicate)
		}
	}
	f.vaults = append(f.vaults, v)
	return v, note, nil
}

func (f *fakeBackend) Forget(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forgotten = append(f.forgotten, name)
	for i, v := range f.vaults {
		if v.Name == name {
			f.vaults = append(f.vaults[:i], f.vaults[i+1:]...)
			return nil
		}
	}
	return fmt.Errorf("%s: not registered", name)
}

func (f *fakeBackend) Info(ctx context.Context, v registry.Entry) ([]vault.Fact, error) {
	f.mu.Lock()
	f.infoOf = append(f.infoOf, v)
	f.mu.Unlock()
	return []vault.Fact{{Label: "Cipher", Value: "AEGIS-256X2"}, {Label: "Format", Value: "gocryptfs v2"}, {Label: "scrypt", Value: "N=2^16 r=8 p=1"}, {Label: "Feature flags", Value: "HKDF DirIV EMENames LongNames Raw64"}}, nil
}

func (f *fakeBackend) ChangePassword(ctx context.Context, dir string, old, pw []byte) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if string(old) != f.password {
		return "", fmt.Errorf("%s: %w", dir, ErrWrongPassword)
	}
	f.password = string(pw)
	if _, ok := f.stored[dir]; ok {
		f.stored[dir] = string(pw) // as app.ChangePassword
	}
	return filepath.Join(dir, "gocryptfs.conf.bak"), nil
}

// unlock answers as app's use cases do: without a password (nil) the fake keyring's, else
// pw. The caller holds f.mu.
func (f *fakeBackend) unlock(dir string, pw []byte) error {
	if pw == nil {
		stored, ok := f.stored[dir]
		switch {
		case !ok:
			return &app.PasswordNeededError{Vault: app.Vault{CipherDir: dir}, Reason: app.NoneStored}
		case stored != f.password:
			return &app.PasswordNeededError{Vault: app.Vault{CipherDir: dir}, Reason: app.StoredFailed, Err: ErrWrongPassword}
		}
		return nil
	}
	if string(pw) != f.password {
		return fmt.Errorf("%s: %w", dir, ErrWrongPassword)
	}
	return nil
}

func (f *fakeBackend) Fsck(ctx context.Context, dir string, pw []byte, progress func(vault.FsckProgress)) ([]app.Finding, error) {
	f.mu.Lock()
	err := f.unlock(dir, pw)
	f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	progress(vault.FsckProgress{Counting: true})
	for i := 1; i <= 4; i++ {
		progress(vault.FsckProgress{Done: i, Total: 4, Bytes: int64(i) * 1e6, TotalBytes: 4e6, Path: fmt.Sprintf("dir/file%d", i)})
	}
	return f.problems, nil
}

func (f *fakeBackend) Ciphers() []crypto.CipherID { return []crypto.CipherID{aegis, gcm, xchacha, siv} }

// fakeSpeed is the fixed speed test: three rounds of every cipher and a write to a disk,
// where AEGIS's 3.1x for the cipher alone shrinks to 1.1x.
func fakeSpeed() app.SpeedReport {
	ms := time.Millisecond
	return app.SpeedReport{
		Measured: testNow, HasAES: true,
		Ciphers: []app.CipherSpeed{
			{Cipher: crypto.AEGIS, Samples: []float64{7400, 7200, 7600}, MBps: 7400, Implementation: "VAES-256; batches VAES-512"},
			{Cipher: crypto.AESGCM, Samples: []float64{2400, 2350, 2450}, MBps: 2400},
			{Cipher: crypto.XChaCha, Samples: []float64{960, 950, 970}, MBps: 960},
			{Cipher: crypto.AESSIV, Samples: []float64{310, 300, 320}, MBps: 310},
		},
		Write: &app.WriteSpeed{Dir: "/srv/cache/vaultui", FSType: "ext4", Cipher: crypto.AEGIS, Baseline: crypto.AESGCM,
			Bytes: 32 << 20, Measured: testNow, Rounds: []app.WriteRound{
				{Cipher: app.WriteSample{Wall: 100 * ms, CPU: 6 * ms}, Baseline: app.WriteSample{Wall: 110 * ms, CPU: 16 * ms}},
				{Cipher: app.WriteSample{Wall: 104 * ms, CPU: 6 * ms}, Baseline: app.WriteSample{Wall: 112 * ms, CPU: 16 * ms}},
				{Cipher: app.WriteSample{Wall: 98 * ms, CPU: 7 * ms}, Baseline: app.WriteSample{Wall: 109 * ms, CPU: 16 * ms}},
			}},
	}
}

func (f *fakeBackend) SpeedTest(ctx context.Context, report func(app.SpeedReport)) (app.SpeedReport, error) {
	f.mu.Lock()
	f.speedCalls++
	f.mu.Unlock()
	report(fakeSpeed())
	return fakeSpeed(), nil // a fresh copy: screens may change what they get
}

func (f *fakeBackend) CachedSpeed() (app.SpeedReport, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cachedSpeed, f.cachedSpeed.Ciphers != nil
}

func (f *fakeBackend) CheckMount(app.MountRequest) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.checkErr
}

func (f *fakeBackend) Mount(ctx context.Context, req app.MountRequest) (app.Mounted, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mountReqs = append(f.mountReqs, req)
	if err := f.mountErr; err != nil {
		f.mountErr = nil
		return app.Mounted{}, err
	}
	dir, fromKeyring := req.Vault.CipherDir, req.Password == nil
	if err := f.unlock(dir, req.Password); err != nil {
		return app.Mounted{}, err
	}
	m := app.Mounted{MountInfo: mountmgr.MountInfo{CipherDir: dir, MountPoint: req.MountPoint, Cipher: "AEGIS-256X2", ReadOnly: req.ReadOnly || req.Reverse, Since: testNow.Add(-5 * time.Minute)}}
	// As app.Mount: a typed password that worked replaces a stored one that differs, and
	// with Remember a missing one is stored.
	if stored, ok := f.stored[dir]; !fromKeyring && ok && stored != string(req.Password) {
		f.stored[dir] = string(req.Password)
		m.Keyring.Action = app.KeyringReplaced
	} else if req.Remember && !fromKeyring && !ok {
		if f.stored == nil {
			f.stored = map[string]string{}
		}
		f.stored[dir] = string(req.Password)
		m.Keyring.Action = app.KeyringStored
	}
	f.mounts = append(f.mounts, m.MountInfo)
	return m, nil
}

func (f *fakeBackend) Unmount(ctx context.Context, target string, lazy bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.busy && !lazy {
		return fmt.Errorf("%s: %w (held by vim)", target, ErrBusy)
	}
	if lazy {
		f.lazyUnmounts = append(f.lazyUnmounts, target)
	} else {
		f.unmounts = append(f.unmounts, target)
	}
	return nil
}

func (f *fakeBackend) Watch(ctx context.Context, each func([]mountmgr.MountInfo)) error {
	if f.watch == nil {
		<-ctx.Done()
		return nil
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case ms := <-f.watch:
			each(ms)
		}
	}
}

// testModel is a root model on a fake backend at 80x24 with the registry
// loaded, driven without a running program.
type testModel struct {
	t *testing.T
	*Model
	fb *fakeBackend
}

func newTestModel(t *testing.T, fb *fakeBackend) *testModel {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	m := newModel(ctx, fb, func() time.Time { return testNow }, cursor.CursorStatic)
	tm := &testModel{t: t, Model: m, fb: fb}
	tm.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	tm.run(m.list.Init())
	return tm
}

// send delivers msg and runs the commands it returns.
func (tm *testModel) send(msgs ...tea.Msg) {
	tm.t.Helper()
	for _, msg := range msgs {
		_, cmd := tm.Update(msg)
		tm.run(cmd)
	}
}

// keys types each string as keys: "enter", "esc", "tab", "up" and "down"
// are the named keys, anything else is typed rune by rune.
func (tm *testModel) keys(keys ...string) {
	tm.t.Helper()
	for _, k := range keys {
		switch k {
		case "enter":
			tm.send(tea.KeyMsg{Type: tea.KeyEnter})
		case "esc":
			tm.send(tea.KeyMsg{Type: tea.KeyEsc})
		case "tab":
			tm.send(tea.KeyMsg{Type: tea.KeyTab})
		case "up":
			tm.send(tea.KeyMsg{Type: tea.KeyUp})
		case "down":
			tm.send(tea.KeyMsg{Type: tea.KeyDown})
		case " ":
			tm.send(tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}})
		case "ctrl+u":
			tm.send(tea.KeyMsg{Type: tea.KeyCtrlU})
		case "ctrl+c":
			tm.send(tea.KeyMsg{Type: tea.KeyCtrlC})
		default:
			for _, r := range k {
				tm.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
			}
		}
	}
}

// cmdTimeout bounds one command: timers (spinner, the watch retry) are
// dropped, everything the fake does returns at once.
const cmdTimeout = 300 * time.Millisecond

// run executes cmd and feeds its messages back, like the program loop but
// synchronously: batches and sequences in order, spinner ticks dropped.
func (tm *testModel) run(cmd tea.Cmd) {
	tm.t.Helper()
	if cmd == nil {
		return
	}
	ch := make(chan tea.Msg, 1)
	go func() { ch <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-ch:
	case <-time.After(cmdTimeout):
		return
	}
	switch msg := msg.(type) {
	case nil, spinner.TickMsg, tea.QuitMsg:
		return
	case tea.BatchMsg:
		for _, c := range msg {
			tm.run(c)
		}
		return
	}
	// tea.Sequence's message type is unexported: a slice of commands.
	if v := reflect.ValueOf(msg); v.Kind() == reflect.Slice && v.Type().Elem() == reflect.TypeOf(tea.Cmd(nil)) {
		for i := 0; i < v.Len(); i++ {
			tm.run(v.Index(i).Interface().(tea.Cmd))
		}
		return
	}
	tm.send(msg)
}

func (f *fakeBackend) CountConflicts(dir string) (ConflictCount, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts++
	return ConflictCount{N: len(f.conflicts[dir]), Complete: true, SplitDirs: f.splitDirs[dir]}, nil
}

func (f *fakeBackend) OpenConflicts(ctx context.Context, dir, mountPoint string, pw []byte) (ConflictSession, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if mountPoint == "" {
		if err := f.unlock(dir, pw); err != nil {
			return nil, err
		}
	}
	f.sessions++
	return &fakeConflicts{f: f, dir: dir}, nil
}

type fakeConflicts struct {
	f   *fakeBackend
	dir string
}

func (s *fakeConflicts) List(ctx context.Context) ([]vault.ConflictEntry, error) {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	return append([]vault.ConflictEntry(nil), s.f.conflicts[s.dir]...), nil
}

func (s *fakeConflicts) Settle(ctx context.Context, p string, keep vault.Keep) error {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	if err := s.f.settleErr; err != nil {
		s.f.settleErr = nil
		return err
	}
	s.f.settled = append(s.f.settled, fmt.Sprintf("%s %d", p, keep))
	list := s.f.conflicts[s.dir]
	for i, c := range list {
		if c.Path == p {
			s.f.conflicts[s.dir] = append(list[:i:i], list[i+1:]...)
			return nil
		}
	}
	return fmt.Errorf("%s: not a conflict copy", p)
}

func (s *fakeConflicts) Close() {
	s.f.mu.Lock()
	s.f.sessions--
	s.f.mu.Unlock()
}

// WatchEvents waits: tests deliver events as eventsMsg.
func (f *fakeBackend) WatchEvents(ctx context.Context, after uint64, each func([]app.NamedEvent)) error {
	<-ctx.Done()
	return nil
}

func (f *fakeBackend) SetAutomount(name string, on bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.vaults {
		if f.vaults[i].Name == name {
			f.vaults[i].MountAtStart = on
			return nil
		}
	}
	return errors.New("no such vault")
}

func (f *fakeBackend) LockPolicyWorks(ctx context.Context) error { return f.lockErr }

// StoredPassword answers from f.stored, the fake keyring (cipherdir -> password).
func (f *fakeBackend) StoredPassword(ctx context.Context, cipherDir string) (bool, error) {
	if f.storedWait != nil {
		select {
		case <-f.storedWait:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.storedErr != nil {
		return false, f.storedErr
	}
	_, ok := f.stored[cipherDir]
	return ok, nil
}

// PlanConvert plans as the core would for a vault of size convertBytes; a mounted vault is
// refused as app.PlanConvert refuses it.
func (f *fakeBackend) PlanConvert(ctx context.Context, dir string, to crypto.CipherID, format string) (app.ConvertPlan, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range f.mounts {
		if m.CipherDir == dir {
			return app.ConvertPlan{}, fmt.Errorf("%s is mounted at %s: %w", dir, m.MountPoint, convert.ErrMounted)
		}
	}
	gocryptfs := vault.DefaultFormat()
	target, _ := vault.FormatByID(format)
	if to == "" {
		to = "SIV_GCM"
	}
	return app.ConvertPlan{Plan: &convert.Plan{Dir: dir, From: convert.Side{Format: gocryptfs, Cipher: "aegis"}, To: convert.Side{Format: target, Cipher: string(to)}, Work: dir + ".vaultui-convert",
		KeepOld: dir + ".old-aegis", Sizes: vault.Sizes{PlainBytes: 3e9, Files: 120, NeedBytes: 3.1e9}, FreeBytes: 40e9}}, nil
}

// Convert converts with the keyring's password or pw (as unlock), reporting each phase.
func (f *fakeBackend) Convert(ctx context.Context, dir string, cipher crypto.CipherID, format string, pw []byte, progress func(convert.Progress)) (*convert.Result, error) {
	to := string(cipher)
	f.mu.Lock()
	err := f.unlock(dir, pw)
	f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	for _, ph := range []string{convert.PhaseCopy, convert.PhaseCheck} {
		progress(convert.Progress{Phase: ph, Done: 3e9, Total: 3e9})
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if format != "" {
		to += " into " + format
	}
	f.converted = append(f.converted, dir+" "+to)
	gocryptfs := vault.DefaultFormat()
	return &convert.Result{Dir: dir, OldDir: dir + ".old-aegis", From: convert.Side{Format: gocryptfs, Cipher: "aegis"},
		To: convert.Side{Format: gocryptfs, Cipher: to}, Swap: convert.SwapExchange}, nil
}
