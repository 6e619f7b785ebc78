package ui

import (
	"context"
	"slices"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/registry"
)

// common is shared by the root model and every screen (as in soft-serve):
// the terminal size, the look, the keys, the backend, and the live data the
// root model keeps up to date whatever screen is showing (mounts with their
// throughput history, the last speed test).
type common struct {
	width, height int
	styles        *Styles
	keys          *KeyMap
	backend       Backend
	ctx           context.Context
	now           func() time.Time
	cursorMode    cursor.Mode // of every text input; tests use one that doesn't blink
	spinner       spinner.Model

	vaults []Vault // the registry, as last read by the list
	mounts []mountmgr.MountInfo
	// conflicts counts each vault's sync-conflict copies (by cipherdir),
	// recounted whenever the list re-reads the registry.
	conflicts map[string]ConflictCount
	events    []app.NamedEvent // the daemon's event log, oldest first, at most eventsKept
	// eventsErr is why the event log could not be read (the app retries), until it can.
	eventsErr error

	// switchTo and backTo ask the root model to change screens right after
	// the current Update, before the next key is read, so keys typed
	// quickly after "m" reach the password prompt.
	switchTo screen
	backTo   *backMsg

	// lockErr is why lock policies cannot work here (Backend.LockPolicyWorks), once the
	// check at start has answered; nil before.
	lockErr error

	jobs    int                 // numbers background jobs whose late messages must be told apart
	history map[string]*history // by mount point
	speed   speedState
}

// lockChecked answers the check at start.
type lockChecked struct{ err error }

// defaultLock is the policy a new vault gets: sleep where it works, never
// where it cannot (mountmgr.DefaultLockPolicy), so none is promised a lock
// that will not happen.
func (c *common) defaultLock() string { return app.DefaultLock(c.lockErr) }

// lockProblem is why policy cannot work here, or "" (it can, or it is never).
func (c *common) lockProblem(policy string) string {
	if app.LockProblem(policy, c.lockErr) == nil {
		return ""
	}
	return c.lockErr.Error()
}

// lockText describes a lock policy in words.
func lockText(policy string) string {
	switch policy {
	case registry.LockSleep:
		return "sleep: unmounted before the machine sleeps"
	case registry.LockScreen:
		return "sleep+screenlock: unmounted before sleep and on screen lock"
	}
	return "never"
}

// speedState is the last speed test, remembered for the create wizard.
type speedState struct {
	run     int // increments per run; stale stream messages are dropped
	running bool
	// report holds the figures so far; rec is set once a test finished or was
	// read from the cache.
	report app.SpeedReport
	rec    *app.Recommendation
	err    error // why the last run ended without a result
}

// contentWidth is the width inside the app's padding.
func (c *common) contentWidth() int { return max(20, c.width-2) }

// mountFor returns the mount of a cipherdir, if any: the one in place
// before a detached or stale one (a detached vault can be mounted again).
func (c *common) mountFor(cipherDir string) (mountmgr.MountInfo, bool) {
	var found *mountmgr.MountInfo
	for i, m := range c.mounts {
		if samePath(m.CipherDir, cipherDir) && (found == nil || m.InPlace() && !found.InPlace()) {
			found = &c.mounts[i]
		}
	}
	if found == nil {
		return mountmgr.MountInfo{}, false
	}
	return *found, true
}

// inPlace counts the mounts at their mount points.
func (c *common) inPlace() int {
	n := 0
	for _, m := range c.mounts {
		if m.InPlace() {
			n++
		}
	}
	return n
}

// dropMount forgets a mount we just unmounted, so the list doesn't show it
// until the next statistics snapshot.
func (c *common) dropMount(mountPoint string) {
	c.mounts = slices.DeleteFunc(slices.Clone(c.mounts), func(m mountmgr.MountInfo) bool { return samePath(m.MountPoint, mountPoint) })
}

// historyLen is how many one-second samples a mount's history keeps: what
// the live chart shows.
const historyLen = chartWindow

// history is the last historyLen seconds of throughput samples of one mount.
type history struct {
	read, write []float64
}

func (h *history) add(m mountmgr.MountInfo) {
	h.read = tail(append(h.read, m.Stats.ReadBps), historyLen)
	h.write = tail(append(h.write, m.Stats.WriteBps), historyLen)
}

// Messages shared between screens and the root model.
type (
	// backMsg returns to the vault list; status is shown there. With
	// selectDir the list moves its cursor to that vault (by cipherdir) once
	// it shows it: the vault a screen just added or created is the one the
	// next key acts on.
	backMsg struct {
		status    string
		reload    bool
		selectDir string
	}
	vaultsMsg struct {
		vaults []Vault
		err    error
	}
	mountsMsg   []mountmgr.MountInfo
	watchEnded  struct{ err error }
	runSpeedMsg struct{}
	// speedProgress carries a running test's figures so far.
	speedProgress struct {
		run    int
		report app.SpeedReport
	}
	speedDone struct {
		run    int
		report app.SpeedReport
		err    error
	}
	// speedLoaded carries the remembered speed test to the root model.
	speedLoaded struct{ report app.SpeedReport }
)

func (c *common) open(s screen) tea.Cmd {
	c.switchTo = s
	return nil
}

// back returns to the list, showing status there and re-reading the
// registry if reload is set.
func (c *common) back(status string, reload bool) tea.Cmd {
	c.backTo = &backMsg{status: status, reload: reload}
	return nil
}

// backToVault returns to the list with the vault at cipherDir selected, once the
// re-read registry shows it.
func (c *common) backToVault(status, cipherDir string) tea.Cmd {
	c.backTo = &backMsg{status: status, reload: true, selectDir: cipherDir}
	return nil
}

// streamMsg carries one message of a background job and the command that
// waits for the next one, so long jobs (speed test, fsck, watch) report
// progress through ordinary messages and never block Update.
type streamMsg struct {
	msg  tea.Msg
	next tea.Cmd
}

// stream runs work in a goroutine. Every message it emits, then the one it
// returns, arrives in Update in order.
func stream(ctx context.Context, work func(emit func(tea.Msg)) tea.Msg) tea.Cmd {
	ch := make(chan tea.Msg, 64)
	go func() {
		defer close(ch)
		emit := func(m tea.Msg) {
			select {
			case ch <- m:
			case <-ctx.Done():
			}
		}
		final := work(emit)
		select {
		case ch <- final:
		case <-ctx.Done():
		}
	}()
	return next(ch)
}

func next(ch chan tea.Msg) tea.Cmd {
	return func() tea.Msg {
		m, ok := <-ch
		if !ok {
			return nil
		}
		return streamMsg{msg: m, next: next(ch)}
	}
}
