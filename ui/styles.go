package ui

import "github.com/charmbracelet/lipgloss"

// Styles holds every style the app draws with. Colours are adaptive (light
// and dark terminals); lipgloss drops them when NO_COLOR is set, so nothing
// is conveyed by colour alone: the selection has a marker, states have words.
type Styles struct {
	App, Header, Title, Screen, Subtle, Label, Value, Selected, Cursor lipgloss.Style
	Error, Success, Warning, Key                                       lipgloss.Style
	Read, Write, Bar, BarBest, Box                                     lipgloss.Style
	StateMounted, StateLocked, StateStale                              lipgloss.Style
}

// DefaultStyles returns the app's look.
func DefaultStyles() *Styles {
	accent := lipgloss.AdaptiveColor{Light: "#5A4FCF", Dark: "#9D8CFF"}
	subtle := lipgloss.AdaptiveColor{Light: "#8A8A8A", Dark: "#767676"}
	green := lipgloss.AdaptiveColor{Light: "#1E8449", Dark: "#50FA7B"}
	red := lipgloss.AdaptiveColor{Light: "#C0392B", Dark: "#FF6B6B"}
	yellow := lipgloss.AdaptiveColor{Light: "#B7950B", Dark: "#F1FA8C"}
	blue := lipgloss.AdaptiveColor{Light: "#2471A3", Dark: "#6CB6FF"}
	orange := lipgloss.AdaptiveColor{Light: "#CA6F1E", Dark: "#FFB86C"}

	return &Styles{
		App:          lipgloss.NewStyle().Padding(0, 1),
		Header:       lipgloss.NewStyle().Bold(true).Foreground(lipgloss.AdaptiveColor{Light: "#FFFFFF", Dark: "#1A1A1A"}).Background(accent).Padding(0, 1),
		Title:        lipgloss.NewStyle().Bold(true).Foreground(accent),
		Screen:       lipgloss.NewStyle().Foreground(subtle),
		Subtle:       lipgloss.NewStyle().Foreground(subtle),
		Label:        lipgloss.NewStyle().Foreground(subtle),
		Value:        lipgloss.NewStyle(),
		Selected:     lipgloss.NewStyle().Bold(true).Foreground(accent),
		Cursor:       lipgloss.NewStyle().Foreground(accent),
		Error:        lipgloss.NewStyle().Foreground(red),
		Success:      lipgloss.NewStyle().Foreground(green),
		Warning:      lipgloss.NewStyle().Foreground(yellow),
		Key:          lipgloss.NewStyle().Bold(true),
		Read:         lipgloss.NewStyle().Foreground(blue),
		Write:        lipgloss.NewStyle().Foreground(orange),
		Bar:          lipgloss.NewStyle().Foreground(accent),
		BarBest:      lipgloss.NewStyle().Foreground(green),
		Box:          lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(accent).Padding(0, 1),
		StateMounted: lipgloss.NewStyle().Foreground(green),
		StateLocked:  lipgloss.NewStyle().Foreground(subtle),
		StateStale:   lipgloss.NewStyle().Foreground(red),
	}
}
