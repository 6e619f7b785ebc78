package ui

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/registry"
)

// listScreen is the home screen: every registered vault (and any mount the
// daemon has that the registry doesn't know) with its state and live
// throughput.
type listScreen struct {
	c         *common
	loaded    bool
	loadErr   error
	watchErr  error
	cursor    int
	offset    int
	filter    textinput.Model
	filtering bool
	status    string
	statusErr bool
	// busyVault is set while offering a lazy unmount of a busy mount.
	busyVault *Vault
	busyErr   string          // what the daemon says holds it
	pending   map[string]bool // unmounts in flight, by mount point
	counting  bool            // conflict copies are being counted
	// selectDir is a vault (by cipherdir) to select as soon as the list
	// shows it: one just added or created, until the user moves.
	selectDir string
}

// conflictCounts is a round of counting every listed vault's conflict
// copies; a vault that could not be counted is left out.
type conflictCounts map[string]ConflictCount

type unmountDone struct {
	v      Vault
	target string // the mount point asked to unmount
	lazy   bool
	err    error
}

func newListScreen(c *common) *listScreen {
	f := textinput.New()
	f.Cursor.SetMode(c.cursorMode)
	f.Prompt = "/ "
	f.Placeholder = "name or path"
	return &listScreen{c: c, filter: f, pending: map[string]bool{}}
}

func (l *listScreen) title() string { return "vaults" }
func (l *listScreen) typing() bool  { return l.filtering }
func (l *listScreen) busy() bool    { return len(l.pending) > 0 || !l.loaded }

func (l *listScreen) keys() []key.Binding {
	k := l.c.keys
	if l.busyVault != nil {
		return []key.Binding{k.Yes, k.No}
	}
	if l.filtering {
		return []key.Binding{k.Submit, k.Back}
	}
	if len(l.items()) == 0 {
		// Only what works without a vault.
		if l.filter.Value() != "" {
			return []key.Binding{k.Filter, clearFilter, k.New, k.Add}
		}
		return []key.Binding{k.New, k.Add, k.Speed, k.Events}
	}
	keys := []key.Binding{k.New, k.Mount, k.Unmount, k.Enter, k.Speed, k.Add, k.Info, k.Passwd, k.Fsck, k.Conflicts, k.Forget, k.Events, k.Automount, k.Filter, k.Up, k.Down}
	if l.filter.Value() != "" {
		keys = append(keys, clearFilter)
	}
	return keys
}

// clearFilter is esc on the list: it drops the filter (there is nowhere to go back to).
var clearFilter = key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter"))

func (l *listScreen) Init() tea.Cmd { return l.load() }

func (l *listScreen) load() tea.Cmd {
	b := l.c.backend
	return func() tea.Msg {
		v, err := b.Vaults()
		return vaultsMsg{vaults: v, err: err}
	}
}

// items is what the list shows: the registered vaults, then mounts the
// registry doesn't know (mounted from the command line by path), filtered.
func (l *listScreen) items() []Vault {
	all := append([]Vault(nil), l.c.vaults...)
	for _, m := range l.c.mounts {
		if l.c.registeredAt(m.CipherDir) < 0 {
			all = append(all, Vault{Entry: registry.Entry{Name: filepath.Base(m.CipherDir), CipherDir: m.CipherDir, MountPoint: m.MountPoint, ReadOnly: m.ReadOnly}, Cipher: m.Cipher})
		}
	}
	q := strings.ToLower(strings.TrimSpace(l.filter.Value()))
	if q == "" {
		return all
	}
	return slices.DeleteFunc(all, func(v Vault) bool {
		return !strings.Contains(strings.ToLower(v.Name), q) && !strings.Contains(strings.ToLower(v.CipherDir), q) && !strings.Contains(strings.ToLower(v.MountPoint), q)
	})
}

