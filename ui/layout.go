package ui

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
	"github.com/vaultui/vaultui/vault"
)

// Layout helpers shared by the screens: how much room a screen has, which of
// its items fit, and the "↓ 3 more" line that says what does not.

// para wraps a paragraph to the content's width.
func (c *common) para(s string) string { return wrap(s, c.contentWidth()) }

// bodyHeight is the lines a screen may draw: the terminal less the header,
// the blank line under it and the one-line help bar.
func (c *common) bodyHeight() int { return max(1, c.height-3) }

// above and below are the lines that say what a scrolled view hides: "↑ 2 more" is its
// first line, "↓ 3 more" its last.
func above(n int) string { return fmt.Sprintf("↑ %d more", n) }
func below(n int) string { return fmt.Sprintf("↓ %d more", n) }

// windowed shows the blocks of a list that fit in h lines, gap blank lines apart, around
// the one at cursor (window), and the lines saying what is hidden above and below; it
// returns the offset window moved to.
func windowed(st *Styles, blocks []string, cursor, offset, h, gap int) (string, int) {
	heights := make([]int, len(blocks))
	for i, b := range blocks {
		heights[i] = lipgloss.Height(b)
	}
	start, end := window(heights, cursor, offset, h, gap)
	shown := strings.Join(blocks[start:end], strings.Repeat("\n", gap+1))
	if start > 0 {
		shown = st.Subtle.Render(above(start)) + "\n" + shown
	}
	if end < len(blocks) {
		shown += "\n" + st.Subtle.Render(below(len(blocks)-end))
	}
	return shown, start
}

// window picks the items a scrolled list shows in h lines: whole items from
// offset on, gap blank lines between them, with offset moved (and returned)
// so that the item at cursor shows. heights are the items' line counts; a
// line above and one below say what is hidden there (windowed).
func window(heights []int, cursor, offset, h, gap int) (start, end int) {
	n := len(heights)
	if n == 0 {
		return 0, 0
	}
	// fits reports whether the items from..to (inclusive) fit in h with the
	// lines that say what is hidden.
	fits := func(from, to int) bool {
		used := 0
		for i := from; i <= to; i++ {
			used += heights[i]
			if i > from {
				used += gap
			}
		}
		if from > 0 {
			used++
		}
		if to < n-1 {
			used++
		}
		return used <= h
	}
	if fits(0, n-1) {
		return 0, n
	}
	cursor = max(0, min(cursor, n-1))
	start = min(cursor, max(0, min(offset, n-1)))
	for start < cursor && !fits(start, cursor) {
		start++
	}
	end = start + 1 // the first item shows even when taller than h
	for end < n && fits(start, end) {
		end++
	}
	// Fill the screen: at the bottom of the list, show earlier items too.
	for start > 0 && fits(start-1, end-1) {
		start--
	}
	return start, end
}

// scroll is where a screen taller than the terminal is scrolled to: the one way
// the info, speed and wizard screens scroll. Lines hidden above are counted on
// the first line ("↑ 2 more"), lines hidden below on the last ("↓ 3 more").
type scroll struct {
	offset int // the first line shown
}

// noFocus is view's focus for a screen without one (the user scrolls it).
var noFocus = [2]int{-1, -1}

// view shows h lines of text from the offset on. The offset moves as little as it must
// for lines focus[0] to focus[1] to show (as many of them as fit, the first first): the
// focused line always shows.
func (s *scroll) view(text string, h int, focus [2]int, st *Styles) string {
	lines := strings.Split(text, "\n")
	n := len(lines)
	h = max(1, h)
	if n <= h {
		s.offset = 0
		return text
	}
	// shown is how many text lines fit from off on, beside the markers.
	shown := func(off int) int {
		k := h
		if off > 0 {
			k--
		}
		if off+k < n {
			k--
		}
		return max(1, k)
	}
	last := n - max(1, h-1) // the offset that shows the end, under the "↑" line
	off := max(0, min(s.offset, last))
	if from, to := focus[0], min(focus[1], n-1); from >= 0 {
		for off < last && to >= off+shown(off) {
			off++
		}
		off = min(off, from)
	}
	s.offset = off
	k := shown(off)
	out := make([]string, 0, h)
	if off > 0 {
		out = append(out, st.Subtle.Render(above(off)))
	}
	out = append(out, lines[off:off+k]...)
	if hidden := n - off - k; hidden > 0 {
		out = append(out, st.Subtle.Render(below(hidden)))
	}
	return strings.Join(out, "\n")
}

// scrollBy moves the offset by d lines; view clamps it.
func (s *scroll) scrollBy(d int) { s.offset = max(0, s.offset+d) }

// joinWrap joins parts with sep, breaking the line between parts (never
// inside one) where the next would pass w.
func joinWrap(parts []string, sep string, w int) string {
	var b strings.Builder
	line := 0
	for i, p := range parts {
		pw := lipgloss.Width(p)
		switch {
		case i == 0:
		case line+lipgloss.Width(sep)+pw > w:
			b.WriteString(strings.TrimRight(sep, " ") + "\n")
			line = 0
		default:
			b.WriteString(sep)
			line += lipgloss.Width(sep)
		}
		b.WriteString(p)
		line += pw
	}
	return b.String()
}

// titleSep separates the parts of a screen's title ("new vault · step 4 of 6 · Cipher").
const titleSep = " · "

