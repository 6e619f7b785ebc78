package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
)

// speedScreen shows the speed test: one bar per cipher, growing as results
// arrive, then the recommendation. The run itself belongs to the root
// model (common.speed) so the create wizard sees it too.
type speedScreen struct{ c *common }

func newSpeedScreen(c *common) *speedScreen { return &speedScreen{c: c} }

func (s *speedScreen) title() string { return "speed test" }
func (s *speedScreen) typing() bool  { return false }
func (s *speedScreen) busy() bool    { return s.c.speed.running }

func (s *speedScreen) keys() []key.Binding {
	k := s.c.keys
	if s.c.speed.running {
		return []key.Binding{k.Back}
	}
	return []key.Binding{k.UseCipher, k.Rerun, k.Back}
}

func (s *speedScreen) Init() tea.Cmd {
	if s.c.speed.running || s.c.speed.rec != nil {
		return nil
	}
	return func() tea.Msg { return runSpeedMsg{} }
}

func (s *speedScreen) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyMsg)
	if !ok {
		return nil
	}
	k := s.c.keys
	switch {
	case key.Matches(km, k.Back):
		return s.c.back("", false)
	case s.c.speed.running:
	case key.Matches(km, k.Rerun):
		return func() tea.Msg { return runSpeedMsg{} }
	case key.Matches(km, k.UseCipher):
		return s.c.open(newWizard(s.c))
	}
	return nil
}

// speedRows lists the ciphers to draw: the backend's, then any other that
// reported a result.
func speedRows(c *common) []Cipher {
	rows := append([]Cipher(nil), c.backend.Ciphers()...)
	for _, r := range c.speed.results {
		found := false
		for _, x := range rows {
			found = found || x.ID == r.Cipher.ID
		}
		if !found {
			rows = append(rows, r.Cipher)
		}
	}
	return rows
}

// baseline is AES-256-GCM's speed, the reference for ratios.
func baseline(c *common) float64 {
	for _, r := range c.speed.results {
		if r.Err == nil && r.Cipher.ID == "aes-gcm" {
			return r.MBps
		}
	}
	return 0
}

func (s *speedScreen) View() string {
	st := s.c.styles
	sp := &s.c.speed
	w := s.c.contentWidth()
	var b strings.Builder
	switch {
	case sp.running:
		b.WriteString(s.c.spinner.View() + " Measuring each cipher on this CPU…\n\n")
	case sp.rec == nil:
		b.WriteString("Starting…\n\n")
	default:
		b.WriteString(wrap("Encryption throughput on this CPU (one core):", w) + "\n")
		if !sp.measured.IsZero() {
			b.WriteString(st.Subtle.Render("measured "+ago(s.c.now(), sp.measured)+" · r runs it again") + "\n")
		}
		b.WriteString("\n")
	}

	rows := speedRows(s.c)
	nameW := 0
	for _, r := range rows {
		nameW = max(nameW, lipgloss.Width(r.Name))
	}
	maxMB := 0.0
	for _, r := range sp.results {
		if r.Err == nil {
			maxMB = max(maxMB, r.MBps)
		}
	}
	base := baseline(s.c)
	barW := max(5, w-nameW-2-21)
	for _, cph := range rows {
		line := padRight(cph.Name, nameW) + "  "
		r, ok := sp.result(cph.ID)
		best := sp.rec != nil && sp.rec.Cipher.ID == cph.ID
		switch {
		case ok && r.Err != nil:
			line += st.Error.Render(truncate("failed: "+r.Err.Error(), barW+21))
		case ok:
			n := 0
			if maxMB > 0 {
				n = int(float64(barW)*r.MBps/maxMB + 0.5)
			}
			bar := strings.Repeat("█", n) + strings.Repeat(" ", barW-n)
			if best {
				bar = st.BarBest.Render(bar)
			} else {
				bar = st.Bar.Render(bar)
			}
			ratio := "     "
			if base > 0 {
				ratio = fmt.Sprintf("%4.2fx", r.MBps/base)
			}
			line += bar + fmt.Sprintf(" %7.0f MB/s %s", r.MBps, ratio)
			if best {
				line += " ★"
			}
		case sp.running:
			line += st.Subtle.Render("waiting…")
		default:
			line += st.Subtle.Render("not measured")
		}
		b.WriteString(line + "\n")
	}
	for _, cph := range rows {
		if r, ok := sp.result(cph.ID); ok && r.Implementation != "" {
			b.WriteString(st.Subtle.Render(wrap(cph.Name+" runs on: "+r.Implementation, w)) + "\n")
		}
	}
	if sp.rec != nil {
		b.WriteString("\n" + st.Title.Render("Recommended: "+sp.rec.Cipher.Name) + "\n")
		b.WriteString(lipgloss.NewStyle().Width(w).Render(sp.rec.Reason) + "\n")
		b.WriteString("\n" + st.Subtle.Render(wrap("Press n to create a vault with it; the wizard preselects it.", w)) + "\n")
	}
	return b.String()
}