func (l *listScreen) selected() (Vault, bool) {
	items := l.items()
	if l.cursor < 0 || l.cursor >= len(items) {
		return Vault{}, false
	}
	return items[l.cursor], true
}

func (l *listScreen) registered(v Vault) bool {
	return slices.ContainsFunc(l.c.vaults, func(r Vault) bool { return r.Name == v.Name && samePath(r.CipherDir, v.CipherDir) })
}

// setStatus shows s under the list (as an error when isErr); its nil is a key's command.
func (l *listScreen) setStatus(s string, isErr bool) tea.Cmd {
	l.status, l.statusErr = s, isErr
	return nil
}

func (l *listScreen) unmount(v Vault, lazy bool) tea.Cmd {
	target := v.MountPoint
	if m, ok := l.c.mountFor(v.CipherDir); ok {
		target = m.MountPoint
	}
	l.pending[target] = true
	b, ctx := l.c.backend, l.c.ctx
	return func() tea.Msg {
		return unmountDone{v: v, target: target, lazy: lazy, err: b.Unmount(ctx, target, lazy)}
	}
}

// countConflicts counts every listed vault's conflict copies in the
// background, without passwords, and without touching the mounts (reading
// a mount would keep it from ever being idle).
func (l *listScreen) countConflicts() tea.Cmd {
	if l.counting {
		return nil
	}
	var dirs []string
	for _, v := range l.items() {
		if v.Problem == "" {
			dirs = append(dirs, v.CipherDir)
		}
	}
	if len(dirs) == 0 {
		return nil
	}
	l.counting = true
	b := l.c.backend
	return func() tea.Msg {
		out := conflictCounts{}
		for _, d := range dirs {
			if n, err := b.CountConflicts(d); err == nil {
				out[d] = n
			}
		}
		return out
	}
}

func (l *listScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case vaultsMsg:
		l.loaded = true
		l.c.vaults, l.loadErr = msg.vaults, msg.err
		l.selectPending()
		l.clamp()
		return l.countConflicts()
	case conflictCounts:
		// The root model routes this here whatever screen is open: a round
		// that never arrived would stop counting for good.
		l.counting = false
		l.c.conflicts = msg
		return nil
	case mountsMsg:
		l.watchErr = nil
		l.clamp()
		return nil
	case watchEnded:
		l.watchErr = msg.err
		return nil
	case backMsg:
		if msg.status != "" {
			l.setStatus(msg.status, false)
		}
		if msg.selectDir != "" {
			l.selectDir = msg.selectDir
			l.selectPending()
		}
		if msg.reload {
			return l.load()
		}
		return nil
	case unmountDone:
		target := msg.target
		delete(l.pending, target)
		switch {
		case msg.err == nil && msg.lazy:
			l.setStatus(fmt.Sprintf("%s detached: it unmounts when its last file is closed.", msg.v.Name), false)
		case msg.err == nil:
			l.setStatus(fmt.Sprintf("%s unmounted.", msg.v.Name), false)
			l.c.dropMount(target)
		case errors.Is(msg.err, ErrBusy) && !msg.lazy:
			v := msg.v
			l.busyVault, l.busyErr = &v, msg.err.Error()
			l.setStatus("", false)
		default:
			l.setStatus(msg.err.Error(), true)
		}
		return nil
	case automountSet:
		return l.automountDone(msg)
	case tea.KeyMsg:
		return l.handleKey(msg)
	}
	if l.filtering {
		var cmd tea.Cmd
		l.filter, cmd = l.filter.Update(msg)
		return cmd
	}
	return nil
}

