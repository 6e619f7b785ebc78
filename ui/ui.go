// Package ui is vaultui's terminal app: a bubbletea program listing the
// registered vaults with their live state, and screens to create, mount,
// unmount, inspect, check and forget them and to measure the ciphers.
//
// # Structure
//
// The layout follows soft-serve and gum: a common struct shared by every
// screen (size, Styles, KeyMap, Backend and the live data), one model per
// screen, and a root Model that switches between them with a state enum
// (the current screen), draws the header and help bar and keeps the
// daemon's statistics stream running. Every blocking call (scrypt, FUSE,
// the speed test, fsck) runs in a tea.Cmd; results and errors come back as
// messages, so the screen never freezes.
//
// All work is done by a Backend; Run wires the real one, which forwards to
// the vault, crypto and mountmgr packages exactly like the CLI commands.
//
// # Small windows
//
// Every screen works down to 40x10. What does not fit scrolls, one way
// (layout.go): a list shows whole items around its cursor (window, windowed),
// any other text a scroll that keeps its focus in view (the wizard's field
// or cipher with what it costs, the speed test's recommendation), and the
// root model pages whatever a screen could not fit with pgup/pgdn. Each
// says what it hides with "↑ N more" on its first line and "↓ N more" on its
// last. Lines are shortened after a word, paths in their middle; labelled
// values wrap between words (wrapValue), never inside a date or a name; a
// title gives way from its last part (fitTitle); and the list's rows are as
// wide as their content, so its columns stay next to what they describe.
//
// It imports app and, for their types, registry, vault, crypto, keyring and mountmgr; only main
// imports it. It never imports cli.
package ui

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/mountmgr"
)

// screen is one page of the app. Screens are pointers updated in place;
// they switch with common.open and leave with common.back.
type screen interface {
	Init() tea.Cmd
	Update(msg tea.Msg) tea.Cmd
	View() string
	title() string
	// typing reports that a text input has the keyboard, so letters,
	// `q` and `?` are text, not commands.
	typing() bool
	// busy reports background work, which keeps the spinner turning.
	busy() bool
	keys() []key.Binding
}

// quitMsg quits the app after the wizard asked (it gets q and ctrl+c: see wizardScreen).
type quitMsg struct{}

// Model is the root model.
type Model struct {
	c        *common
	list     *listScreen
	current  screen // nil: the list
	help     help.Model
	fullHelp bool
	spinning bool
	quitting bool
	// page scrolls a screen taller than the window (pageOf, with the full help
	// when pageHelp), paged says the last frame was.
	page     scroll
	pageOf   screen
	pageHelp bool
	paged    bool
	// watchFails counts failed watch attempts in a row, for the retry backoff;
	// eventFails the same for the event stream.
	watchFails, eventFails int
}

// New returns the app on top of a backend. ctx bounds every background job
// (cancel it after the program ends).
func New(ctx context.Context, b Backend) *Model {
	return newModel(ctx, b, time.Now, cursor.CursorBlink)
}

// newModel is New with the clock and the text cursor given: tests fix the one and stop the
// other blinking, so views are deterministic and no blink timers run.
func newModel(ctx context.Context, b Backend, now func() time.Time, cursorMode cursor.Mode) *Model {
	c := &common{
		width:      80,
		height:     24,
		styles:     DefaultStyles(),
		keys:       DefaultKeyMap(),
		backend:    b,
		ctx:        ctx,
		now:        now,
		cursorMode: cursorMode,
		history:    map[string]*history{},
	}
	c.spinner = spinner.New(spinner.WithSpinner(spinner.Dot))
	return &Model{c: c, list: newListScreen(c), help: help.New()}
}

// goodbye tells the user what keeps running after the app quits.
func (m *Model) goodbye() string {
	switch n := m.c.inPlace(); n {
	case 0:
		return ""
	case 1:
		return "1 vault stays mounted: the vaultui daemon keeps it running.\nTo unmount it: vaultui unmount --all"
	default:
		return fmt.Sprintf("%d vaults stay mounted: the vaultui daemon keeps them running.\nTo unmount them: vaultui unmount --all", n)
	}
}

