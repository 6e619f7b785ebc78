package ui

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/termsafe"
)

// mountScreen asks for the password and mount options, then mounts through
// the daemon. Errors keep the prompt open with the message beside it.
type mountScreen struct {
	formScreen // working: mounting
	v          Vault
	// req is the core's request for the vault as registered (app.MountFor: its mount
	// point, or the default one); the form's choices override its options.
	req app.MountRequest
	// asking: the keyring has not said yet whether it holds the vault's password (it may
	// take seconds, or time out). stored: it holds one, which an empty password field uses;
	// storedFailed: it did not unlock the vault.
	asking, stored, storedFailed, fromKeyring bool
	// The form's fields by job; readOnly is nil for a reverse vault, whose view is
	// read-only whatever the user chooses.
	readOnly, idle, keyring *field
}

// storedChecked is the keyring's answer for the vault at dir: a screen opened since on
// another vault must not take it as its own.
type storedChecked struct {
	dir string
	has bool
	err error
}

// mountChecked is app.CheckMount's answer for the vault at dir, asked as the prompt opens.
type mountChecked struct {
	dir string
	err error
}

type mounted struct {
	m   app.Mounted
	err error
}

func newMountScreen(c *common, v Vault) *mountScreen {
	s := &mountScreen{formScreen: formScreen{c: c, enter: "mount"}, v: v, req: app.MountFor(v.Entry)}
	fields := []*field{passwordField("Password")}
	if !v.Reverse {
		s.readOnly = toggleField("Read-only", v.ReadOnly)
		fields = append(fields, s.readOnly)
	}
	s.idle = textField("Idle timeout", formatIdle(v.Idle), "minutes, empty for none")
	s.keyring = toggleField("Keyring", false)
	s.form = newForm(c, append(fields, s.idle, s.keyring)...)
	s.asking = true
	s.form.fields[0].hint = c.styles.Subtle.Render("asking the keyring…")
	return s
}

func (s *mountScreen) title() string { return "mount " + s.v.Name }
func (s *mountScreen) Init() tea.Cmd {
	b, ctx, dir, req := s.c.backend, s.c.ctx, s.v.CipherDir, s.req
	return tea.Batch(s.form.setFocus(0), func() tea.Msg {
		has, err := b.StoredPassword(ctx, dir)
		return storedChecked{dir: dir, has: has, err: err}
	}, func() tea.Msg {
		return mountChecked{dir: dir, err: b.CheckMount(req)}
	})
}

func (s *mountScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case storedChecked:
		if msg.dir != s.v.CipherDir || !s.asking {
			return nil
		}
		s.asking = false
		s.form.fields[0].hint = ""
		if s.err == keyringNotYet {
			s.err = "" // answered now: the hint says what to do
		}
		switch {
		case msg.err != nil:
			// Not the same as none stored: say so, or the user waits for a hint that
			// never comes (a keyring that timed out, none on this machine).
			why, _ := app.KeyringTrouble(msg.err)
			s.form.fields[0].hint = s.c.styles.Warning.Render("no keyring (" + termsafe.Escape(why) + "): type the password")
		case msg.has && s.form.value(0) == "":
			s.stored = true
			s.keyring.on = true
			s.form.fields[0].hint = s.c.styles.Subtle.Render("stored in the keyring: enter mounts with it")
		}
		return nil
	case mountChecked:
		// Said before the password is typed; the mount checks again, so a mount point
		// emptied meanwhile mounts.
		if msg.dir == s.v.CipherDir && msg.err != nil && !s.working && s.err == "" {
			s.err = mountError(s.req.MountPoint, msg.err)
		}
		return nil
	case mounted:
		s.working = false
		if msg.err == nil {
			// Show it at once; the next statistics snapshot replaces this.
			if _, ok := s.c.mountFor(msg.m.CipherDir); !ok {
				s.c.mounts = append(s.c.mounts, msg.m.MountInfo)
			}
			status := fmt.Sprintf("%s mounted at %s.", s.v.Name, app.Tilde(msg.m.MountPoint))
			if note := keyringNote(msg.m.Keyring); note != "" {
				status += " " + note
			}
			return s.c.back(status, false)
		}
		s.err = mountError(s.req.MountPoint, msg.err)
		if s.fromKeyring {
			// Asked once more, never in a loop: an empty field no longer means the keyring.
			s.stored, s.storedFailed, s.fromKeyring = false, true, false
			s.form.fields[0].hint = ""
			if note, needed := passwordNeeded(msg.err); needed && note != "" {
				s.err = note
			} else if !needed {
				s.err = "The keyring's password could not be used: " + msg.err.Error() + ". Type the password."
			}
			return s.form.setFocus(0)
		}
		if errors.Is(msg.err, ErrWrongPassword) {
			s.form.fields[0].input.Reset()
			return s.form.setFocus(0)
		}
		return nil
	}
	return s.update(msg, s.submit)
}

