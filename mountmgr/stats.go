package mountmgr

import (
	"time"

	"github.com/vaultui/vaultui/mountmgr/vfs"
)

// rateSpan is what the throughput figures measure: the last second, from the live counters
// to the tick sample nearest one second back. A second, not an average over several, so the
// live view shows a copy's real speed while it runs (dd at 375 MB/s reads 375, not a
// three-second average of it) and drops to 0 within a second after it stops.
const rateSpan = time.Second

// samplesKept is how many tick samples the sampler keeps: the ticks come once a second, so
// the last three always hold one between half a second and a second and a half old.
const samplesKept = 3

type sample struct {
	at                time.Time
	read, written, op uint64
}

// sampler turns a mount's lock-free counters into rates. Only the daemon's 1 Hz ticker calls
// add; stats is called under the daemon's lock.
type sampler struct {
	counters   *vfs.Counters
	now        func() time.Time // the clock stats reads; time.Now but in tests
	samples    []sample         // oldest first, at most samplesKept
	lastChange time.Time
}

func newSampler(c *vfs.Counters, now time.Time) *sampler {
	s := &sampler{counters: c, now: time.Now, lastChange: now}
	s.add(now)
	return s
}

func (s *sampler) read(at time.Time) sample {
	return sample{at: at, read: s.counters.BytesRead.Load(), written: s.counters.BytesWritten.Load(), op: s.counters.Ops.Load()}
}

func (s *sampler) add(now time.Time) {
	cur := s.read(now)
	if n := len(s.samples); n > 0 && s.samples[n-1].op != cur.op {
		s.lastChange = now
	}
	s.samples = append(s.samples, cur)
	if len(s.samples) > samplesKept {
		s.samples = s.samples[1:]
	}
}

// idleFor is how long the mount has seen no operation, to the sampler's resolution.
func (s *sampler) idleFor(now time.Time) time.Duration { return now.Sub(s.lastChange) }

// stats are the totals now and the rates over about the last second (see rateSpan): from the
// tick sample whose age is nearest rateSpan to the counters now. Until a sample is at least
// half of rateSpan old (just after the mount), the rates are 0.
func (s *sampler) stats() Stats {
	now := s.now()
	cur := s.read(now)
	st := Stats{BytesRead: cur.read, BytesWritten: cur.written, Ops: cur.op, Errors: s.counters.Errors.Load()}
	var base *sample
	for i := range s.samples {
		if base == nil || absDur(now.Sub(s.samples[i].at)-rateSpan) < absDur(now.Sub(base.at)-rateSpan) {
			base = &s.samples[i]
		}
	}
	if base == nil || now.Sub(base.at) < rateSpan/2 {
		return st
	}
	dt := now.Sub(base.at).Seconds()
	st.ReadBps = float64(cur.read-base.read) / dt
	st.WriteBps = float64(cur.written-base.written) / dt
	st.OpsPerSec = float64(cur.op-base.op) / dt
	return st
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
