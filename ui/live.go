package ui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/mountmgr"
)

// liveScreen charts a mounted vault's read and write throughput over the
// last minute from the daemon's statistics stream.
type liveScreen struct {
	c       *common
	v       Vault
	pending bool
	status  string
}

func newLiveScreen(c *common, v Vault) *liveScreen { return &liveScreen{c: c, v: v} }

func (s *liveScreen) title() string { return s.v.Name + " · live" }
func (s *liveScreen) typing() bool  { return false }
func (s *liveScreen) busy() bool    { return s.pending }
func (s *liveScreen) Init() tea.Cmd { return nil }

func (s *liveScreen) keys() []key.Binding { return []key.Binding{s.c.keys.Unmount, s.c.keys.Back} }

func (s *liveScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		k := s.c.keys
		switch {
		case key.Matches(msg, k.Back):
			return s.c.back("", false)
		case key.Matches(msg, k.Unmount) && !s.pending:
			m, ok := s.c.mountFor(s.v.CipherDir)
			if !ok || m.Detached {
				return nil // a detached mount ends when its files are closed
			}
			s.pending = true
			b, ctx, v := s.c.backend, s.c.ctx, s.v
			return func() tea.Msg {
				return unmountDone{v: v, target: m.MountPoint, err: b.Unmount(ctx, m.MountPoint, false)}
			}
		}
	}
	return nil
}

// View draws the mount's state, then a read and a write chart that share
// the rest of the screen: as wide as it is (a sample a column, newest at
// the right) and as tall as it leaves, above the totals.
func (s *liveScreen) View() string {
	st := s.c.styles
	w := s.c.contentWidth()
	m, ok := s.c.mountFor(s.v.CipherDir)
	if !ok {
		return st.Subtle.Render(s.v.Name+" is not mounted any more.") + "\n\nPress esc to go back."
	}
	ro := ""
	if m.ReadOnly {
		ro = " · read-only"
	}
	where := "mounted at"
	if m.Detached {
		where = "detached from"
	}
	head := wrap(fmt.Sprintf("%s · %s %s%s", m.Cipher, where, app.Tilde(m.MountPoint), ro), w)
	since := "since " + m.Since.Local().Format("15:04:05") + " (" + ago(s.c.now(), m.Since) + ")"
	if m.Idle > 0 {
		since += " · unmounts after " + m.Idle.String() + " unused"
	}
	since = st.Subtle.Render(wrap(since, w))
	switch {
	case m.Stale:
		since = st.StateStale.Render(wrap("stale: the file system stopped answering; press u to clean up", w))
	case m.Detached:
		since = st.Warning.Render(wrap("detached: files opened before are served until they are closed", w))
	}
	totals := totalsView(m.Stats, w)

	var rd, wr []float64
	if h := s.c.history[m.MountPoint]; h != nil {
		rd, wr = h.read, h.write
	}
	// Each chart gets half of what the text leaves: the head, since and a
	// blank line, a title per chart, the time axis, a blank line and the totals.
	fixed := lipgloss.Height(head) + lipgloss.Height(since) + 1 + 2 + 1 + 1 + lipgloss.Height(totals)
	ch := max(1, (s.c.bodyHeight()-fixed)/2)
	// Both charts share a scale so their heights compare; the y axis is
	// labelled at the top and the middle row, right of the chart.
	labelW := len(rate(1e9)) + 1 // the widest label ("999 MB/s") and its space
	cw := max(10, w-1-labelW)
	// The chart spans chartWindow seconds at any width.
	rd, wr = tail(rd, chartWindow), tail(wr, chartWindow)
	rdCols, wrCols := resample(rd, chartWindow, cw), resample(wr, chartWindow, cw)
	top := max(peak(rd), peak(wr), 1)
	labels := map[int]string{0: rate(top)}
	if ch > 2 {
		labels[ch/2] = rate(top / 2)
	}
	var b strings.Builder
	b.WriteString(head + "\n" + since + "\n\n")
	draw := func(name string, cur float64, samples, cols []float64, style func(...string) string) {
		b.WriteString(style(truncate(fmt.Sprintf("%-6s now %-11s peak %s", name, rate(cur), rate(peak(samples))), w)) + "\n")
		for i, line := range chart(cols, cw, ch, top) {
			tick, label := "│", ""
			if l, ok := labels[i]; ok {
				tick, label = "┤", " "+st.Subtle.Render(l)
			}
			b.WriteString(style(line) + tick + label + "\n")
		}
	}
	draw("read", m.Stats.ReadBps, rd, rdCols, st.Read.Render)
	draw("write", m.Stats.WriteBps, wr, wrCols, st.Write.Render)
	start := fmt.Sprintf("-%ds", chartWindow)
	b.WriteString(st.Subtle.Render(start+strings.Repeat(" ", max(1, cw-len(start)-3))+"now") + "\n\n")
	b.WriteString(totals)
	return b.String()
}

// totalsView lays a mount's totals out for w cells, never leaving the line to wrap: all of
// them on one line where they fit, else without the ops rate, else on two lines (the bytes,
// then the ops and errors under them), with the rate where it fits; a line still too wide is
// cut.
func totalsView(t mountmgr.Stats, w int) string {
	const label = "Totals  "
	bytes := "read " + size(float64(t.BytesRead)) + " · written " + size(float64(t.BytesWritten))
	errs := plural(int(t.Errors), "error", "errors")
	withRate := fmt.Sprintf("%d ops (%.0f/s) · %s", t.Ops, t.OpsPerSec, errs)
	noRate := fmt.Sprintf("%d ops · %s", t.Ops, errs)
	under := strings.Repeat(" ", len(label))
	for _, lines := range [][]string{
		{label + bytes + " · " + withRate},
		{label + bytes + " · " + noRate},
		{label + bytes, under + withRate},
		{label + bytes, under + noRate},
	} {
		if !slices.ContainsFunc(lines, func(l string) bool { return lipgloss.Width(l) > w }) {
			return strings.Join(lines, "\n")
		}
	}
	return truncate(label+bytes, w) + "\n" + truncate(under+noRate, w)
}

func tail(s []float64, n int) []float64 {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