func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.list.Init(), m.startWatch(), m.startEvents(), refreshLater(), m.loadSpeed(), m.checkLock())
}

// checkLock asks once whether lock policies can work here (logind).
func (m *Model) checkLock() tea.Cmd {
	b, ctx := m.c.backend, m.c.ctx
	return func() tea.Msg { return lockChecked{err: b.LockPolicyWorks(ctx)} }
}

// loadSpeed reads the remembered speed test, if there is one.
func (m *Model) loadSpeed() tea.Cmd {
	b := m.c.backend
	return func() tea.Msg {
		if r, ok := b.CachedSpeed(); ok {
			return speedLoaded{report: r}
		}
		return nil
	}
}

// registryRefresh is how often the list re-reads the registry, so vaults
// added or forgotten from the command line show up while the app runs.
const registryRefresh = 5 * time.Second

type refreshRegistry struct{}

func refreshLater() tea.Cmd {
	return tea.Tick(registryRefresh, func(time.Time) tea.Msg { return refreshRegistry{} })
}

func (m *Model) screen() screen {
	if m.current != nil {
		return m.current
	}
	return m.list
}

func (m *Model) startWatch() tea.Cmd {
	b, ctx := m.c.backend, m.c.ctx
	return stream(ctx, func(emit func(tea.Msg)) tea.Msg {
		err := b.Watch(ctx, func(ms []mountmgr.MountInfo) { emit(mountsMsg(ms)) })
		return watchEnded{err: err}
	})
}

func (m *Model) startSpeed() tea.Cmd {
	if m.c.speed.running {
		return nil
	}
	m.c.speed.run++
	m.c.speed.running = true
	m.c.speed.report, m.c.speed.rec, m.c.speed.err = app.SpeedReport{}, nil, nil
	run, b, ctx := m.c.speed.run, m.c.backend, m.c.ctx
	return stream(ctx, func(emit func(tea.Msg)) tea.Msg {
		r, err := b.SpeedTest(ctx, func(r app.SpeedReport) { emit(speedProgress{run: run, report: r}) })
		return speedDone{run: run, report: r, err: err}
	})
}

func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	if km, ok := msg.(tea.KeyMsg); ok && km.Type == tea.KeyRunes && len(km.Runes) > 1 && !km.Paste {
		// Keys typed faster than the terminal is read arrive together
		// ("jf"); take them one at a time so each can be a command.
		cmds := make([]tea.Cmd, 0, len(km.Runes))
		for _, r := range km.Runes {
			cmds = append(cmds, m.step(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: km.Alt}))
		}
		cmd = tea.Batch(cmds...)
	} else {
		cmd = m.step(msg)
	}
	// Keep the spinner turning while any screen works in the background.
	if !m.spinning && m.screen().busy() {
		m.spinning = true
		cmd = tea.Batch(cmd, m.c.spinner.Tick)
	}
	return m, cmd
}

