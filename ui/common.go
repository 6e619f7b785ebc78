package ui

import (
	"context"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/crypto"
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
	mounts []Mount
	// conflicts counts each vault's sync-conflict copies (by cipherdir),
	// recounted whenever the list re-reads the registry.
	conflicts map[string]ConflictCount
	events    []Event // the daemon's event log, oldest first, at most eventsKept

	// switchTo and backTo ask the root model to change screens right after
	// the current Update, before the next key is read, so keys typed
	// quickly after "m" reach the password prompt.
	switchTo screen
	backTo   *backMsg

	jobs    int                 // numbers background jobs whose late messages must be told apart
	history map[string]*history // by mount point
	speed   speedState
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

func (s *speedState) result(id string) (app.CipherSpeed, bool) {
	return s.report.Result(crypto.CipherID(id))
}

// contentWidth is the width inside the app's padding.
func (c *common) contentWidth() int { return max(20, c.width-2) }

// mountFor returns the live mount of a cipherdir, if any.
func (c *common) mountFor(cipherDir string) (Mount, bool) {
	for _, m := range c.mounts {
		if samePath(m.CipherDir, cipherDir) {
			return m, true
		}
	}
	return Mount{}, false
}

// dropMount forgets a mount we just unmounted, so the list doesn't show it
// until the next statistics snapshot.
func (c *common) dropMount(mountPoint string) {
	kept := c.mounts[:0:0]
	for _, m := range c.mounts {
		if !samePath(m.MountPoint, mountPoint) {
			kept = append(kept, m)
		}
	}
	c.mounts = kept
}

// historyLen is how many one-second samples the live chart keeps: a minute.
const historyLen = 60

// history is a minute of throughput samples of one mount.
type history struct {
	read, write []float64
}

func (h *history) add(m Mount) {
	h.read = appendCapped(h.read, m.ReadBps)
	h.write = appendCapped(h.write, m.WriteBps)
}

func appendCapped(s []float64, v float64) []float64 {
	s = append(s, v)
	if len(s) > historyLen {
		s = s[len(s)-historyLen:]
	}
	return s
}

// Messages shared between screens and the root model.
type (
	// backMsg returns to the vault list; status is shown there.
	backMsg struct {
		status string
		reload bool
	}
	vaultsMsg struct {
		vaults []Vault
		err    error
	}
	mountsMsg   []Mount
	watchEnded  struct{ err error }
	watchRetry  struct{}
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
	// openMsg switches to another screen (the speed test opens the wizard).
	openMsg struct{ s screen }
)

// open switches to screen s.
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
