package ui

import (
	"context"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/vault"
)

// eventsKept is how many events the app holds (the daemon keeps more).
const eventsKept = 200

type (
	eventsMsg   []app.NamedEvent
	eventsEnded struct{ err error }
)

// WatchEvents streams the daemon's event log (see Backend.WatchEvents).
func (b *realBackend) WatchEvents(ctx context.Context, after uint64, each func([]app.NamedEvent)) error {
	return escaped(b.app.FollowEvents(ctx, after, each))
}

// startEvents follows the event log from the last event the app has.
func (m *Model) startEvents() tea.Cmd {
	b, ctx := m.c.backend, m.c.ctx
	after := uint64(0)
	if n := len(m.c.events); n > 0 {
		after = m.c.events[n-1].Seq
	}
	return stream(ctx, func(emit func(tea.Msg)) tea.Msg {
		err := b.WatchEvents(ctx, after, func(evs []app.NamedEvent) { emit(eventsMsg(evs)) })
		return eventsEnded{err: err}
	})
}

// addEvents appends new events, keeping the newest eventsKept.
func (c *common) addEvents(evs []app.NamedEvent) {
	for _, e := range evs {
		if n := len(c.events); n > 0 && e.Seq <= c.events[n-1].Seq {
			continue // already have it (a reconnect repeats nothing, but be sure)
		}
		c.events = append(c.events, e)
	}
	if len(c.events) > eventsKept {
		c.events = append([]app.NamedEvent(nil), c.events[len(c.events)-eventsKept:]...)
	}
}

// lastEvent is the newest event of the vault at cipherDir.
func (c *common) lastEvent(cipherDir string) (app.NamedEvent, bool) {
	for i := len(c.events) - 1; i >= 0; i-- {
		if samePath(c.events[i].CipherDir, cipherDir) {
			return c.events[i], true
		}
	}
	return app.NamedEvent{}, false
}

// reverseEvent reports whether e is about a reverse view: the daemon says so, or (for an
// event from a daemon before it did) the vault is registered as one.
func (c *common) reverseEvent(e app.NamedEvent) bool {
	i := c.registeredAt(e.CipherDir)
	return e.Reverse || i >= 0 && c.vaults[i].Reverse
}

// registeredAt is the index in c.vaults of the vault at cipherDir, or -1.
func (c *common) registeredAt(cipherDir string) int {
	return slices.IndexFunc(c.vaults, func(v Vault) bool { return samePath(v.CipherDir, cipherDir) })
}

// vaultName is the registered name of cipherDir, or the path itself.
func (c *common) vaultName(cipherDir string) string {
	if i := c.registeredAt(cipherDir); i >= 0 {
		return c.vaults[i].Name
	}
	if cipherDir == "" {
		return "-"
	}
	return app.Tilde(cipherDir)
}

// eventsScreen lists the daemon's events, newest first, one a line; enter
// shows the selected one whole (a reason can be longer than the line).
type eventsScreen struct {
	c      *common
	cursor int             // the selected event, counted from the newest
	offset int             // the first one shown
	detail *app.NamedEvent // shown whole, until esc
}

func newEventsScreen(c *common) *eventsScreen { return &eventsScreen{c: c} }

func (s *eventsScreen) title() string { return "events" }
func (s *eventsScreen) typing() bool  { return false }
func (s *eventsScreen) busy() bool    { return false }
func (s *eventsScreen) Init() tea.Cmd { return nil }

var showDetail = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "details"))

func (s *eventsScreen) keys() []key.Binding {
	k := s.c.keys
	switch {
	case s.detail != nil:
		return []key.Binding{k.Back}
	case len(s.c.events) == 0:
		return []key.Binding{k.Back}
	}
	return []key.Binding{showDetail, k.Up, k.Down, k.Back}
}

// newest returns the i-th event counted from the newest.
func (s *eventsScreen) newest(i int) app.NamedEvent { return s.c.events[len(s.c.events)-1-i] }

func (s *eventsScreen) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyMsg)
	if !ok {
		return nil
	}
	k := s.c.keys
	if s.detail != nil {
		if key.Matches(km, k.Back) {
			s.detail = nil
		}
		return nil
	}
	switch {
	case key.Matches(km, k.Back):
		return s.c.back("", false)
	case len(s.c.events) == 0:
	case key.Matches(km, showDetail):
		e := s.newest(min(s.cursor, len(s.c.events)-1))
		s.detail = &e
	case key.Matches(km, k.Up):
		s.cursor = max(0, s.cursor-1)
	case key.Matches(km, k.Down):
		s.cursor = min(s.cursor+1, len(s.c.events)-1)
	}
	return nil
}

