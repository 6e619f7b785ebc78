package ui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/termsafe"
	"github.com/vaultui/vaultui/vault"
)

// ConflictCount is a vault's number of sync-conflict copies as counted
// without its password.
type ConflictCount struct {
	N int
	// Complete is false when counting stopped early (a huge vault): N is
	// then a lower bound.
	Complete bool
	// SplitDirs counts folders made on two computers: what was made in
	// them on the other one shows as conflict copies, which only the
	// password can count.
	SplitDirs int
}

// The row, info and the conflicts screen describe a count with the three
// functions below, so they say the same thing in different lengths.

// rowNote is the list row's flag: "3 conflicts", "2+ conflicts" (counting
// stopped early), "folder made twice"; "" when nothing was found.
func (n ConflictCount) rowNote() string {
	var parts []string
	switch {
	case n.N == 0:
	case !n.Complete:
		parts = append(parts, fmt.Sprintf("%d+ conflicts", n.N))
	default:
		parts = append(parts, plural(n.N, "conflict", "conflicts"))
	}
	switch {
	case n.SplitDirs == 1:
		parts = append(parts, "folder made twice")
	case n.SplitDirs > 1:
		parts = append(parts, fmt.Sprintf("%d folders made twice", n.SplitDirs))
	}
	return strings.Join(parts, " · ")
}

// infoText is the info screen's line.
func (n ConflictCount) infoText() string {
	var s string
	switch {
	case !n.Complete:
		s = fmt.Sprintf("at least %s (counting stopped in a big vault)", plural(n.N, "sync-conflict copy", "sync-conflict copies"))
	case n.N == 0 && n.SplitDirs == 0:
		s = "no sync-conflict copies"
	case n.N == 0:
		s = "no sync-conflict copies of files"
	default:
		s = plural(n.N, "sync-conflict copy", "sync-conflict copies")
	}
	if n.SplitDirs > 0 {
		s += "; " + n.splitText()
	}
	if n.N == 0 && n.SplitDirs == 0 && n.Complete {
		return s
	}
	return s + " (c in the list settles them)"
}

// splitText says what a folder made twice is.
func (n ConflictCount) splitText() string {
	return plural(n.SplitDirs, "folder", "folders") + " made on two computers (a sync tool kept a second gocryptfs.diriv)"
}

// ConflictSession lists and settles one vault's conflict copies; Close
// forgets the key (or the mount point).
type ConflictSession interface {
	List(ctx context.Context) ([]vault.ConflictEntry, error)
	Settle(ctx context.Context, path string, keep vault.Keep) error
	Close()
}

// conflictsScreen lists a vault's conflict copies and settles them one at a
// time: keep both, keep the original (deletes the copy) or keep the copy
// (replaces the original). Deleting or replacing asks first. A mounted
// vault is read and changed through its mount; a locked one is unlocked
// with its password for as long as the screen is open.
type conflictsScreen struct {
	c          *common
	v          Vault
	mountPoint string // set when the vault is mounted
	form       passwordPrompt

	opening, working bool
	job              int // tells this screen's session from a left one's
	sess             *sessionGuard
	copies           []vault.ConflictEntry
	cursor, offset   int
	confirm          *vault.Keep // asking before deleting or replacing
	changed          bool        // something was settled: the list recounts
	status, err      string

	ctx    context.Context // ends when the screen is left
	cancel context.CancelFunc
}

type conflictsOpened struct {
	job    int
	sess   ConflictSession
	copies []vault.ConflictEntry
	err    error
}

type conflictSettled struct {
	path   string
	keep   vault.Keep
	folder bool // a folder made twice, merged
	err    error
	copies []vault.ConflictEntry
	lsErr  error
}

func newConflictsScreen(c *common, v Vault) *conflictsScreen {
	s := &conflictsScreen{c: c, v: v, form: newPasswordPrompt(c)}
	if m, ok := c.mountFor(v.CipherDir); ok && m.InPlace() {
		s.mountPoint = m.MountPoint
	}
	s.ctx, s.cancel = context.WithCancel(c.ctx)
	return s
}

func (s *conflictsScreen) title() string { return "conflicts · " + s.v.Name }
func (s *conflictsScreen) typing() bool  { return s.sess == nil && s.mountPoint == "" && !s.opening }
func (s *conflictsScreen) busy() bool    { return s.opening || s.working }

