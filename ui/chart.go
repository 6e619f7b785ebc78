package ui

import "strings"

// blocks are the eighth-height bars used to draw charts; they render in any
// UTF-8 terminal and need no colour.
var blocks = []rune{' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'}

// chart draws samples as a bar chart of height rows and width columns, the
// newest sample at the right, scaled so top is the top row. Missing history
// on the left stays blank.
func chart(samples []float64, width, height int, top float64) []string {
	if width < 1 || height < 1 {
		return nil
	}
	if len(samples) > width {
		samples = samples[len(samples)-width:]
	}
	pad := width - len(samples)
	rows := make([][]rune, height)
	for r := range rows {
		rows[r] = []rune(strings.Repeat(" ", width))
	}
	for i, v := range samples {
		eighths := 0
		if top > 0 && v > 0 {
			eighths = int(v/top*float64(height*8) + 0.5)
			eighths = max(1, min(eighths, height*8)) // any traffic shows
		}
		for r := 0; r < height; r++ { // r = 0 is the bottom row
			fill := min(8, max(0, eighths-r*8))
			rows[height-1-r][pad+i] = blocks[fill]
		}
	}
	out := make([]string, height)
	for r := range rows {
		out[r] = string(rows[r])
	}
	return out
}

// chartWindow is the seconds a live chart shows whatever its width: the last minute, as
// the docs say.
const chartWindow = 60

// resample fits the last n one-second samples into cols columns: a column shows the busiest
// second it covers, so a short burst stays visible and reaches the peak the chart is scaled
// to, and a chart wider than n repeats a second over columns. The columns before the history
// began are left out (always on the left), so chart leaves them blank.
func resample(samples []float64, n, cols int) []float64 {
	first := len(samples) - n // the window's first second, as an index into samples
	out := make([]float64, 0, cols)
	for j := range cols {
		lo, hi := max(0, first+j*n/cols), first+max((j+1)*n/cols, j*n/cols+1)
		if lo < hi {
			out = append(out, peak(samples[lo:hi]))
		}
	}
	return out
}

func peak(samples []float64) float64 {
	p := 0.0
	for _, v := range samples {
		p = max(p, v)
	}
	return p
}

// progressBar draws a horizontal bar of width cells filled to pct (0..1),
// with eighth blocks for the partial cell.
func progressBar(pct float64, width int) string {
	if width < 1 {
		return ""
	}
	pct = max(0, min(1, pct))
	eighths := int(pct*float64(width*8) + 0.5)
	full, part := eighths/8, eighths%8
	partial := []rune{'░', '▏', '▎', '▍', '▌', '▋', '▊', '▉'}
	bar := strings.Repeat("█", full)
	if full < width {
		bar += string(partial[part]) + strings.Repeat("░", width-full-1)
	}
	return bar
}
