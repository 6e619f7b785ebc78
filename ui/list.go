package ui

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
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
			return []key.Binding{k.Filter, k.Back, k.New, k.Add}
		}
		return []key.Binding{k.New, k.Add, k.Speed, k.Events}
	}
	enter := key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open"))
	return []key.Binding{k.New, k.Mount, k.Unmount, enter, k.Speed, k.Add, k.Info, k.Passwd, k.Fsck, k.Conflicts, k.Forget, k.Events, k.Automount, k.Filter, k.Up, k.Down}
}

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
		known := false
		for _, v := range l.c.vaults {
			if samePath(v.CipherDir, m.CipherDir) {
				known = true
				break
			}
		}
		if !known {
			all = append(all, Vault{Name: filepath.Base(m.CipherDir), CipherDir: m.CipherDir, MountPoint: m.MountPoint, Cipher: m.Cipher, ReadOnly: m.ReadOnly})
		}
	}
	q := strings.ToLower(strings.TrimSpace(l.filter.Value()))
	if q == "" {
		return all
	}
	var out []Vault
	for _, v := range all {
		if strings.Contains(strings.ToLower(v.Name), q) || strings.Contains(strings.ToLower(v.CipherDir), q) || strings.Contains(strings.ToLower(v.MountPoint), q) {
			out = append(out, v)
		}
	}
	return out
}

func (l *listScreen) selected() (Vault, bool) {
	items := l.items()
	if l.cursor < 0 || l.cursor >= len(items) {
		return Vault{}, false
	}
	return items[l.cursor], true
}

func (l *listScreen) registered(v Vault) bool {
	for _, r := range l.c.vaults {
		if r.Name == v.Name && samePath(r.CipherDir, v.CipherDir) {
			return true
		}
	}
	return false
}

func (l *listScreen) setStatus(s string, isErr bool) { l.status, l.statusErr = s, isErr }

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

// conflictNote is what a vault's row says of its conflict copies ("" when
// none or not counted).
func (c *common) conflictNote(cipherDir string) string {
	n, ok := c.conflicts[cipherDir]
	if !ok {
		return ""
	}
	return n.rowNote()
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
			l.setStatus(fmt.Sprintf("%s is already mounted at %s.", v.Name, tildePath(mount.MountPoint)), false)
			return nil
		}
		return l.c.open(newMountScreen(l.c, v))
	case key.Matches(msg, k.Unmount):
		if !mounted {
			l.setStatus(v.Name+" is not mounted.", false)
			return nil
		}
		if mount.Detached {
			l.setStatus(v.Name+" is already detached: it unmounts when its last open file is closed.", false)
			return nil
		}
		return l.unmount(v, false)
	case key.Matches(msg, k.Info):
		return l.c.open(newInfoScreen(l.c, v))
	case key.Matches(msg, k.Passwd):
		return l.c.open(newPasswdScreen(l.c, v))
	case key.Matches(msg, k.Fsck):
		return l.c.open(newFsckScreen(l.c, v))
	case key.Matches(msg, k.Conflicts):
		if mounted && mount.Stale {
			l.setStatus("The mount of "+v.Name+" is stale: press u to clean it up first.", true)
			return nil
		}
		if mounted && mount.Detached {
			l.setStatus(v.Name+" is detached but still serves open files: settle its conflicts once they are closed.", true)
			return nil
		}
		return l.c.open(newConflictsScreen(l.c, v))
	case key.Matches(msg, k.Automount):
		if !l.registered(v) {
			l.setStatus(v.Name+" is not in the registry.", true)
			return nil
		}
		return l.toggleAutomount(v)
	case key.Matches(msg, k.Forget):
		if !l.registered(v) {
			l.setStatus(v.Name+" is not in the registry.", true)
			return nil
		}
		if mounted && mount.Detached {
			l.setStatus(v.Name+" is detached but still serves open files: forget it once they are closed.", true)
			return nil
		}
		if mounted && !mount.Stale {
			l.setStatus("Unmount "+v.Name+" before forgetting it.", true)
			return nil
		}
		return l.c.open(newForgetScreen(l.c, v))
	}
	return nil
}