// step handles one message and then any screen change it asked for.
func (m *Model) step(msg tea.Msg) tea.Cmd {
	cmd := m.update(msg)
	if b := m.c.backTo; b != nil {
		m.c.backTo, m.c.switchTo = nil, nil
		m.current, m.fullHelp = nil, false
		cmd = tea.Batch(cmd, m.list.Update(*b))
	}
	if s := m.c.switchTo; s != nil {
		m.c.switchTo = nil
		m.current, m.fullHelp = s, false
		cmd = tea.Batch(cmd, s.Init())
	}
	return cmd
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case streamMsg:
		return tea.Batch(m.update(msg.msg), msg.next)
	case tea.WindowSizeMsg:
		m.c.width, m.c.height = msg.Width, msg.Height
		return m.screen().Update(msg)
	case spinner.TickMsg:
		if !m.screen().busy() {
			m.spinning = false
			return nil
		}
		var cmd tea.Cmd
		m.c.spinner, cmd = m.c.spinner.Update(msg)
		return cmd
	case mountsMsg:
		m.watchFails = 0
		m.c.mounts = msg
		m.recordHistory(msg)
		return m.screen().Update(msg)
	case watchEnded:
		if m.c.ctx.Err() != nil {
			return nil
		}
		return tea.Batch(m.list.Update(msg), m.retry(&m.watchFails, m.startWatch))
	case retryMsg:
		return msg.start()
	case eventsMsg:
		m.eventFails, m.c.eventsErr = 0, nil
		m.c.addEvents(msg)
		return m.screen().Update(msg)
	case eventsEnded:
		// The watch stream reports the daemon's trouble on the list; the events screen shows
		// this one's, so that an event log that cannot be read is not taken for an empty one.
		if m.c.ctx.Err() != nil {
			return nil
		}
		if msg.err != nil {
			m.c.eventsErr = msg.err
		}
		return m.retry(&m.eventFails, m.startEvents)
	case refreshRegistry:
		return tea.Batch(m.list.load(), refreshLater())
	case vaultsMsg, conflictCounts:
		// The registry and its conflict counts belong to the list whatever
		// screen is showing.
		return m.list.Update(msg)
	case unmountDone:
		// So do unmount results (with the lazy offer); an unmount from the
		// live view goes back to the list to show it.
		if _, ok := m.current.(*liveScreen); ok {
			m.c.back("", false)
		}
		return m.list.Update(msg)
	case lockChecked:
		m.c.lockErr = msg.err
		return m.screen().Update(msg)
	case runSpeedMsg:
		return m.startSpeed()
	case speedProgress, speedDone, speedLoaded:
		m.recordSpeed(msg)
		return m.screen().Update(msg)
	case conflictsOpened:
		if cs, ok := m.current.(*conflictsScreen); ok && cs.takes(msg) {
			return cs.Update(msg)
		}
		// Its screen was left meanwhile: forget the key.
		if msg.sess != nil {
			msg.sess.Close()
		}
		return nil
	case quitMsg:
		m.quitting = true
		return tea.Quit
	case tea.KeyMsg:
		if cmd, ok := m.globalKey(msg); ok {
			return cmd
		}
	}
	return m.screen().Update(msg)
}

// recordHistory adds the mounts' statistics to their history and forgets the history of
// mounts that are gone.
func (m *Model) recordHistory(mounts mountsMsg) {
	seen := map[string]bool{}
	for _, mt := range mounts {
		h := m.c.history[mt.MountPoint]
		if h == nil {
			h = &history{}
			m.c.history[mt.MountPoint] = h
		}
		h.add(mt)
		seen[mt.MountPoint] = true
	}
	maps.DeleteFunc(m.c.history, func(mp string, _ *history) bool { return !seen[mp] })
}

// retryMsg starts a stream again (retry).
type retryMsg struct{ start func() tea.Cmd }

// retry counts one more failure of a stream in a row and starts it again after watchBackoff.
func (m *Model) retry(fails *int, start func() tea.Cmd) tea.Cmd {
	*fails++
	return tea.Tick(watchBackoff(*fails), func(time.Time) tea.Msg { return retryMsg{start} })
}

// recordSpeed keeps what a speed test message (speedProgress, speedDone, speedLoaded) says
// in the shared speed state, which outlives the speed screen.
func (m *Model) recordSpeed(msg tea.Msg) {
	sp := &m.c.speed
	switch msg := msg.(type) {
	case speedProgress:
		if msg.run == sp.run {
			sp.report = msg.report
		}
	case speedDone:
		if msg.run == sp.run {
			sp.running = false
			sp.report, sp.err = msg.report, msg.err
			if msg.err == nil {
				rec := msg.report.Recommend()
				sp.rec = &rec
			}
		}
	case speedLoaded:
		// A test run in this session is newer than the cache.
		if !sp.running && sp.rec == nil {
			rec := msg.report.Recommend()
			sp.report, sp.rec = msg.report, &rec
		}
	}
}

