package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/vault"
)

// infoScreen shows what the registry and the vault's config say about it.
type infoScreen struct {
	c      *common
	v      Vault
	fields []vault.Fact
	err    error
	loaded bool
	scroll scroll // when the info is taller than the screen
}

type infoLoaded struct {
	fields []vault.Fact
	err    error
}

func newInfoScreen(c *common, v Vault) *infoScreen { return &infoScreen{c: c, v: v} }

func (s *infoScreen) title() string { return "info · " + s.v.Name }
func (s *infoScreen) typing() bool  { return false }
func (s *infoScreen) busy() bool    { return !s.loaded }
func (s *infoScreen) keys() []key.Binding {
	k := s.c.keys
	var out []key.Binding
	if len(s.lines()) > s.c.bodyHeight() {
		out = append(out, k.Up, k.Down)
	}
	if s.converts() {
		out = append(out, convertKey)
	}
	return append(out, k.Back)
}

// converts says whether C is offered: not for a reverse vault (app.ForwardOnly).
func (s *infoScreen) converts() bool { return app.ForwardOnly(s.v.Entry, "cipher conversion") == nil }

func (s *infoScreen) Init() tea.Cmd {
	b, ctx, e := s.c.backend, s.c.ctx, s.v.Entry
	return func() tea.Msg {
		f, err := b.Info(ctx, e)
		return infoLoaded{fields: f, err: err}
	}
}

func (s *infoScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case infoLoaded:
		s.loaded, s.fields, s.err = true, msg.fields, msg.err
	case tea.KeyMsg:
		switch k := s.c.keys; {
		case key.Matches(msg, k.Back):
			return s.c.back("", false)
		case key.Matches(msg, convertKey):
			if !s.converts() {
				return nil
			}
			return s.c.open(newConvertScreen(s.c, s.v))
		case key.Matches(msg, k.Up):
			s.scroll.scrollBy(-1)
		case key.Matches(msg, k.Down):
			s.scroll.scrollBy(1)
		}
	}
	return nil
}

// View shows the lines that fit; taller than the screen (a narrow one wraps
// long values), it scrolls and says what is hidden.
func (s *infoScreen) View() string {
	return s.scroll.view(strings.Join(s.lines(), "\n"), s.c.bodyHeight(), noFocus, s.c.styles)
}

// lines is the whole info, wrapped to the width.
func (s *infoScreen) lines() []string {
	st := s.c.styles
	w := s.c.contentWidth()
	rows := []vault.Fact{{Label: "Name", Value: s.v.Name}, {Label: "Folder", Value: app.Tilde(s.v.CipherDir)}, {Label: "Mount point", Value: app.Tilde(s.v.MountPoint)}}
	rows = append(rows, app.EntryFacts(s.v.Entry)...)
	opts := []string{}
	if s.v.ReadOnly {
		opts = append(opts, "read-only")
	}
	if s.v.Idle > 0 {
		opts = append(opts, "unmount after "+s.v.Idle.String()+" idle")
	}
	if s.v.SharedStorage {
		opts = append(opts, "shared storage (vaultui edit --sharedstorage)")
	}
	if len(opts) > 0 {
		rows = append(rows, vault.Fact{Label: "Options", Value: strings.Join(opts, ", ")})
	}
	state := "locked"
	if m, ok := s.c.mountFor(s.v.CipherDir); ok {
		state = "mounted at " + app.Tilde(m.MountPoint) + " since " + m.Since.Local().Format("2006-01-02 15:04") + mountModes(m)
		switch {
		case m.Stale:
			state = "stale mount at " + app.Tilde(m.MountPoint)
		case m.Detached:
			state = "detached from " + app.Tilde(m.MountPoint) + ": unmounts when its last open file is closed"
		}
	}
	rows = append(rows, vault.Fact{Label: "State", Value: state})
	lock := lockText(s.v.LockPolicy())
	if why := s.c.lockProblem(s.v.LockPolicy()); why != "" {
		lock += ". Cannot work here: " + why + " (vaultui edit --lock never " + s.v.Name + ")"
	}
	rows = append(rows, vault.Fact{Label: "Lock", Value: lock})
	if n, ok := s.c.conflicts[s.v.CipherDir]; ok {
		rows = append(rows, vault.Fact{Label: "Conflicts", Value: n.infoText()})
	}
	rows = append(rows, s.fields...)

	var b strings.Builder
	b.WriteString(fieldsView(st, rows, w, nil))
	switch {
	case !s.loaded:
		b.WriteString("\n\n" + s.c.spinner.View() + " Reading the vault's config…")
	case s.err != nil:
		b.WriteString("\n\n" + st.Error.Render(wrap("Cannot read the config: "+s.err.Error(), w)))
	}
	return strings.Split(b.String(), "\n")
}