func (l *listScreen) handleKey(msg tea.KeyMsg) tea.Cmd {
	k := l.c.keys
	if l.busyVault != nil {
		v := *l.busyVault
		switch {
		case key.Matches(msg, k.Yes), key.Matches(msg, k.Lazy):
			l.busyVault = nil
			return l.unmount(v, true)
		case key.Matches(msg, k.No):
			l.busyVault = nil
			l.setStatus(v.Name+" stays mounted.", false)
		}
		return nil
	}
	if l.filtering {
		switch {
		case key.Matches(msg, k.Back):
			l.filtering = false
			l.filter.Reset()
			l.filter.Blur()
		case key.Matches(msg, k.Submit):
			l.filtering = false
			l.filter.Blur()
		default:
			var cmd tea.Cmd
			l.filter, cmd = l.filter.Update(msg)
			l.cursor, l.offset = 0, 0
			return cmd
		}
		l.clamp()
		return nil
	}
	v, ok := l.selected()
	mount, mounted := l.c.mountFor(v.CipherDir)
	switch {
	case key.Matches(msg, k.Up):
		l.cursor--
		l.selectDir = ""
		l.clamp()
	case key.Matches(msg, k.Down):
		l.cursor++
		l.selectDir = ""
		l.clamp()
	case key.Matches(msg, k.Filter):
		l.filtering = true
		return l.filter.Focus()
	case key.Matches(msg, k.Back):
		if l.filter.Value() != "" {
			l.filter.Reset()
			l.clamp()
		}
		l.setStatus("", false)
	case key.Matches(msg, k.New):
		return l.c.open(newWizard(l.c))
	case key.Matches(msg, k.Add):
		return l.c.open(newAddScreen(l.c))
	case key.Matches(msg, k.Speed):
		return l.c.open(newSpeedScreen(l.c))
	case key.Matches(msg, k.Events):
		return l.c.open(newEventsScreen(l.c))
	case !ok:
		return nil
	case key.Matches(msg, k.Enter):
		switch {
		case mounted && mount.Stale:
			return l.unmount(v, false)
		case mounted:
			return l.c.open(newLiveScreen(l.c, v))
		default:
			return l.c.open(newMountScreen(l.c, v))
		}
	case key.Matches(msg, k.Mount):
		if mounted && !mount.Detached {
			return l.setStatus(fmt.Sprintf("%s is already mounted at %s.", v.Name, app.Tilde(mount.MountPoint)), false)
		}
		return l.c.open(newMountScreen(l.c, v))
	case key.Matches(msg, k.Unmount):
		if !mounted {
			return l.setStatus(v.Name+" is not mounted.", false)
		}
		if mount.Detached {
			return l.setStatus(v.Name+" is already detached: it unmounts when its last open file is closed.", false)
		}
		return l.unmount(v, false)
	case key.Matches(msg, k.Info):
		return l.c.open(newInfoScreen(l.c, v))
	case key.Matches(msg, k.Passwd) && l.forwardOnly(v, "password change"),
		key.Matches(msg, k.Fsck) && l.forwardOnly(v, "fsck"),
		key.Matches(msg, k.Conflicts) && l.forwardOnly(v, "conflict settling"):
		return nil // refused, and said why
	case key.Matches(msg, k.Passwd):
		return l.c.open(newPasswdScreen(l.c, v))
	case key.Matches(msg, k.Fsck):
		return l.c.open(newFsckScreen(l.c, v))
	case key.Matches(msg, k.Conflicts):
		if mounted && mount.Stale {
			return l.setStatus("The mount of "+v.Name+" is stale: press u to clean it up first.", true)
		}
		if mounted && mount.Detached {
			return l.setStatus(v.Name+" is detached but still serves open files: settle its conflicts once they are closed.", true)
		}
		return l.c.open(newConflictsScreen(l.c, v))
	case (key.Matches(msg, k.Automount) || key.Matches(msg, k.Forget)) && !l.registered(v):
		return l.setStatus(v.Name+" is not in the registry.", true)
	case key.Matches(msg, k.Automount):
		return l.toggleAutomount(v)
	case key.Matches(msg, k.Forget):
		if mounted && mount.Detached {
			return l.setStatus(v.Name+" is detached but still serves open files: forget it once they are closed.", true)
		}
		if mounted && !mount.Stale {
			return l.setStatus("Unmount "+v.Name+" before forgetting it.", true)
		}
		return l.c.open(newForgetScreen(l.c, v))
	}
	return nil
}

