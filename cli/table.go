package cli

import (
	"bytes"
	"io"
	"strings"

	"github.com/charmbracelet/lipgloss"
)

// table lays out tab-separated lines in columns, as text/tabwriter with padding 2 does, but
// measures cells as the terminal draws them (lipgloss.Width: a CJK character takes two cells,
// a combining accent none) where tabwriter counts runes, so a path with 日本 in it shifted
// every column after it by two. Every table the commands print goes through it.
//
// Write takes text; lines end in "\n" and cells are separated by "\t". Each cell but the last
// of its line is padded to the widest of its column plus two spaces; lines keep no trailing
// spaces. Flush writes it all.
type table struct {
	w   io.Writer
	buf bytes.Buffer
}

func newTable(w io.Writer) *table { return &table{w: w} }

func (t *table) Write(p []byte) (int, error) { return t.buf.Write(p) }

func (t *table) Flush() error {
	text := t.buf.String()
	t.buf.Reset()
	if text == "" {
		return nil
	}
	open := !strings.HasSuffix(text, "\n") // a last line without its newline keeps none
	var rows [][]string
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		rows = append(rows, strings.Split(l, "\t"))
	}
	var widths []int
	for _, r := range rows {
		for i, c := range r[:len(r)-1] {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], lipgloss.Width(c))
		}
	}
	var b strings.Builder
	for n, r := range rows {
		var line strings.Builder
		for i, c := range r[:len(r)-1] {
			line.WriteString(c)
			line.WriteString(strings.Repeat(" ", widths[i]-lipgloss.Width(c)+2))
		}
		line.WriteString(r[len(r)-1])
		b.WriteString(strings.TrimRight(line.String(), " ")) // empty last cells leave no padding
		if n < len(rows)-1 || !open {
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(t.w, b.String())
	return err
}