func (s *conflictsScreen) keys() []key.Binding {
	k := s.c.keys
	switch {
	case s.confirm != nil:
		return []key.Binding{k.Yes, k.No}
	case s.sess != nil && len(s.copies) == 0:
		return []key.Binding{k.Back} // nothing left to settle
	case s.sess != nil:
		keys := []key.Binding{k.KeepBoth, k.KeepOriginal, k.KeepCopy, k.Back}
		if s.folderSelected() {
			keys = []key.Binding{mergeKey, k.Back}
		}
		if len(s.copies) > 1 {
			keys = append(keys, k.ListUp, k.ListDown)
		}
		return keys
	case s.opening:
		return []key.Binding{k.Back}
	}
	return s.form.keys("unlock")
}

// Init opens the conflicts at once: a mounted vault's through the daemon, a locked one's
// with the keyring's password; the prompt shows only if the core needs a password.
func (s *conflictsScreen) Init() tea.Cmd {
	if s.mountPoint != "" {
		return s.open(nil)
	}
	return tea.Batch(s.form.setFocus(0), s.open(nil))
}

// open starts a session. One that arrives after the screen was left is
// closed by the root model (conflictsOpened), so no key stays in memory.
func (s *conflictsScreen) open(pw []byte) tea.Cmd {
	s.opening, s.err, s.status = true, "", ""
	s.c.jobs++
	s.job = s.c.jobs
	b, ctx, dir, mp, job := s.c.backend, s.ctx, s.v.CipherDir, s.mountPoint, s.job
	return func() tea.Msg {
		sess, err := b.OpenConflicts(ctx, dir, mp, pw)
		crypto.Wipe(pw)
		if err != nil {
			return conflictsOpened{job: job, err: err}
		}
		copies, err := sess.List(ctx)
		return conflictsOpened{job: job, sess: sess, copies: copies, err: err}
	}
}

// takes reports whether msg is the session this screen waits for.
func (s *conflictsScreen) takes(msg conflictsOpened) bool { return s.opening && msg.job == s.job }

// sessionGuard closes a session once no call uses it: leaving the screen
// while a copy is being settled must not wipe the key under the walk.
type sessionGuard struct {
	mu      sync.Mutex
	s       ConflictSession
	inUse   int
	closing bool
}

// use reserves the session; false once it is closing.
func (g *sessionGuard) use() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closing {
		return false
	}
	g.inUse++
	return true
}

func (g *sessionGuard) done() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inUse--
	if g.inUse == 0 && g.closing {
		g.s.Close()
	}
}

func (g *sessionGuard) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closing {
		return
	}
	g.closing = true
	if g.inUse == 0 {
		g.s.Close()
	}
}

func (s *conflictsScreen) leave() tea.Cmd {
	s.cancel()
	if s.sess != nil {
		s.sess.close()
		s.sess = nil
	}
	status := ""
	if s.changed {
		status = fmt.Sprintf("%s: %s", s.v.Name, s.remaining())
	}
	return s.c.back(status, s.changed)
}

func (s *conflictsScreen) remaining() string {
	if len(s.copies) == 0 {
		return "no conflict copies left."
	}
	return plural(len(s.copies), "conflict copy", "conflict copies") + " left."
}

func (s *conflictsScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case conflictsOpened:
		s.opening = false
		if msg.sess == nil {
			if cmd, again := s.form.retry(msg.err, &s.err); again {
				s.mountPoint = "" // the prompt asks
				return cmd
			}
			if msg.err != nil {
				s.err = msg.err.Error()
			}
			if s.mountPoint == "" {
				s.form.fields[0].input.Reset()
				return s.form.setFocus(0)
			}
			return nil
		}
		s.sess, s.copies = &sessionGuard{s: msg.sess}, msg.copies
		if msg.err != nil {
			s.err = "Cannot list the copies: " + msg.err.Error()
		}
		s.clamp()
		return nil
	case conflictSettled:
		s.working = false
		if msg.err != nil {
			s.err = msg.err.Error()
		} else {
			s.changed = true
			s.status = settledText(msg.keep, msg.path)
			if msg.folder {
				s.status = "Merged the folder " + termsafe.Escape(msg.path) + " made on two computers."
			}
		}
		if msg.lsErr == nil {
			s.copies = msg.copies
		} else if msg.err == nil {
			s.err = "Cannot list the copies: " + msg.lsErr.Error()
		}
		s.clamp()
		return nil
	case tea.KeyMsg:
		return s.handleKey(msg)
	}
	if s.typing() {
		return s.form.Update(msg)
	}
	return nil
}