func (s *eventsScreen) View() string {
	st := s.c.styles
	w := s.c.contentWidth()
	evs := s.c.events
	if s.detail != nil {
		return s.detailView(*s.detail, w)
	}
	var b strings.Builder
	h := s.c.bodyHeight() - 1 // a blank line above the help bar
	if err := s.c.eventsErr; err != nil {
		msg := st.Error.Render(wrap("Could not read the event log: "+err.Error()+" (retrying)", w))
		b.WriteString(msg + "\n")
		h -= lipgloss.Height(msg)
		if len(evs) == 0 {
			return b.String()
		}
	}
	if len(evs) == 0 {
		return st.Subtle.Render(wrap("No events yet. Mounts, unmounts and their reasons, and read errors will show here.", w))
	}
	s.cursor = max(0, min(s.cursor, len(evs)-1))
	start, end := window(slices.Repeat([]int{1}, len(evs)), s.cursor, s.offset, max(2, h), 0)
	s.offset = start
	// The vault column is as wide as the names shown, up to a quarter of the line.
	nameW := 0
	for i := start; i < end; i++ {
		nameW = max(nameW, lipgloss.Width(s.c.vaultName(s.newest(i).CipherDir)))
	}
	nameW = min(nameW, max(8, w/4))
	cut := false
	if start > 0 {
		b.WriteString(st.Subtle.Render(above(start)) + "\n")
	}
	for i := start; i < end; i++ {
		e := s.newest(i)
		when := e.Time.Local().Format("Jan 02 15:04:05")
		name := padRight(truncate(s.c.vaultName(e.CipherDir), nameW), nameW)
		full := tildeText(e.Summary())
		textW := max(10, w-2-len(when)-nameW-4)
		text := truncate(full, textW)
		cut = cut || text != full
		marker := "  "
		if i == s.cursor {
			marker = st.Cursor.Render("› ")
			name = st.Selected.Render(name)
		} else {
			name = st.Value.Render(name)
		}
		b.WriteString(marker + st.Subtle.Render(when) + "  " + name + "  " + eventStyle(st, e).Render(text) + "\n")
	}
	var foot []string
	if end < len(evs) {
		foot = append(foot, below(len(evs)-end))
	}
	if cut {
		foot = append(foot, "enter shows an event whole")
	}
	if len(foot) > 0 {
		b.WriteString(st.Subtle.Render(truncate(strings.Join(foot, " · "), w)))
	}
	return b.String()
}

// eventStyle colours failures red and stale mounts yellow; the words say it too.
func eventStyle(st *Styles, e app.NamedEvent) lipgloss.Style {
	switch e.Kind {
	case mountmgr.EventAuthFailed, mountmgr.EventMountFailed:
		return st.Error
	case mountmgr.EventStale:
		return st.Warning
	}
	return st.Subtle
}

// detailView is one event whole: every field, the text wrapped.
func (s *eventsScreen) detailView(e app.NamedEvent, w int) string {
	st := s.c.styles
	rows := []vault.Fact{
		{Label: "When", Value: e.Time.Local().Format("2006-01-02 15:04:05") + " (" + ago(s.c.now(), e.Time) + ")"},
		{Label: "Vault", Value: s.c.vaultName(e.CipherDir)},
	}
	// A reverse view turns the paths round: the folder is the plaintext and the mount point
	// the encrypted view. Each path gets a row of its own, wrapped between folder names.
	folder, mountPoint := "Folder", "Mount point"
	if s.c.reverseEvent(e) {
		folder, mountPoint = "Plain folder", "Encrypted view"
	}
	if e.CipherDir != "" {
		rows = append(rows, vault.Fact{Label: folder, Value: app.Tilde(e.CipherDir)})
	}
	if e.MountPoint != "" {
		rows = append(rows, vault.Fact{Label: mountPoint, Value: app.Tilde(e.MountPoint)})
	}
	rows = append(rows, vault.Fact{Label: "What", Value: tildeText(e.Summary())})
	return fieldsView(st, rows, w, map[string]lipgloss.Style{"What": eventStyle(st, e)})
}

// automountSet reports the result of toggling a vault's automount option.
type automountSet struct {
	v   Vault
	on  bool
	err error
}

func (l *listScreen) toggleAutomount(v Vault) tea.Cmd {
	b := l.c.backend
	on := !v.MountAtStart
	return func() tea.Msg { return automountSet{v: v, on: on, err: b.SetAutomount(v.Name, on)} }
}

func (l *listScreen) automountDone(msg automountSet) tea.Cmd {
	switch {
	case msg.err != nil:
		return l.setStatus("Could not change "+msg.v.Name+": "+msg.err.Error(), true)
	case msg.on:
		l.setStatus(msg.v.Name+": automount on. It mounts at login with the password stored by mount --remember (vaultui autostart enable).", false)
	default:
		l.setStatus(msg.v.Name+": automount off.", false)
	}
	return l.load()
}
