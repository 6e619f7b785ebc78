package ui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/crypto"
)

// speedScreen shows the speed test: one bar per cipher, growing as results
// arrive, then the recommendation. The run itself belongs to the root
// model (common.speed) so the create wizard sees it too.
type speedScreen struct {
	c       *common
	details bool // d shows how the recommendation was measured
	// reveal scrolls the details into view once, after d opened them; until the user
	// scrolls, the recommendation is kept in view.
	reveal, scrolled bool
	scroll           scroll
}

func newSpeedScreen(c *common) *speedScreen { return &speedScreen{c: c} }

func (s *speedScreen) title() string { return "speed test" }
func (s *speedScreen) typing() bool  { return false }
func (s *speedScreen) busy() bool    { return s.c.speed.running }

func (s *speedScreen) keys() []key.Binding {
	k := s.c.keys
	if s.c.speed.running {
		return []key.Binding{k.Back}
	}
	out := []key.Binding{k.UseCipher, k.Details, k.Rerun, k.Back}
	if text, _, _ := s.content(); lipgloss.Height(text) > s.c.bodyHeight() {
		out = append(out, k.Up, k.Down)
	}
	return out
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
	case key.Matches(km, k.Up):
		s.scroll.scrollBy(-1)
		s.scrolled = true
	case key.Matches(km, k.Down):
		s.scroll.scrollBy(1)
		s.scrolled = true
	case s.c.speed.running:
	case key.Matches(km, k.Details):
		s.details = !s.details
		s.reveal = s.details
	case key.Matches(km, k.Rerun):
		return func() tea.Msg { return runSpeedMsg{} }
	case key.Matches(km, k.UseCipher):
		return s.c.open(newWizard(s.c))
	}
	return nil
}

// speedRows lists the ciphers to draw: the backend's, then any other that
// reported a result.
func speedRows(c *common) []crypto.CipherID {
	rows := append([]crypto.CipherID(nil), c.backend.Ciphers()...)
	for _, r := range c.speed.report.Ciphers {
		if !slices.Contains(rows, r.Cipher) {
			rows = append(rows, r.Cipher)
		}
	}
	return rows
}

// View shows what fits: the recommendation (what the test is for) until the user scrolls,
// the details once d opened them.
func (s *speedScreen) View() string {
	text, rec, details := s.content()
	focus := noFocus
	switch {
	case s.reveal && details >= 0:
		focus = [2]int{details, lipgloss.Height(text) - 1}
		s.reveal = false
	case !s.scrolled && rec >= 0:
		focus = [2]int{rec, lipgloss.Height(text) - 1}
		if details >= 0 {
			focus[1] = details - 1
		}
	}
	return s.scroll.view(text, s.c.bodyHeight(), focus, s.c.styles)
}

// content is the whole screen, and the lines where the recommendation and its details
// start (-1 while there is none, or they are folded).
func (s *speedScreen) content() (text string, rec, details int) {
	st := s.c.styles
	sp := &s.c.speed
	w := s.c.contentWidth()
	var b strings.Builder
	switch {
	case sp.running && sp.report.Writing:
		b.WriteString(s.c.spinner.View() + " Measuring a write through vaultui's write path…\n\n")
	case sp.running:
		b.WriteString(s.c.spinner.View() + " Measuring each cipher on this CPU, in rounds…\n\n")
	case sp.err != nil:
		b.WriteString(st.Error.Render(wrap("The speed test stopped: "+sp.err.Error(), w)) + "\n" +
			st.Subtle.Render("r runs it again") + "\n\n")
	case sp.rec == nil:
		b.WriteString("Starting…\n\n")
	default:
		b.WriteString(wrap("Encryption on this CPU (one core), median MB/s:", w) + "\n")
		if !sp.report.Measured.IsZero() {
			b.WriteString(st.Subtle.Render(wrap("measured "+ago(s.c.now(), sp.report.Measured)+" · r runs it again", w)) + "\n")
		}
		b.WriteString("\n")
	}

	rows := speedRows(s.c)
	nameW := 0
	for _, r := range rows {
		nameW = max(nameW, lipgloss.Width(r.String()))
	}
	maxMB, numW := 0.0, figureWidth(sp.report)
	for _, r := range sp.report.Ciphers {
		if r.Err == nil {
			maxMB = max(maxMB, r.MBps)
		}
	}
	// The figures, a ratio and a star take figW cells; the bar what is left, if
	// enough is left for a bar to mean something.
	figW := numW + len(" MB/s ") + 5 + 2
	// At most 60 cells: on a wide terminal the figures stay near the names.
	barW := min(60, w-nameW-2-1-figW)
	if barW < 5 {
		barW = 0
	}
	for _, cph := range rows {
		line := padRight(cph.String(), nameW) + "  "
		r, ok := sp.report.Result(cph)
		best := sp.rec != nil && sp.rec.Cipher == cph
		switch {
		case ok && r.Err != nil:
			line += st.Error.Render(truncate("failed: "+r.Err.Error(), w-nameW-2))
		case ok && len(r.Samples) > 0:
			if barW > 0 {
				n := 0
				if maxMB > 0 {
					n = int(float64(barW)*r.MBps/maxMB + 0.5)
				}
				style := st.Bar
				if best {
					style = st.BarBest
				}
				line += style.Render(strings.Repeat("█", n)+strings.Repeat(" ", barW-n)) + " "
			}
			line += fmt.Sprintf("%*.0f MB/s %5s", numW, r.MBps, sp.report.Times(cph))
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
		if r, ok := sp.report.Result(cph); ok && r.Implementation != "" {
			b.WriteString(st.Subtle.Render(wrap(cph.String()+" runs on: "+r.Implementation, w)) + "\n")
		}
	}
	rec, details = -1, -1
	if sp.rec != nil {
		b.WriteString("\n")
		rec = lipgloss.Height(b.String()) - 1
		b.WriteString(st.Title.Render("Recommended: "+sp.rec.Cipher.String()) + "\n")
		for _, l := range sp.rec.Lines() {
			b.WriteString(wrap(l, w) + "\n")
		}
		if s.details {
			details = lipgloss.Height(b.String())
		}
		b.WriteString(recDetails(s.c, *sp.rec, s.details, ""))
	}
	return strings.TrimSuffix(b.String(), "\n"), rec, details
}

// figureWidth is the cells the widest MB/s figure of r takes.
func figureWidth(r app.SpeedReport) int {
	numW := 1
	for _, c := range r.Ciphers {
		numW = max(numW, len(fmt.Sprintf("%.0f", c.MBps)))
	}
	return numW
}

// recDetails is what d shows under a recommendation: how it was measured and how noisy, what
// a write gains, who cannot open the vault (opens, when given, for the choice at the cursor
// rather than the recommendation); folded, a line says d unfolds it.
func recDetails(c *common, rec app.Recommendation, shown bool, opens string) string {
	st, w := c.styles, c.contentWidth()
	if !shown {
		return st.Subtle.Render(wrap("d: how this was measured", w)) + "\n"
	}
	details := rec.Details()
	if opens != "" {
		details = append(details[:len(details):len(details)], opens)
	}
	var b strings.Builder
	for _, d := range details {
		b.WriteString("\n" + st.Subtle.Render(c.para(d)) + "\n")
	}
	return b.String()
}