// forwardOnly shows app.ForwardOnly's refusal of what on a reverse vault and says whether
// it refused.
func (l *listScreen) forwardOnly(v Vault, what string) bool {
	if err := app.ForwardOnly(v.Entry, what); err != nil {
		l.setStatus(err.Error()+".", true)
		return true
	}
	return false
}

// selectPending moves the cursor to the vault waiting to be selected, once
// the list shows it; a filter that hides it is cleared.
func (l *listScreen) selectPending() {
	if l.selectDir == "" {
		return
	}
	find := func() int {
		return slices.IndexFunc(l.items(), func(v Vault) bool { return samePath(v.CipherDir, l.selectDir) })
	}
	i := find()
	if i < 0 && l.filter.Value() != "" && l.c.registeredAt(l.selectDir) >= 0 {
		l.filter.Reset()
		i = find()
	}
	if i < 0 {
		return // not read yet: the reload brings it
	}
	l.cursor, l.selectDir = i, ""
	l.clamp()
}

func (l *listScreen) clamp() {
	n := len(l.items())
	l.cursor = max(0, min(l.cursor, n-1))
	l.offset = max(0, min(l.offset, n-1))
}

// rowsView draws the vaults that fit in h lines around the cursor (one blank
// line between them), with a line saying how many more there are above and
// below; it keeps the scroll offset for the next frame.
//
// The rows are as wide as the widest needs, not as the terminal: on a wide one
// the cipher and the rates stay next to the names and states they describe.
func (l *listScreen) rowsView(items []Vault, w, h int) string {
	texts := make([]rowText, len(items))
	tw := 0
	for i, v := range items {
		texts[i] = l.row(v, i == l.cursor, w)
		tw = max(tw, texts[i].width())
	}
	tw = min(w, tw)
	rows := make([]string, len(items))
	for i, t := range texts {
		rows[i] = t.render(tw)
	}
	shown, offset := windowed(l.c.styles, rows, l.cursor, l.offset, h, 1)
	l.offset = offset
	return shown
}

func (l *listScreen) View() string {
	s := l.c.styles
	w := l.c.contentWidth()
	var b strings.Builder

	switch {
	case l.filtering || l.filter.Value() != "":
		l.filter.Width = w - 4
		b.WriteString(l.filter.View() + "\n")
	default:
		b.WriteString("\n")
	}

	status := l.statusLine(w)
	items := l.items()
	switch {
	case !l.loaded:
		b.WriteString(l.c.spinner.View() + " Reading the registry…\n")
	case l.loadErr != nil:
		b.WriteString(s.Error.Render(wrap("Cannot read the registry: "+l.loadErr.Error(), w)) + "\n")
	case len(items) == 0 && l.filter.Value() != "":
		b.WriteString(s.Subtle.Render("No vault matches.") + "\n")
	case len(items) == 0:
		b.WriteString("No vaults yet.\n\n")
		b.WriteString(l.c.para("Press "+s.Key.Render("n")+" to create one, or "+s.Key.Render("a")+" to add an existing "+app.FormatNames("or")+" vault.") + "\n")
		b.WriteString(l.c.para("Press "+s.Key.Render("s")+" to see which cipher is fastest on this computer.") + "\n")
	default:
		// The rows take what the filter line, the status, the blank line
		// above it and the one above the help bar leave.
		h := l.c.bodyHeight() - 3 - lipgloss.Height(status)
		b.WriteString(l.rowsView(items, w, max(2, h)) + "\n")
	}

	body := b.String()
	gap := l.c.bodyHeight() - lipgloss.Height(body) - lipgloss.Height(status)
	if gap > 0 {
		body += strings.Repeat("\n", gap)
	}
	return body + status
}