func settledText(k vault.Keep, path string) string {
	path = termsafe.Escape(path)
	switch k {
	case vault.KeepOriginal:
		return "Deleted the copy " + path + "; the original stays."
	case vault.KeepCopy:
		return "The copy replaced the original; it is now " + path + "."
	}
	return "Kept both: the copy stays as " + path + "."
}

func (s *conflictsScreen) handleKey(msg tea.KeyMsg) tea.Cmd {
	k := s.c.keys
	if s.confirm != nil {
		keep := *s.confirm
		switch {
		case key.Matches(msg, k.Yes):
			s.confirm = nil
			return s.settle(keep)
		case key.Matches(msg, k.No):
			s.confirm = nil
			s.status = "Nothing changed."
		}
		return nil
	}
	if key.Matches(msg, k.Back) {
		return s.leave()
	}
	if s.opening || s.working {
		return nil
	}
	if s.sess == nil {
		if s.mountPoint == "" && key.Matches(msg, k.Submit) {
			return s.form.submit(&s.err, s.open)
		}
		if s.typing() {
			return s.form.Update(msg)
		}
		return nil
	}
	switch {
	case key.Matches(msg, k.ListUp):
		s.cursor--
		s.clamp()
	case key.Matches(msg, k.ListDown):
		s.cursor++
		s.clamp()
	case len(s.copies) == 0:
	case s.folderSelected() && (key.Matches(msg, k.KeepOriginal) || key.Matches(msg, k.KeepCopy)):
		s.status, s.err = "", "A folder made twice is only settled by merging it: b."
	case key.Matches(msg, k.KeepBoth):
		return s.settle(vault.KeepBoth)
	case key.Matches(msg, k.KeepOriginal):
		keep := vault.KeepOriginal
		s.confirm, s.status, s.err = &keep, "", ""
	case key.Matches(msg, k.KeepCopy):
		keep := vault.KeepCopy
		s.confirm, s.status, s.err = &keep, "", ""
	}
	return nil
}

// countApplies reports whether the list's count of folders made twice still says something
// the listed copies do not: not once something was settled here (the count is recounted
// back in the list), nor when the folders are listed themselves.
func (s *conflictsScreen) countApplies() bool {
	return !s.changed && !slices.ContainsFunc(s.copies, func(cp vault.ConflictEntry) bool { return cp.Kind == vault.ConflictFolderMadeTwice })
}

// mergeKey is b on a folder made twice, which merges it (app.Choices).
var mergeKey = key.NewBinding(key.WithKeys("b"), key.WithHelp("b", "merge the folder"))

// folderSelected reports whether the selected conflict is a folder made twice, which only
// merging settles (app.Choices).
func (s *conflictsScreen) folderSelected() bool {
	return s.cursor < len(s.copies) && len(app.Choices(s.copies[s.cursor])) == 1
}

func (s *conflictsScreen) settle(keep vault.Keep) tea.Cmd {
	cp := s.copies[s.cursor]
	s.working, s.status, s.err = true, "", ""
	g, ctx := s.sess, s.ctx
	shown := cp.Path
	if keep == vault.KeepCopy {
		shown = cp.Of
	}
	return func() tea.Msg {
		if !g.use() {
			return nil
		}
		defer g.done()
		err := g.s.Settle(ctx, cp.Path, keep)
		copies, lsErr := g.s.List(ctx)
		return conflictSettled{path: shown, keep: keep, folder: cp.Kind == vault.ConflictFolderMadeTwice, err: err, copies: copies, lsErr: lsErr}
	}
}

func (s *conflictsScreen) clamp() {
	s.cursor = max(0, min(s.cursor, len(s.copies)-1))
}