// globalKey handles the keys that work on every screen: force quit, and quit unless the
// screen takes typing, both unless the screen is the wizard (it asks first); the
// form help always, and help unless the screen takes typing. ok is false for a key the
// screen handles.
func (m *Model) globalKey(msg tea.KeyMsg) (cmd tea.Cmd, ok bool) {
	_, guarded := m.screen().(*wizardScreen)
	free := !m.screen().typing()
	switch {
	case !guarded && (key.Matches(msg, m.c.keys.ForceQuit) || free && key.Matches(msg, m.c.keys.Quit)):
		m.quitting = true
		return tea.Quit, true
	case key.Matches(msg, m.c.keys.FormHelp), free && key.Matches(msg, m.c.keys.Help):
		m.fullHelp = !m.fullHelp
		return nil, true
	case m.paged && key.Matches(msg, m.c.keys.PageDown):
		m.page.scrollBy(max(1, m.c.height-6))
		return nil, true
	case m.paged && key.Matches(msg, m.c.keys.PageUp):
		m.page.scrollBy(-max(1, m.c.height-6))
		return nil, true
	}
	return nil, false
}

func (m *Model) View() string {
	if m.quitting {
		return ""
	}
	s := m.c.styles
	sc := m.screen()
	logo := s.Header.Render("vaultui") + " "
	header := logo + s.Screen.Render(fitTitle(sc.title(), m.c.contentWidth()-lipgloss.Width(logo)-lipgloss.Width(s.Screen.Render(""))))
	if n := m.c.inPlace(); n > 0 { // what is mounted, on every screen
		right := s.StateMounted.Render(fmt.Sprintf("● %d mounted", n))
		gap := m.c.contentWidth() - lipgloss.Width(header) - lipgloss.Width(right)
		if gap >= 2 {
			header += strings.Repeat(" ", gap) + right
		}
	}

	body, helpView := sc.View(), ""
	if m.fullHelp {
		full := fullHelp(m.help, m.helpKeys(false), m.c.contentWidth())
		if lipgloss.Height(full) <= m.c.height-3 {
			helpView = full
		} else {
			body = full // too tall to sit over the screen: it is the screen, and scrolls
		}
	}
	if m.pageOf != sc || m.pageHelp != m.fullHelp {
		m.page, m.pageOf, m.pageHelp = scroll{}, sc, m.fullHelp
	}
	// A screen taller than the window scrolls with pgup/pgdn; screens with a cursor fit
	// themselves and keep it in view.
	// Under the full help the screen is only cut: the user looks at the keys.
	bodyH := max(1, m.c.height-2-max(1, lipgloss.Height(helpView)))
	m.paged = helpView == "" && lipgloss.Height(body) > bodyH
	if m.paged {
		body = m.page.view(body, bodyH, noFocus, s)
	}
	if helpView == "" {
		// The screen's keys come most important first; the bar keeps what fits.
		helpView = shortHelp(m.help, m.helpKeys(true), m.c.contentWidth())
	}
	body = fitHeight(body, bodyH)
	// MaxWidth cuts what a screen drew too wide rather than let the
	// terminal wrap it and push the help bar off.
	return s.App.MaxWidth(m.c.width).Render(header + "\n\n" + body + "\n" + helpView)
}

// watchBackoff is the pause before reconnecting to the daemon after n
// failures in a row: 2 s doubling to 30 s, so a daemon that can't start
// isn't respawned in a tight loop.
func watchBackoff(n int) time.Duration {
	return min(2*time.Second<<min(max(n-1, 0), 4), 30*time.Second)
}

// helpKeys are the keys the help shows on the current screen, each once:
// the screen's, and help and quit as they work there. While a field has the
// keyboard `?` and `q` are text, so F1 and ctrl+c are offered instead. The
// bar puts help and quit first, the full help last.
func (m *Model) helpKeys(bar bool) []key.Binding {
	k, sc := m.c.keys, m.screen()
	global := []key.Binding{k.Help, k.Quit}
	if sc.typing() {
		global = []key.Binding{k.FormHelp, k.ForceQuit}
	}
	if m.paged {
		global = append(global, k.PageDown)
	}
	if bar {
		return uniqueKeys(append(global, sc.keys()...))
	}
	return uniqueKeys(append(sc.keys(), global...))
}

// fitHeight pads or cuts a block of text to exactly h lines, so the help
// bar stays at the bottom.
func fitHeight(s string, h int) string {
	lines := strings.Split(s, "\n")
	lines = lines[:min(len(lines), max(1, h))]
	for len(lines) < h {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}
