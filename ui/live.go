package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
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

func (s *liveScreen) keys() []key.Binding {
	k := s.c.keys
	return []key.Binding{k.Unmount, k.Back}
}

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

const chartHeight = 5

func (s *liveScreen) View() string {
	st := s.c.styles
	w := s.c.contentWidth()
	m, ok := s.c.mountFor(s.v.CipherDir)
	if !ok {
		return st.Subtle.Render(s.v.Name+" is not mounted any more.") + "\n\nPress esc to go back."
	}
	var b strings.Builder
	ro := ""
	if m.ReadOnly {
		ro = " · read-only"
	}
	where := "mounted at"
	if m.Detached {
		where = "detached from"
	}
	head := fmt.Sprintf("%s · %s %s%s", m.Cipher, where, tildePath(m.MountPoint), ro)
	b.WriteString(truncate(head, w) + "\n")
	since := "since " + m.Since.Local().Format("15:04:05") + " (" + ago(s.c.now(), m.Since) + ")"
	if m.Idle > 0 {
		since += " · unmounts after " + m.Idle.String() + " unused"
	}
	switch {
	case m.Stale:
		since = st.StateStale.Render("stale: the file system stopped answering; press u to clean up")
	case m.Detached:
		since = st.Warning.Render("detached: files opened before are served until they are closed")
	}
	b.WriteString(st.Subtle.Render(since) + "\n\n")

	var rd, wr []float64
	if h := s.c.history[m.MountPoint]; h != nil {
		rd, wr = h.read, h.write
	}
	// Both charts share a scale so their heights compare; the y axis is
	// labelled at the top and the middle row, right of the chart.
	top := max(peak(rd), peak(wr), 1)
	labels := map[int]string{0: rate(top), chartHeight / 2: rate(top / 2)}
	labelW := 0
	for _, l := range labels {
		labelW = max(labelW, len(l)+1)
	}
	cw := min(historyLen, w-2-labelW)
	draw := func(name string, cur float64, samples []float64, style func(...string) string) {
		b.WriteString(style(fmt.Sprintf("%-6s now %-11s peak %s", name, rate(cur), rate(peak(samples)))) + "\n")
		for i, line := range chart(samples, cw, chartHeight, top) {
			tick, label := "│", ""
			if l, ok := labels[i]; ok {
				tick, label = "┤", " "+st.Subtle.Render(l)
			}
			b.WriteString(style(line) + tick + label + "\n")
		}
	}
	draw("read", m.ReadBps, rd, st.Read.Render)
	draw("write", m.WriteBps, wr, st.Write.Render)
	axis := "-60s" + strings.Repeat(" ", max(1, cw-7)) + "now"
	if cw < historyLen {
		axis = fmt.Sprintf("-%ds", cw) + strings.Repeat(" ", max(1, cw-len(fmt.Sprintf("-%ds", cw))-3)) + "now"
	}
	b.WriteString(st.Subtle.Render(axis) + "\n\n")
	b.WriteString(fmt.Sprintf("Totals  read %s · written %s · %d ops (%.0f/s) · %d errors",
		size(float64(m.BytesRead)), size(float64(m.BytesWritten)), m.Ops, m.OpsPerSec, m.Errs))
	return b.String()
}
