package ui

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/vaultui/vaultui/app"
)

// addScreen registers an existing vault of any format (app.FormatNames).
type addScreen struct{ formScreen }

type vaultAdded struct {
	v        Vault
	lockNote error
	err      error
}

func newAddScreen(c *common) *addScreen {
	return &addScreen{formScreen{c: c, enter: "add", form: newForm(c,
		textField("Folder", "", "the folder with "+app.FormatMarkers("or")),
		textField("Name", "", "default: the folder's name"),
		textField("Mount point", "", "default: ~/Vaults/NAME"),
	)}}
}

func (s *addScreen) title() string { return "add existing vault" }

func (s *addScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case vaultAdded:
		s.working = false
		if msg.err != nil {
			s.err = msg.err.Error()
			return nil
		}
		status := fmt.Sprintf("Added %s. Press m to mount it.", msg.v.Name)
		if msg.lockNote != nil {
			status += " " + msg.lockNote.Error() + "."
		}
		return s.c.backToVault(status, msg.v.CipherDir)
	}
	return s.update(msg, s.submit)
}

func (s *addScreen) submit() tea.Cmd {
	dir := expandPath(s.form.value(0))
	if dir == "" {
		s.err = "Type the vault's folder."
		return s.form.setFocus(0)
	}
	// The name, the mount point and the lock policy left empty take app.Add's defaults, and
	// app.Add refuses a name that is taken: its error is shown.
	r := app.NewEntry{CipherDir: dir, Name: strings.TrimSpace(s.form.value(1)), MountPoint: expandPath(s.form.value(2))}
	s.err, s.working = "", true
	b, ctx := s.c.backend, s.c.ctx
	return func() tea.Msg {
		v, note, err := b.AddVault(ctx, r)
		return vaultAdded{v: v, lockNote: note, err: err}
	}
}

func (s *addScreen) View() string {
	return s.c.para("Register an existing "+app.FormatNames("or")+" vault, made by vaultui or another program. Nothing in the folder changes.") +
		"\n\n" + s.form.View() + s.footer("Checking the folder…")
}
