package mountmgr

import (
	"testing"
	"time"

	"github.com/vaultui/vaultui/mountmgr/vfs"
)

// TestRateIsTheLastSecond: dd writes 525 MB at 375 MB/s, from 2 s to 3.4 s. The rate read
// while it runs is its speed, not a three-second average of it (the issue saw "peak 175
// MB/s" for dd at 375 MB/s), and it is 0 once the last second holds no write (the issue saw
// "now 175 MB/s" after dd had finished).
func TestRateIsTheLastSecond(t *testing.T) {
	var c vfs.Counters
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	now := t0
	s := newSampler(&c, t0)
	s.now = func() time.Time { return now }
	// The daemon's ticks, with the bytes dd had written by each.
	tick := func(ms int, written uint64) {
		c.BytesWritten.Store(written)
		s.add(at(ms))
	}
	// A watch request at ms, with the bytes written by then.
	rate := func(ms int, written uint64) float64 {
		c.BytesWritten.Store(written)
		now = at(ms)
		return s.stats().WriteBps
	}
	near := func(got, want float64) bool { return got > want-1e3 && got < want+1e3 }

	tick(1000, 0)
	tick(2000, 0)
	tick(3000, 375e6)
	if got := rate(3000, 375e6); !near(got, 375e6) {
		t.Errorf("rate during dd: %.0f B/s, want 375e6", got)
	}
	if got := rate(3400, 525e6); !near(got, 375e6) {
		t.Errorf("rate as dd ends: %.0f B/s, want 375e6", got)
	}
	tick(4000, 525e6)
	// A second ago is after dd's end, which the reading at 3.4 s saw.
	if got := rate(4600, 525e6); got != 0 {
		t.Errorf("rate 1.2 s after dd ended: %.0f B/s, want 0", got)
	}
	tick(5000, 525e6)
	if got := rate(5100, 525e6); got != 0 {
		t.Errorf("rate 1.7 s after dd ended: %.0f B/s, want 0", got)
	}
}

// TestRateMissesNoBurst: readers asking once a second see every byte: a 1 MiB write that
// falls between two ticks shows in the readings after it, and they add up to it.
func TestRateMissesNoBurst(t *testing.T) {
	var c vfs.Counters
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	now := t0
	s := newSampler(&c, t0)
	s.now = func() time.Time { return now }
	// Ticks at whole seconds; the write lands at 2.9 s, readings at .1 past each second.
	total := 0.0
	for ms := 1000; ms <= 6000; ms += 1000 {
		if ms == 3000 {
			c.BytesWritten.Store(1 << 20) // written at 2.9 s
		}
		s.add(t0.Add(time.Duration(ms) * time.Millisecond))
		now = t0.Add(time.Duration(ms+100) * time.Millisecond)
		total += s.stats().WriteBps // each reading covers one second
	}
	if total < (1<<20)-1 || total > (1<<20)+1 {
		t.Fatalf("readings add up to %.0f bytes, want %d", total, 1<<20)
	}
}

// TestRateRightAfterMount: with no sample half a second old yet, the rate is 0, not a burst
// divided by a few milliseconds.
func TestRateRightAfterMount(t *testing.T) {
	var c vfs.Counters
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	s := newSampler(&c, t0)
	s.now = func() time.Time { return t0.Add(10 * time.Millisecond) }
	c.BytesRead.Store(1 << 20)
	if st := s.stats(); st.ReadBps != 0 || st.BytesRead != 1<<20 {
		t.Fatalf("stats 10 ms after mount: %+v", st)
	}
}
