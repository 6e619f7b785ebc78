package ui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/mountmgr"
)

// Event is one entry of the daemon's event log, as the TUI shows it. The
// daemon escaped its text.
type Event struct {
	Seq        uint64
	Time       time.Time
	Kind       string // mountmgr.Event* ("mounted", "unmounted", ...)
	CipherDir  string
	MountPoint string
	// Summary says what happened in a few words: "unmounted (idle)".
	Summary string
}

// eventsKept is how many events the app holds (the daemon keeps more).
const eventsKept = 200

type (
	eventsMsg   []Event
	eventsEnded struct{ err error }
	eventsRetry struct{}
)

// WatchEvents streams the daemon's event log (see Backend.WatchEvents).
func (b *realBackend) WatchEvents(ctx context.Context, after uint64, each func([]Event)) error {
	err := b.app.FollowEvents(ctx, after, func(evs []app.NamedEvent) {
		out := make([]Event, 0, len(evs))
		for _, e := range evs {
			out = append(out, Event{Seq: e.Seq, Time: e.Time, Kind: e.Kind, CipherDir: e.CipherDir, MountPoint: e.MountPoint, Summary: e.Summary()})
		}
		each(out)
	})
	return escaped(err)
}

// startEvents follows the event log from the last event the app has.
func (m *Model) startEvents() tea.Cmd {
	b, ctx := m.c.backend, m.c.ctx
	after := uint64(0)
	if n := len(m.c.events); n > 0 {
		after = m.c.events[n-1].Seq
	}
	return stream(ctx, func(emit func(tea.Msg)) tea.Msg {
		err := b.WatchEvents(ctx, after, func(evs []Event) { emit(eventsMsg(evs)) })
		return eventsEnded{err: err}
	})
}

// addEvents appends new events, keeping the newest eventsKept.
func (c *common) addEvents(evs []Event) {
	for _, e := range evs {
		if n := len(c.events); n > 0 && e.Seq <= c.events[n-1].Seq {
			continue // already have it (a reconnect repeats nothing, but be sure)
		}
		c.events = append(c.events, e)
	}
	if len(c.events) > eventsKept {
		c.events = append([]Event(nil), c.events[len(c.events)-eventsKept:]...)
	}
}

// lastEvent is the newest event of the vault at cipherDir.
func (c *common) lastEvent(cipherDir string) (Event, bool) {
	for i := len(c.events) - 1; i >= 0; i-- {
		if samePath(c.events[i].CipherDir, cipherDir) {
			return c.events[i], true
		}
	}
	return Event{}, false
}

// vaultName is the registered name of cipherDir, or the path itself.
func (c *common) vaultName(cipherDir string) string {
	for _, v := range c.vaults {
		if samePath(v.CipherDir, cipherDir) {
			return v.Name
		}
	}
	if cipherDir == "" {
		return "-"
	}
	return tildePath(cipherDir)
}

// eventsScreen lists the daemon's events, newest first.
type eventsScreen struct {
	c      *common
	offset int // first shown event, counted from the newest
}

func newEventsScreen(c *common) *eventsScreen { return &eventsScreen{c: c} }

func (s *eventsScreen) title() string { return "events" }
func (s *eventsScreen) typing() bool  { return false }
func (s *eventsScreen) busy() bool    { return false }
func (s *eventsScreen) Init() tea.Cmd { return nil }

func (s *eventsScreen) keys() []key.Binding {
	k := s.c.keys
	return []key.Binding{k.Up, k.Down, k.Back}
}

// rows is how many events fit above the help bar.
func (s *eventsScreen) rows() int { return max(1, s.c.height-6) }

func (s *eventsScreen) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyMsg)
	if !ok {
		return nil
	}
	k := s.c.keys
	switch {
	case key.Matches(km, k.Back):
		return s.c.back("", false)
	case key.Matches(km, k.Up):
		s.offset = max(0, s.offset-1)
	case key.Matches(km, k.Down):
		s.offset = max(0, min(s.offset+1, len(s.c.events)-s.rows()))
	}
	return nil
}

func (s *eventsScreen) View() string {
	st := s.c.styles
	w := s.c.contentWidth()
	evs := s.c.events
	var b strings.Builder
	if err := s.c.eventsErr; err != nil {
		b.WriteString(st.Error.Render(wrap("Could not read the event log: "+err.Error()+" (retrying)", w)) + "\n")
		if len(evs) == 0 {
			return b.String()
		}
	}
	if len(evs) == 0 {
		return st.Subtle.Render(wrap("No events yet. Mounts, unmounts and their reasons, and read errors will show here.", w))
	}
	end := min(len(evs), s.offset+s.rows())
	nameW := 0
	for i := s.offset; i < end; i++ {
		nameW = max(nameW, lenRunes(truncate(s.c.vaultName(evs[len(evs)-1-i].CipherDir), 16)))
	}
	for i := s.offset; i < end; i++ {
		e := evs[len(evs)-1-i]
		when := e.Time.Local().Format("Jan 02 15:04:05")
		name := padRight(truncate(s.c.vaultName(e.CipherDir), 16), nameW)
		text := truncate(e.Summary, max(10, w-len(when)-nameW-4))
		style := st.Subtle
		switch e.Kind {
		case mountmgr.EventAuthFailed, mountmgr.EventMountFailed:
			style = st.Error
		case mountmgr.EventStale:
			style = st.Warning
		}
		b.WriteString(st.Subtle.Render(when) + "  " + st.Value.Render(name) + "  " + style.Render(text) + "\n")
	}
	if len(evs) > s.rows() {
		b.WriteString(st.Subtle.Render(fmt.Sprintf("%d–%d of %d, newest first (↑/↓ to scroll)", s.offset+1, end, len(evs))))
	}
	return b.String()
}

func lenRunes(s string) int { return len([]rune(s)) }

// automountSet reports the result of toggling a vault's automount option.
type automountSet struct {
	v   Vault
	on  bool
	err error
}

// toggleAutomount flips the selected vault's automount option in the registry.
func (l *listScreen) toggleAutomount(v Vault) tea.Cmd {
	b := l.c.backend
	on := !v.Automount
	return func() tea.Msg { return automountSet{v: v, on: on, err: b.SetAutomount(v.Name, on)} }
}

// automountDone shows the result and reloads the registry.
func (l *listScreen) automountDone(msg automountSet) tea.Cmd {
	switch {
	case msg.err != nil:
		l.setStatus("Could not change "+msg.v.Name+": "+msg.err.Error(), true)
		return nil
	case msg.on:
		l.setStatus(msg.v.Name+": automount on. It mounts at login with the password stored by mount --remember (vaultui autostart enable).", false)
	default:
		l.setStatus(msg.v.Name+": automount off.", false)
	}
	return l.load()
}
