package mountmgr

import (
	"time"

	"github.com/vaultui/vaultui/mountmgr/vfs"
)

// rateSpan is what the throughput figures measure: the last second, from the counters a
// second ago to the live counters now. A second, not an average over several, so the live
// view shows a copy's real speed while it runs (dd at 375 MB/s reads 375, not a three-second
// average of it) and drops to 0 soon after it stops.
//
// The counters a second ago are interpolated between the readings around then: the 1 Hz
// tick samples and the counters every earlier stats call reported. Since those reports are
// readings too, the windows of a reader asking once a second lie back to back and every
// byte counts in one of its readings, a short burst between two ticks too.
const rateSpan = time.Second

// maxPoints bounds the readings kept (many readers asking often).
const maxPoints = 64

type sample struct {
	at                time.Time
	read, written, op uint64
}

// sampler turns a mount's lock-free counters into rates. The daemon's 1 Hz ticker calls add;
// add and stats are called under the daemon's lock.
type sampler struct {
	counters *vfs.Counters
	now      func() time.Time // the clock stats reads; time.Now but in tests
	// points are readings of the counters, oldest first: the newest one at least rateSpan old
	// and every later one.
	points []sample
	// lastOps and lastChange: the operation count at the last tick that changed it, and when.
	lastOps    uint64
	lastChange time.Time
}

func newSampler(c *vfs.Counters, now time.Time) *sampler {
	s := &sampler{counters: c, now: time.Now, lastChange: now}
	first := s.read(now)
	s.lastOps = first.op
	s.keep(first)
	return s
}

func (s *sampler) read(at time.Time) sample {
	return sample{at: at, read: s.counters.BytesRead.Load(), written: s.counters.BytesWritten.Load(), op: s.counters.Ops.Load()}
}

// add is the tick's reading; it also tells idleness.
func (s *sampler) add(now time.Time) {
	cur := s.read(now)
	if cur.op != s.lastOps {
		s.lastOps, s.lastChange = cur.op, now
	}
	s.keep(cur)
}

// keep records a reading and forgets those no longer needed to reach rateSpan back.
func (s *sampler) keep(p sample) {
	if n := len(s.points); n > 0 && !p.at.After(s.points[n-1].at) {
		return
	}
	s.points = append(s.points, p)
	cut := p.at.Add(-rateSpan)
	for len(s.points) > 1 && (!s.points[1].at.After(cut) || len(s.points) > maxPoints) {
		s.points = s.points[1:]
	}
}

// idleFor is how long the mount has seen no operation, to the sampler's resolution.
func (s *sampler) idleFor(now time.Time) time.Duration { return now.Sub(s.lastChange) }

// stats are the totals now and the rates over the last second (see rateSpan). Until the
// oldest reading is half a second old (just after the mount), the rates are 0.
func (s *sampler) stats() Stats {
	now := s.now()
	cur := s.read(now)
	st := Stats{BytesRead: cur.read, BytesWritten: cur.written, Ops: cur.op, Errors: s.counters.Errors.Load()}
	if len(s.points) > 0 && now.Sub(s.points[0].at) >= rateSpan/2 {
		base := s.at(now.Add(-rateSpan), cur)
		dt := now.Sub(base.at).Seconds()
		st.ReadBps = (float64(cur.read) - base.read) / dt
		st.WriteBps = (float64(cur.written) - base.written) / dt
		st.OpsPerSec = (float64(cur.op) - base.op) / dt
	}
	s.keep(cur)
	return st
}

// point is a reading with fractional counters, as interpolated.
type point struct {
	at                time.Time
	read, written, op float64
}

// at estimates the counters at time t by linear interpolation between the two readings
// around it (cur is the newest); before the oldest reading it is the oldest.
func (s *sampler) at(t time.Time, cur sample) point {
	readings := append(s.points[:len(s.points):len(s.points)], cur)
	if !t.After(readings[0].at) {
		return toPoint(readings[0])
	}
	for i := 1; i < len(readings); i++ {
		a, b := readings[i-1], readings[i]
		if t.After(b.at) {
			continue
		}
		f := float64(t.Sub(a.at)) / float64(b.at.Sub(a.at))
		lerp := func(x, y uint64) float64 { return float64(x) + f*(float64(y)-float64(x)) }
		return point{at: t, read: lerp(a.read, b.read), written: lerp(a.written, b.written), op: lerp(a.op, b.op)}
	}
	return toPoint(cur)
}

func toPoint(x sample) point {
	return point{at: x.at, read: float64(x.read), written: float64(x.written), op: float64(x.op)}
}
