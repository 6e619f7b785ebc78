package mountmgr

import (
	"time"

	"github.com/vaultui/vaultui/mountmgr/vfs"
)

// rateWindow is how many 1 Hz samples the throughput figures average over.
const rateWindow = 3

type sample struct {
	at                time.Time
	read, written, op uint64
}

// sampler turns a mount's lock-free counters into rates. Only the daemon's 1 Hz ticker calls
// add; snapshot is called under the daemon's lock.
type sampler struct {
	counters   *vfs.Counters
	samples    []sample // oldest first, at most rateWindow+1
	lastChange time.Time
}

func newSampler(c *vfs.Counters, now time.Time) *sampler {
	s := &sampler{counters: c, lastChange: now}
	s.add(now)
	return s
}

func (s *sampler) add(now time.Time) {
	cur := sample{at: now, read: s.counters.BytesRead.Load(), written: s.counters.BytesWritten.Load(), op: s.counters.Ops.Load()}
	if n := len(s.samples); n > 0 && s.samples[n-1].op != cur.op {
		s.lastChange = now
	}
	s.samples = append(s.samples, cur)
	if len(s.samples) > rateWindow+1 {
		s.samples = s.samples[1:]
	}
}

// idleFor is how long the mount has seen no operation, to the sampler's resolution.
func (s *sampler) idleFor(now time.Time) time.Duration { return now.Sub(s.lastChange) }

func (s *sampler) stats() Stats {
	st := Stats{
		BytesRead:    s.counters.BytesRead.Load(),
		BytesWritten: s.counters.BytesWritten.Load(),
		Ops:          s.counters.Ops.Load(),
		Errors:       s.counters.Errors.Load(),
	}
	if n := len(s.samples); n >= 2 {
		first, last := s.samples[0], s.samples[n-1]
		if dt := last.at.Sub(first.at).Seconds(); dt > 0 {
			st.ReadBps = float64(last.read-first.read) / dt
			st.WriteBps = float64(last.written-first.written) / dt
			st.OpsPerSec = float64(last.op-first.op) / dt
		}
	}
	return st
}