// keyringNotYet answers enter on an empty password field before the keyring has said
// whether it holds the password.
const keyringNotYet = "The keyring has not answered yet: wait for it, or type the password."

// mountError turns a daemon error into a sentence that says what to do.
func mountError(mountPoint string, err error) string {
	switch {
	case errors.Is(err, ErrWrongPassword):
		return "Wrong password. Try again."
	case errors.Is(err, ErrMountpoint):
		return fmt.Sprintf("Mount point %s can't be used (it must be an empty directory that isn't mounted): %v", app.Tilde(mountPoint), err)
	case errors.Is(err, ErrAlreadyMounted):
		return "Already mounted: " + err.Error()
	case errors.Is(err, ErrDaemon):
		return "The vaultui daemon is not reachable: " + err.Error()
	}
	return err.Error()
}

func (s *mountScreen) submit() tea.Cmd {
	pw := s.form.value(0)
	s.fromKeyring = pw == "" && s.stored
	if pw == "" && s.asking {
		s.err = keyringNotYet
		return s.form.setFocus(0)
	}
	if pw == "" && !s.fromKeyring {
		s.err = "Type the vault's password."
		return s.form.setFocus(0)
	}
	idle, err := parseIdle(s.idle.input.Value())
	if err != nil {
		s.err = err.Error()
		return s.form.setFocus(slices.Index(s.form.fields, s.idle))
	}
	if s.req.MountPoint == "" {
		s.err = "This vault has no mount point and none can be derived from its name."
		return nil
	}
	s.err, s.working = "", true
	req := s.req
	req.Idle, req.Remember = idle, s.keyring.on
	if s.readOnly != nil {
		req.ReadOnly = s.readOnly.on
	}
	if !s.fromKeyring {
		req.Password = []byte(pw) // none: the keyring's
	}
	b, ctx := s.c.backend, s.c.ctx
	return func() tea.Msg {
		m, err := b.Mount(ctx, req)
		crypto.Wipe(req.Password)
		return mounted{m: m, err: err}
	}
}

func (s *mountScreen) View() string {
	st := s.c.styles
	var b strings.Builder
	lbl := func(l, v string) {
		b.WriteString(st.Label.Render(padRight(l, 12)) + " " + truncatePath(v, s.c.contentWidth()-13) + "\n")
	}
	lbl("Vault", s.v.Name)
	lbl("Folder", app.Tilde(s.v.CipherDir))
	lbl("Mount point", app.Tilde(s.req.MountPoint))
	if s.v.Cipher != "" {
		lbl("Cipher", s.v.Cipher)
	}
	if s.v.Reverse {
		lbl("View", reverseBadge)
	}
	b.WriteString("\n" + s.form.View())
	if s.form.focused() == s.keyring {
		b.WriteString("\n" + st.Subtle.Render(wrap("space: remember the password in the desktop keyring for the next mounts", s.c.contentWidth())))
	}
	return b.String() + s.footer("Unlocking and mounting…")
}

// keyringNote says what became of the keyring entry after a mount, or "".
func keyringNote(c app.KeyringChange) string {
	switch c.Action {
	case app.KeyringStored:
		return "Password stored in the keyring."
	case app.KeyringReplaced:
		return "The keyring's password was updated."
	case app.KeyringFailed:
		return "The password was not remembered: " + termsafe.Escape(c.Err.Error())
	}
	return ""
}