func (l *listScreen) statusLine(w int) string {
	s := l.c.styles
	switch {
	case l.busyVault != nil:
		return s.Warning.Render(wrap(l.busyVault.Name+" is busy: files are open in it.", w)) + "\n" +
			s.Subtle.Render(truncate(l.busyErr, w)) + "\n" +
			s.Warning.Render(wrap("Lazy unmount (detach now, finish when they close)? y/n", w))
	case l.status != "" && l.statusErr:
		return s.Error.Render(wrap(l.status, w))
	case l.status != "":
		return s.Success.Render(wrap(l.status, w))
	case l.watchErr != nil:
		return s.Warning.Render(wrap("Daemon: "+l.watchErr.Error()+" (retrying)", w))
	}
	items := l.items()
	n := 0
	for _, v := range items {
		// As the header counts: a stale or detached mount serves nothing new.
		if m, ok := l.c.mountFor(v.CipherDir); ok && m.InPlace() {
			n++
		}
	}
	if len(items) == 0 {
		return ""
	}
	return s.Subtle.Render(fmt.Sprintf("%s, %d mounted", plural(len(items), "vault", "vaults"), n))
}

// reverseBadge marks a reverse vault wherever it is named: what it mounts is the read-only
// encrypted view of its plaintext folder.
const reverseBadge = "reverse · read-only view"

// rowText is a vault's row fitted to a width but not yet laid out: each line's
// left and right side, or under the name a problem, whole.
type rowText struct {
	name, cipher string // the first line: name, flags and event; the cipher
	state, right string // the second: the state; the rates or notes
	problem      string // set: the second line is this, wrapped
	// rightRoom is the least room right takes: the rates as wide as they get, so that
	// the columns stay put while they change.
	rightRoom int
}

// width is the cells the row needs: each line's sides two spaces apart.
func (r rowText) width() int {
	second := lipgloss.Width(r.problem)
	if r.problem == "" {
		second = lipgloss.Width(r.state)
		if r.right != "" {
			second += 2 + max(r.rightRoom, lipgloss.Width(r.right))
		}
	}
	return max(lipgloss.Width(r.name)+2+lipgloss.Width(r.cipher), second)
}

// render lays the row out in w cells, each line's right side at its right edge.
func (r rowText) render(w int) string {
	line1 := r.name + strings.Repeat(" ", max(1, w-lipgloss.Width(r.name)-lipgloss.Width(r.cipher))) + r.cipher
	if r.problem != "" {
		return line1 + "\n" + r.problem
	}
	line2 := r.state
	if r.right != "" {
		line2 += strings.Repeat(" ", max(2, w-lipgloss.Width(line2)-lipgloss.Width(r.right))) + r.right
	}
	return line1 + "\n" + line2
}