func (s *conflictsScreen) View() string {
	st := s.c.styles
	w := s.c.contentWidth()
	intro := s.c.para("When a file changes on two computers, sync tools keep both versions. Keep both, keep the original (deletes the copy) or keep the copy (replaces the original).")
	// The foot (a question, the result, an error, a note) is drawn first:
	// the list of copies takes what it leaves.
	var foot []string
	switch {
	case s.confirm != nil:
		cp := s.copies[s.cursor]
		q := "Delete the copy " + termsafe.Escape(cp.Path) + " and keep the original? y/n"
		if *s.confirm == vault.KeepCopy {
			q = "Replace " + termsafe.Escape(cp.Of) + " with the copy (the original's content is lost)? y/n"
		}
		foot = append(foot, st.Warning.Render(s.c.para(q)))
	case s.working:
		foot = append(foot, s.c.spinner.View()+" Settling…")
	case s.status != "":
		foot = append(foot, st.Success.Render(s.c.para(s.status)))
	}
	if s.err != "" {
		foot = append(foot, st.Error.Render(s.c.para(s.err)))
	}
	if n := s.c.conflicts[s.v.CipherDir]; s.sess != nil && n.SplitDirs > 0 && s.countApplies() {
		// What the row calls "folder made twice", explained where it is settled.
		foot = append(foot, st.Warning.Render(s.c.para("Also "+n.splitText()+
			": files made in it on the other computer are listed as conflict copies; the folder itself reads as usual.")))
	}
	footText := ""
	if len(foot) > 0 {
		footText = "\n\n" + strings.Join(foot, "\n")
	}

	var b strings.Builder
	b.WriteString(intro + "\n\n")
	switch {
	case s.sess != nil:
		// The intro, a blank line, the foot and a blank line above the help bar.
		h := s.c.bodyHeight() - lipgloss.Height(intro) - 1 - lipgloss.Height(footText) - 1
		b.WriteString(s.list(w, max(3, h)))
	case s.opening && s.mountPoint != "":
		b.WriteString(s.c.spinner.View() + " Reading " + truncatePath(app.Tilde(s.mountPoint), w-12) + "…")
	case s.opening:
		b.WriteString(s.c.spinner.View() + " Unlocking (scrypt) and reading the vault…")
	case s.mountPoint == "":
		b.WriteString(st.Subtle.Render(s.c.para("The vault is locked: its password shows the copies' names.")) + "\n\n")
		b.WriteString(s.form.View())
	}
	return b.String() + footText
}

// list draws the copies that fit in h lines around the cursor: each its
// name, then what it copies, who made it, when and which is newer, wrapped
// under it.
func (s *conflictsScreen) list(w, h int) string {
	st := s.c.styles
	where := "in " + app.Tilde(s.v.CipherDir)
	if s.mountPoint != "" {
		where = "in the mount at " + app.Tilde(s.mountPoint)
	}
	if len(s.copies) == 0 {
		what := "No conflict copies "
		if s.c.conflicts[s.v.CipherDir].SplitDirs > 0 && s.countApplies() {
			what = "No conflict copies of files "
		}
		return st.Success.Render(wrap(what+where+".", w))
	}
	head := wrap(plural(len(s.copies), "conflict copy", "conflict copies")+" "+where+":", w)
	blocks := make([]string, len(s.copies))
	for i, cp := range s.copies {
		marker, name := "  ", truncatePath(termsafe.Escape(cp.Path), w-2)
		if i == s.cursor {
			marker, name = st.Cursor.Render("› "), st.Selected.Render(name)
		}
		details := lipgloss.NewStyle().PaddingLeft(4).Render(st.Subtle.Render(wrap(joinWrap(copyDetails(cp), " · ", w-4), w-4)))
		blocks[i] = marker + name + "\n" + details
	}
	shown, offset := windowed(st, blocks, s.cursor, s.offset, h-lipgloss.Height(head)-1, 0)
	s.offset = offset
	return head + "\n\n" + shown
}

// copyDetails is what a copy's second line says: what it copies, who made
// it, when, how big, and which version is newer (wrapped between these).
func copyDetails(cp vault.ConflictEntry) []string {
	if cp.Kind == vault.ConflictFolderMadeTwice {
		if cp.Entries == 0 {
			return []string{cp.Tool, "folder made twice", "nothing left under the copy: b removes it"}
		}
		return []string{cp.Tool, "folder made twice", "b merges " + plural(cp.Entries, "entry", "entries") + " into it"}
	}
	parts := []string{"of " + termsafe.Escape(cp.Of), cp.Tool}
	// Syncthing's "host" is a device ID, which tells people nothing.
	if cp.Host != "" && cp.Tool != "Syncthing" {
		parts[1] += " (" + termsafe.Escape(cp.Host) + ")"
	}
	if cp.Date != "" {
		parts = append(parts, cp.Date)
	}
	if cp.Dir {
		parts = append(parts, "folder")
	} else {
		parts = append(parts, size(float64(cp.Size)))
	}
	switch cp.Newer {
	case "copy":
		parts = append(parts, "copy is newer")
	case "original":
		parts = append(parts, "original is newer")
	case "same":
		parts = append(parts, "same age")
	default:
		parts = append(parts, "original is gone")
	}
	return parts
}
