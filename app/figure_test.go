package app

import "testing"

func TestFigureMedianAndSpread(t *testing.T) {
	for _, c := range []struct {
		samples          []float64
		median, min, max float64
		spread           float64
	}{
		{nil, 0, 0, 0, 0},
		{[]float64{5}, 5, 5, 5, 0},
		{[]float64{3, 1, 2}, 2, 1, 3, 1},
		{[]float64{4, 1, 3, 2}, 2.5, 1, 4, 1.2},
		{[]float64{10, 10.5, 9.5, 10}, 10, 9.5, 10.5, 0.1},
	} {
		f := figureOf(c.samples)
		if f.Median != c.median || f.Min != c.min || f.Max != c.max || f.N != len(c.samples) || !near(f.Spread(), c.spread) {
			t.Errorf("%v: got %+v spread %v, want median %v range %v..%v spread %v", c.samples, f, f.Spread(), c.median, c.min, c.max, c.spread)
		}
	}
	in := []float64{3, 1, 2}
	figureOf(in)
	if in[0] != 3 {
		t.Error("figureOf sorted its caller's samples")
	}
}

func TestFigureStable(t *testing.T) {
	if figureOf([]float64{10, 10}).Stable(3, 0.1) {
		t.Error("two samples counted as stable with three required")
	}
	if !figureOf([]float64{10, 10.4, 9.6}).Stable(3, 0.1) {
		t.Error("8% spread not stable at 10%")
	}
	if figureOf([]float64{10, 12, 9}).Stable(3, 0.1) {
		t.Error("30% spread stable at 10%")
	}
}

func TestFigureRatioText(t *testing.T) {
	for _, c := range []struct {
		samples []float64
		want    string
	}{
		{nil, "unknown"},
		{[]float64{3.08}, "3.1x (1 round)"},
		{[]float64{3.0, 3.1, 3.2}, "3.1x ±3% (median of 3 rounds)"},
		{[]float64{1.04, 1.05, 1.06}, "1.05x ±1% (median of 3 rounds)"},
	} {
		if got := figureOf(c.samples).Ratio(); got != c.want {
			t.Errorf("%v: %q, want %q", c.samples, got, c.want)
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