// row fits a vault's row to w cells: its name, newest event and cipher, then its state
// with throughput or notes. What is cut to fit is a path (the start is
// dropped) or the event (shown whole or not at all: the events screen has
// it); flags and reasons are never cut, a problem wraps.
func (l *listScreen) row(v Vault, sel bool, w int) rowText {
	s := l.c.styles
	cipher := v.Cipher
	if cipher == "" {
		cipher = "?"
	}
	nameText := truncate(v.Name, max(8, w-lipgloss.Width(cipher)-5))
	marker, name := "  ", s.Value.Bold(true).Render(nameText)
	if sel {
		marker, name = s.Cursor.Render("› "), s.Selected.Render(nameText)
	}
	line1 := marker + name
	if v.Reverse {
		line1 += "  " + s.Subtle.Render(reverseBadge)
	}
	if note := l.c.conflicts[v.CipherDir].rowNote(); note != "" {
		flag := "  " + s.Warning.Render("⚑ "+note)
		if lipgloss.Width(line1+flag)+lipgloss.Width(cipher)+1 <= w {
			line1 += flag
		}
	}
	m, mounted := l.c.mountFor(v.CipherDir)
	if ev, ok := l.c.lastEvent(v.CipherDir); ok && !(ev.Kind == mountmgr.EventMounted && mounted && m.InPlace()) {
		// ("mounted at" says again what the state line says.)
		// The newest event, between the name and the cipher where it fits.
		text := tildeText(ev.Summary()) + " · " + ago(l.c.now(), ev.Time)
		if lipgloss.Width(line1)+2+lipgloss.Width(text)+2+lipgloss.Width(cipher) <= w {
			line1 += "  " + s.Subtle.Render(text)
		}
	}

	// The right side first: the state's path gives way to it.
	var right string
	rightRoom := 0
	busy := l.pending[v.MountPoint] || (mounted && l.pending[m.MountPoint])
	if mounted && !m.Stale && !busy {
		right = s.Read.Render("read "+rate(m.Stats.ReadBps)) + "  " + s.Write.Render("write "+rate(m.Stats.WriteBps))
		rightRoom = lipgloss.Width("read " + rate(999e6) + "  write " + rate(999e6))
	} else {
		var notes []string
		if v.MountAtStart {
			notes = append(notes, s.Subtle.Render("automount"))
		}
		if l.c.lockProblem(v.LockPolicy()) != "" {
			// The policy the user chose cannot work here: say so where they look.
			notes = append(notes, s.Warning.Render("⚠ no lock on sleep here"))
		}
		right = strings.Join(notes, s.Subtle.Render(" · "))
	}
	// The room left for the state's path: the line less the indent, the
	// right side and two spaces before it.
	room := func(text string) int {
		gap := 0
		if right != "" {
			gap = lipgloss.Width(right) + 2
		}
		return max(8, w-2-gap-lipgloss.Width(text))
	}
	// The state says where the vault is (path) between what it is (pre) and what it
	// differs in (post). On a narrow screen the right side gives way to it first (where the
	// vault is matters more; the live view, enter, shows the rates), then the path is cut in
	// its middle, and what still does not fit is cut after a word.
	var style lipgloss.Style
	var pre, path, post string
	switch {
	case busy:
		return rowText{name: line1, cipher: s.Subtle.Render(cipher), state: "  " + l.c.spinner.View() + " unmounting…", right: right, rightRoom: rightRoom}
	case mounted && m.Stale:
		style, pre, path, post = s.StateStale, "✗ stale mount at ", m.MountPoint, " (u cleans up)"
	case mounted && m.Detached:
		style, pre, path = s.Warning, "◌ detached, open files still served · ", m.MountPoint
	case mounted:
		style, pre, path, post = s.StateMounted, "● mounted at ", m.MountPoint, mountModes(m)
	case v.Problem != "":
		// Why the vault cannot be used, whole: it wraps under itself.
		return rowText{name: line1, cipher: s.Subtle.Render(cipher), problem: lipgloss.NewStyle().PaddingLeft(2).Render(s.Error.Render(wrap("! "+v.Problem, w-2)))}
	default:
		style, pre, path = s.StateLocked, "○ locked · ", v.CipherDir
	}
	path = app.Tilde(path)
	// (A detached mount keeps its rates: they show that its open files are still in use.)
	if room(pre+post) < min(16, lipgloss.Width(path)) && !m.Detached {
		right = ""
	}
	text := truncate(pre+truncatePath(path, room(pre+post))+post, max(8, w-2))
	state := style.Render(text)
	return rowText{name: line1, cipher: s.Subtle.Render(cipher), state: "  " + state, right: right, rightRoom: rightRoom}
}

// mountModes names how a mount differs from a plain read-write one (", read-only, shared
// storage"), for the places that say where a vault is mounted: a one-off mount option shows
// there even when the vault's registered options say otherwise.
func mountModes(m mountmgr.MountInfo) string {
	var modes string
	if m.ReadOnly {
		modes += ", read-only"
	}
	if m.SharedStorage {
		modes += ", shared storage"
	}
	return modes
}
