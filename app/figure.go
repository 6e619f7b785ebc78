package app

import (
	"fmt"
	"slices"
	"time"
)

// Figure is one quantity measured several times: what the speed test shows is the median,
// with the range of the samples so a reader sees how far to trust it.
type Figure struct {
	Median, Min, Max float64
	N                int // samples
}

// figureOf summarises samples; no samples give the zero Figure.
func figureOf(samples []float64) Figure {
	if len(samples) == 0 {
		return Figure{}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return Figure{Median: med, Min: s[0], Max: s[n-1], N: n}
}

// Spread is the samples' range relative to the median: 0.1 means they lie within 10% of it
// end to end. It is 0 for fewer than two samples (see Stable).
func (f Figure) Spread() float64 {
	if f.N < 2 || f.Median == 0 {
		return 0
	}
	return (f.Max - f.Min) / f.Median
}

// Stable reports whether f rests on at least minSamples samples whose spread is at most
// maxSpread: the speed test repeats until its figures are stable or its time is up.
func (f Figure) Stable(minSamples int, maxSpread float64) bool {
	return f.N >= minSamples && f.Spread() <= maxSpread
}

// Ratio formats a ratio with its spread: "3.1x ±4% (median of 7 rounds)", where ±4% is
// half the range.
func (f Figure) Ratio() string {
	switch {
	case f.N == 0:
		return "unknown"
	case f.N == 1:
		return x(f.Median) + " (1 round)"
	}
	return fmt.Sprintf("%s ±%.0f%% (median of %d rounds)", x(f.Median), 50*f.Spread(), f.N)
}

// x formats a ratio with the digits a noisy measurement supports: "3.1x", but "1.05x"
// near 1, where the second digit tells a small gain from none.
func x(r float64) string {
	switch {
	case r >= 10:
		return fmt.Sprintf("%.0fx", r)
	case r >= 2:
		return fmt.Sprintf("%.1fx", r)
	}
	return fmt.Sprintf("%.2fx", r)
}

// Age writes a duration coarsely, as both front ends show how old something is: "42s",
// "17m", "5h03m", "3d".
func Age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
