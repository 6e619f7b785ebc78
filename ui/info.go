package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
)

// infoScreen shows what the registry and the vault's config say about it.
type infoScreen struct {
	c      *common
	v      Vault
	fields []Field
	err    error
	loaded bool
}

type infoLoaded struct {
	fields []Field
	err    error
}

func newInfoScreen(c *common, v Vault) *infoScreen { return &infoScreen{c: c, v: v} }

func (s *infoScreen) title() string       { return "info · " + s.v.Name }
func (s *infoScreen) typing() bool        { return false }
func (s *infoScreen) busy() bool          { return !s.loaded }
func (s *infoScreen) keys() []key.Binding { return []key.Binding{convertKey, s.c.keys.Back} }

func (s *infoScreen) Init() tea.Cmd {
	b, ctx, dir := s.c.backend, s.c.ctx, s.v.CipherDir
	return func() tea.Msg {
		f, err := b.Info(ctx, dir)
		return infoLoaded{fields: f, err: err}
	}
}

func (s *infoScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case infoLoaded:
		s.loaded, s.fields, s.err = true, msg.fields, msg.err
	case tea.KeyMsg:
		switch {
		case key.Matches(msg, s.c.keys.Back):
			return s.c.back("", false)
		case key.Matches(msg, convertKey):
			return s.c.open(newConvertScreen(s.c, s.v))
		}
	}
	return nil
}

func (s *infoScreen) View() string {
	st := s.c.styles
	w := s.c.contentWidth()
	var rows []Field
	rows = append(rows, Field{Label: "Name", Value: s.v.Name}, Field{Label: "Folder", Value: tildePath(s.v.CipherDir)}, Field{Label: "Mount point", Value: tildePath(s.v.MountPoint)})
	opts := []string{}
	if s.v.ReadOnly {
		opts = append(opts, "read-only")
	}
	if s.v.Idle > 0 {
		opts = append(opts, "unmount after "+s.v.Idle.String()+" idle")
	}
	if len(opts) > 0 {
		rows = append(rows, Field{Label: "Options", Value: strings.Join(opts, ", ")})
	}
	state := "locked"
	if m, ok := s.c.mountFor(s.v.CipherDir); ok {
		state = "mounted at " + tildePath(m.MountPoint) + " since " + m.Since.Local().Format("2006-01-02 15:04")
		switch {
		case m.Stale:
			state = "stale mount at " + tildePath(m.MountPoint)
		case m.Detached:
			state = "detached from " + tildePath(m.MountPoint) + ": unmounts when its last open file is closed"
		}
	}
	rows = append(rows, Field{Label: "State", Value: state})
	lock := lockText(s.v.Lock)
	if why := s.c.lockProblem(s.v.Lock); why != "" {
		lock += ". Cannot work here: " + why + " (vaultui edit --lock never " + s.v.Name + ")"
	}
	rows = append(rows, Field{Label: "Lock", Value: lock})
	if n, ok := s.c.conflicts[s.v.CipherDir]; ok {
		rows = append(rows, Field{Label: "Conflicts", Value: n.infoText()})
	}
	rows = append(rows, s.fields...)

	labelW := 0
	for _, r := range rows {
		labelW = max(labelW, len([]rune(r.Label)))
	}
	var b strings.Builder
	valueStyle := lipgloss.NewStyle().Width(max(10, w-labelW-2))
	for _, r := range rows {
		// Long values wrap under themselves, beside their label.
		b.WriteString(lipgloss.JoinHorizontal(lipgloss.Top, st.Label.Render(padRight(r.Label, labelW))+"  ", valueStyle.Render(r.Value)) + "\n")
	}
	switch {
	case !s.loaded:
		b.WriteString("\n" + s.c.spinner.View() + " Reading the vault's config…")
	case s.err != nil:
		b.WriteString("\n" + st.Error.Render(wrap("Cannot read the config: "+s.err.Error(), w)))
	}
	return b.String()
}