// selectPending moves the cursor to the vault waiting to be selected, once
// the list shows it; a filter that hides it is cleared.
func (l *listScreen) selectPending() {
	if l.selectDir == "" {
		return
	}
	find := func() int {
		for i, v := range l.items() {
			if samePath(v.CipherDir, l.selectDir) {
				return i
			}
		}
		return -1
	}
	i := find()
	if i < 0 && l.filter.Value() != "" {
		known := false
		for _, v := range l.c.vaults {
			known = known || samePath(v.CipherDir, l.selectDir)
		}
		if known {
			l.filter.Reset()
			i = find()
		}
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
	vis := l.visible()
	if l.cursor < l.offset {
		l.offset = l.cursor
	}
	if l.cursor >= l.offset+vis {
		l.offset = l.cursor - vis + 1
	}
	l.offset = max(0, min(l.offset, n-1))
}

// rowHeight is two lines per vault and a blank one.
const rowHeight = 3

// visible is how many vaults fit: the body minus the filter and status lines.
func (l *listScreen) visible() int {
	return max(1, (l.c.height-3-3)/rowHeight)
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

	items := l.items()
	switch {
	case !l.loaded:
		b.WriteString(l.c.spinner.View() + " Reading the registry…\n")
	case l.loadErr != nil:
		b.WriteString(s.Error.Render("Cannot read the registry: "+l.loadErr.Error()) + "\n")
	case len(items) == 0 && l.filter.Value() != "":
		b.WriteString(s.Subtle.Render("No vault matches.") + "\n")
	case len(items) == 0:
		para := lipgloss.NewStyle().Width(w)
		b.WriteString("No vaults yet.\n\n")
		b.WriteString(para.Render("Press "+s.Key.Render("n")+" to create one, or "+s.Key.Render("a")+" to add an existing gocryptfs vault.") + "\n")
		b.WriteString(para.Render("Press "+s.Key.Render("s")+" to see which cipher is fastest on this computer.") + "\n")
	default:
		end := min(len(items), l.offset+l.visible())
		for i := l.offset; i < end; i++ {
			b.WriteString(l.row(items[i], i == l.cursor, w))
			if i < end-1 {
				b.WriteString("\n\n")
			}
		}
		b.WriteString("\n")
	}

	body := b.String()
	status := l.statusLine(w)
	gap := l.c.height - 3 - lipgloss.Height(body) - lipgloss.Height(status)
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
		if m, ok := l.c.mountFor(v.CipherDir); ok && !m.Detached {
			n++
		}
	}
	if len(items) == 0 {
		return ""
	}
	return s.Subtle.Render(fmt.Sprintf("%s, %d mounted", plural(len(items), "vault", "vaults"), n))
}

func (l *listScreen) row(v Vault, sel bool, w int) string {
	s := l.c.styles
	marker, name := "  ", s.Value.Bold(true).Render(v.Name)
	if sel {
		marker, name = s.Cursor.Render("› "), s.Selected.Render(v.Name)
	}
	cipher := v.Cipher
	if cipher == "" {
		cipher = "?"
	}
	line1 := marker + name
	if note := l.c.conflictNote(v.CipherDir); note != "" {
		line1 += "  " + s.Warning.Render("⚑ "+note)
	}
	if ev, ok := l.c.lastEvent(v.CipherDir); ok {
		// The newest event, between the name and the cipher where it fits.
		avail := w - lipgloss.Width(line1) - lipgloss.Width(cipher) - 6
		if text := ev.Summary + " · " + ago(l.c.now(), ev.Time); avail >= 12 {
			line1 += "  " + s.Subtle.Render(truncate(text, avail))
		}
	}
	line1 += strings.Repeat(" ", max(1, w-lipgloss.Width(line1)-lipgloss.Width(cipher))) + s.Subtle.Render(cipher)

	var state, speed string
	m, mounted := l.c.mountFor(v.CipherDir)
	switch {
	case l.pending[v.MountPoint] || (mounted && l.pending[m.MountPoint]):
		state = l.c.spinner.View() + " unmounting…"
	case mounted && m.Stale:
		state = s.StateStale.Render("✗ stale mount at " + tildePath(m.MountPoint) + " (u cleans up)")
	case mounted && m.Detached:
		speed = s.Read.Render("read "+rate(m.ReadBps)) + "  " + s.Write.Render("write "+rate(m.WriteBps))
		avail := w - 2 - lipgloss.Width(speed) - 4
		state = s.Warning.Render("◌ detached, open files still served · " + truncateLeft(tildePath(m.MountPoint), avail-36))
	case mounted:
		ro := ""
		if m.ReadOnly {
			ro = ", read-only"
		}
		speed = s.Read.Render("read "+rate(m.ReadBps)) + "  " + s.Write.Render("write "+rate(m.WriteBps))
		avail := w - 2 - lipgloss.Width(speed) - 4
		state = s.StateMounted.Render("● mounted at " + truncateLeft(tildePath(m.MountPoint)+ro, avail-13))
	case v.Problem != "":
		state = s.Error.Render(truncate("! "+v.Problem, w-2))
	default:
		state = s.StateLocked.Render("○ locked · " + truncateLeft(tildePath(v.CipherDir), w-13))
	}
	if speed == "" {
		var notes []string
		if v.Automount {
			notes = append(notes, s.Subtle.Render("automount"))
		}
		if l.c.lockProblem(v.Lock) != "" {
			// The policy the user chose cannot work here: say so where they look.
			notes = append(notes, s.Warning.Render("⚠ no lock on sleep here"))
		}
		speed = strings.Join(notes, s.Subtle.Render(" · "))
	}
	line2 := "  " + state
	if speed != "" {
		line2 += strings.Repeat(" ", max(1, w-lipgloss.Width(line2)-lipgloss.Width(speed))) + speed
	}
	return line1 + "\n" + line2
}