// fitTitle fits a screen's title in w cells. The last part gives way: it is cut with
// truncate, or dropped where less than a short word of it would be left; the parts before it
// stay whole ("new vault · step 4 of 6", never "step 4 of 6 ·…"), unless they alone are too
// wide, when the same applies to them.
func fitTitle(t string, w int) string {
	if lipgloss.Width(t) <= w {
		return t
	}
	i := strings.LastIndex(t, titleSep)
	if i < 0 {
		return truncate(t, w)
	}
	head, last := t[:i], t[i+len(titleSep):]
	if lipgloss.Width(head) > w {
		return fitTitle(head, w)
	}
	if cut := truncate(last, w-lipgloss.Width(head+titleSep)); lipgloss.Width(cut) > 3 {
		return head + titleSep + cut
	}
	return head
}

// tildeText shortens every absolute path under the home directory in a
// sentence ("mounted at /home/ann/Vaults/work" -> "mounted at ~/Vaults/work");
// only paths that start a word are touched.
func tildeText(s string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "/" || home == "" {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		rest := s[i:]
		startsWord := i == 0 || strings.ContainsRune(" \t:=(\"'", rune(s[i-1]))
		if startsWord && strings.HasPrefix(rest, home) && (len(rest) == len(home) || strings.IndexByte("/ :),\"'", rest[len(home)]) >= 0) {
			b.WriteString("~")
			i += len(home)
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// uniqueKeys drops disabled bindings and any binding whose keys an earlier one
// already has, so help names each key once (the first, most specific, wins).
func uniqueKeys(bs []key.Binding) []key.Binding {
	seen := map[string]bool{}
	var out []key.Binding
	for _, b := range bs {
		if !b.Enabled() || slices.ContainsFunc(b.Keys(), func(k string) bool { return seen[k] }) {
			continue
		}
		for _, k := range b.Keys() {
			seen[k] = true
		}
		out = append(out, b)
	}
	return out
}

// shortHelp is the help bar: the bindings that fit in width, in order, then
// "…" when some did not (the full help has them).
func shortHelp(h help.Model, bs []key.Binding, width int) string {
	h.Width = 0 // we fit here: help.Model would overflow by a separator
	tail := " " + h.Ellipsis
	for n := len(bs); n > 0; n-- {
		v := h.ShortHelpView(bs[:n])
		if n < len(bs) {
			v += tail
		}
		if lipgloss.Width(v) <= width {
			return v
		}
	}
	return ""
}

// fullHelp lays every binding out in as few rows as fit the width (at least
// five, or all of them in one column), columns filled top to bottom.
func fullHelp(h help.Model, bs []key.Binding, width int) string {
	h.Width = 0
	var v string
	for rows := min(5, len(bs)); rows <= len(bs); rows++ {
		v = h.FullHelpView(slices.Collect(slices.Chunk(bs, max(1, rows)))) // columns of rows keys
		if lipgloss.Width(v) <= width {
			return v
		}
	}
	return v
}

// wrapValue breaks a value into lines of at most w cells between its words, never inside
// one: lipgloss's word wrapping also breaks after a "-", inside a date or a name. A word
// wider than a line (a long path) breaks after a "/", between folder names, and a folder
// name or other token still wider than a line is cut with truncate, never split across lines.
// Only the spaces at the breaks are dropped.
func wrapValue(s string, w int) string {
	if w <= 0 || lipgloss.Width(s) <= w {
		return s
	}
	fits := func(s string) bool { return lipgloss.Width(s) <= w }
	var lines []string
	line := ""
	// add puts p at the end of the line, or starts a new line with it (cut when wider).
	add := func(p string) {
		if line == "" {
			p = strings.TrimLeft(p, " ")
		}
		if fits(line + p) {
			line += p
			return
		}
		if line != "" {
			lines = append(lines, line)
		}
		line = strings.TrimLeft(p, " ")
		if !fits(line) {
			lines = append(lines, truncate(line, w))
			line = ""
		}
	}
	for i, word := range strings.Split(s, " ") {
		sep := ""
		if i > 0 {
			sep = " "
		}
		switch {
		case fits(line + sep + word), fits(word):
			add(sep + word)
		default: // wider than a line: it starts here and breaks between folder names
			for j, p := range strings.SplitAfter(word, "/") {
				if j == 0 {
					p = sep + p
				}
				add(p)
			}
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// fieldsView draws labelled values in two columns; a long value wraps under
// itself, beside its label, between its tokens (wrapValue). styles colours the
// values of some labels.
func fieldsView(st *Styles, rows []vault.Fact, w int, styles map[string]lipgloss.Style) string {
	labelW := 0
	for _, r := range rows {
		labelW = max(labelW, lipgloss.Width(r.Label))
	}
	valueW := max(10, w-labelW-2)
	lines := make([]string, 0, len(rows))
	for _, r := range rows {
		v := lipgloss.NewStyle().Width(valueW).Render(wrapValue(r.Value, valueW))
		if style, ok := styles[r.Label]; ok {
			v = style.Render(v)
		}
		lines = append(lines, lipgloss.JoinHorizontal(lipgloss.Top, st.Label.Render(padRight(r.Label, labelW))+"  ", v))
	}
	return strings.Join(lines, "\n")
}
