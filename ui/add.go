package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
)

// addScreen registers an existing gocryptfs (or vaultui) vault.
type addScreen struct {
	c       *common
	form    *form
	working bool
	err     string
}

type vaultAdded struct {
	v   Vault
	err error
}

func newAddScreen(c *common) *addScreen {
	return &addScreen{c: c, form: newForm(c,
		textField("Folder", "", "the folder with gocryptfs.conf"),
		textField("Name", "", "default: the folder's name"),
		textField("Mount point", "", "default: ~/Vaults/NAME"),
	)}
}

func (s *addScreen) title() string { return "add existing vault" }
func (s *addScreen) typing() bool  { return s.form.typing() }
func (s *addScreen) busy() bool    { return s.working }
func (s *addScreen) Init() tea.Cmd { return s.form.setFocus(0) }

func (s *addScreen) keys() []key.Binding {
	k := s.c.keys
	return []key.Binding{key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "add")), k.Back, k.NextField, k.PrevField}
}

func (s *addScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case vaultAdded:
		s.working = false
		if msg.err != nil {
			s.err = msg.err.Error()
			return nil
		}
		return s.c.backToVault(fmt.Sprintf("Added %s. Press m to mount it.", msg.v.Name), msg.v.CipherDir)
	case tea.KeyMsg:
		if s.working {
			return nil
		}
		switch {
		case key.Matches(msg, s.c.keys.Back):
			return s.c.back("", false)
		case key.Matches(msg, s.c.keys.Submit):
			return s.submit()
		}
	}
	return s.form.Update(msg)
}

func (s *addScreen) submit() tea.Cmd {
	dir := expandPath(s.form.value(0))
	if dir == "" {
		s.err = "Type the vault's folder."
		return s.form.setFocus(0)
	}
	name := strings.TrimSpace(s.form.value(1))
	if name == "" {
		name = defaultName(dir)
	}
	for _, v := range s.c.vaults {
		if v.Name == name {
			s.err = fmt.Sprintf("A vault named %q is already registered.", name)
			return s.form.setFocus(1)
		}
	}
	mp := expandPath(s.form.value(2))
	if mp == "" {
		mp = s.c.backend.DefaultMountPoint(name)
	}
	s.err, s.working = "", true
	v := Vault{Name: name, CipherDir: dir, MountPoint: mp, Lock: s.c.defaultLock()}
	b := s.c.backend
	return func() tea.Msg { return vaultAdded{v: v, err: b.AddVault(v)} }
}

func (s *addScreen) View() string {
	st := s.c.styles
	var b strings.Builder
	b.WriteString(lipgloss.NewStyle().Width(s.c.contentWidth()).Render("Register a vault made by gocryptfs or vaultui. Nothing in the folder changes.") + "\n\n")
	b.WriteString(s.form.View())
	if s.working {
		b.WriteString("\n\n" + s.c.spinner.View() + " Checking the folder…")
	}
	if s.err != "" {
		b.WriteString("\n\n" + st.Error.Render(lipgloss.NewStyle().Width(s.c.contentWidth()).Render(s.err)))
	}
	return b.String()
}
