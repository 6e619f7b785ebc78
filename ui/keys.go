package ui

import "github.com/charmbracelet/bubbles/key"

// KeyMap holds every key the app reacts to, with its help text. Screens pick
// the bindings that apply to them for the help bar; `?` shows them all.
type KeyMap struct {
	Up, Down, Enter, Back, Quit, Help key.Binding
	// FormHelp shows every key even while typing, where `?` is text.
	FormHelp key.Binding
	// ForceQuit quits even while typing in a field.
	ForceQuit key.Binding

	// List actions.
	Filter, New, Add, Speed, Mount, Unmount, Info, Passwd, Fsck, Forget, Conflicts, Events, Automount key.Binding

	// Forms.
	NextField, PrevField, Toggle, Submit key.Binding

	// Confirmations and screen-specific actions.
	Yes, No, Rerun, Lazy, UseCipher, Details key.Binding

	// A screen taller than the window scrolls by pages (the help names PageDown for both).
	PageUp, PageDown key.Binding

	// The conflicts screen: k keeps the copy there, so only the arrows and
	// j move.
	KeepBoth, KeepOriginal, KeepCopy, ListUp, ListDown key.Binding
}

// DefaultKeyMap returns the bindings described in docs/reference.md ("The terminal app").
func DefaultKeyMap() *KeyMap {
	return &KeyMap{
		Up:    key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:  key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Enter: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open")),
		Back:  key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Quit:  key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Help:  key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "all keys")),

		FormHelp:  key.NewBinding(key.WithKeys("f1"), key.WithHelp("F1", "all keys")),
		ForceQuit: key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit")),

		Filter:    key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		New:       key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "new vault")),
		Add:       key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "add existing")),
		Speed:     key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "speed test")),
		Mount:     key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "mount")),
		Unmount:   key.NewBinding(key.WithKeys("u"), key.WithHelp("u", "unmount")),
		Info:      key.NewBinding(key.WithKeys("i"), key.WithHelp("i", "info")),
		Passwd:    key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "password")),
		Fsck:      key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "fsck")),
		Forget:    key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "forget")),
		Events:    key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "events")),
		Automount: key.NewBinding(key.WithKeys("A"), key.WithHelp("A", "automount on/off")),

		Conflicts: key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "conflicts")),

		NextField: key.NewBinding(key.WithKeys("tab", "down"), key.WithHelp("tab/↓", "next field")),
		PrevField: key.NewBinding(key.WithKeys("shift+tab", "up"), key.WithHelp("shift+tab/↑", "previous field")),
		Toggle:    key.NewBinding(key.WithKeys(" "), key.WithHelp("space", "toggle")),
		Submit:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "confirm")),

		Yes:       key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "yes")),
		No:        key.NewBinding(key.WithKeys("n", "esc"), key.WithHelp("n/esc", "no")),
		Rerun:     key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "run again")),
		Lazy:      key.NewBinding(key.WithKeys("l"), key.WithHelp("l", "lazy unmount")),
		UseCipher: key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "new vault with it")),
		Details:   key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "details")),
		PageUp:    key.NewBinding(key.WithKeys("pgup")),
		PageDown:  key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdn/pgup", "more")),

		KeepBoth:     key.NewBinding(key.WithKeys("b"), key.WithHelp("b", "keep both")),
		KeepOriginal: key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "keep original")),
		KeepCopy:     key.NewBinding(key.WithKeys("k"), key.WithHelp("k", "keep copy")),
		ListUp:       key.NewBinding(key.WithKeys("up"), key.WithHelp("↑", "up")),
		ListDown:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
	}
}
