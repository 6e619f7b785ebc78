package app

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/buildinfo"
	"github.com/vaultui/vaultui/internal/userfile"
)

// How the speed test measures. The whole test stays under 3 s (as "init --cipher auto"
// promises): the ciphers get cipherBudget, the write through the write path writeBudget.
const (
	cipherBudget = 1300 * time.Millisecond
	writeBudget  = 1000 * time.Millisecond
	// cipherSlice is one cipher's share of a round. Rounds interleave the ciphers, so a
	// change in clock speed or load touches all of them alike and the ratios stay meaningful.
	cipherSlice = 20 * time.Millisecond
	// minRounds rounds at least, then more until every figure spreads by at most maxSpread
	// (end to end, relative to the median) or the budget is spent.
	minRounds = 3
	maxSpread = 0.10
	maxRounds = 25
	// writeSize is what one write sample writes, in the mount's requests.
	writeSize = 32 << 20
)

// CipherSpeed is one cipher's encryption throughput on this CPU over the rounds.
// Its tags and WriteSpeed's are the keys of the cache (cachedSpeed).
type CipherSpeed struct {
	Cipher crypto.CipherID `json:"cipher"`
	// Samples holds MB/s (10^6 bytes of plaintext per second), one per round; MBps is their
	// median.
	Samples []float64 `json:"mbps_rounds,omitempty"`
	MBps    float64   `json:"-"`
	// Implementation names the code that ran, where it varies (AEGIS: "VAES-512", "ARMv8 AES",
	// "portable, constant time").
	Implementation string `json:"implementation,omitempty"`
	Err            error  `json:"-"` // set when the cipher could not be measured
}

// Figure is the cipher's MB/s with its range.
func (c CipherSpeed) Figure() Figure { return figureOf(c.Samples) }

// WriteSample is one timed write through the write path.
type WriteSample struct {
	Wall time.Duration // from the first request to the end of the fsync
	CPU  time.Duration // user and system time of the writing thread
}

// WriteRound is one round of the write comparison: the same write with each cipher.
type WriteRound struct{ Cipher, Baseline WriteSample }

// WriteSpeed is what a mount gains from Cipher over AES-256-GCM on one file system: the same
// data encrypted and written through vaultui's write path (mountmgr/vfs.WriteBlocks, in
// requests of the size a mount receives) into a temporary file, then synced. FUSE's own cost
// is left out: it is the same for both ciphers.
type WriteSpeed struct {
	Dir      string          `json:"dir"`    // where the temporary files were written
	FSType   string          `json:"fstype"` // e.g. "ext4", "tmpfs"
	fs       string          // identifies the file system for the cache
	Cipher   crypto.CipherID `json:"cipher"`
	Baseline crypto.CipherID `json:"baseline"` // AES-256-GCM
	Bytes    int64           `json:"bytes"`    // written per sample
	Rounds   []WriteRound    `json:"rounds,omitempty"`
	Measured time.Time       `json:"measured"`
	Err      error           `json:"-"`
}

// Ratio is how many times faster the write with Cipher was than with the baseline, round by
// round.
func (w *WriteSpeed) Ratio() Figure {
	var r []float64
	for _, x := range w.Rounds {
		if x.Cipher.Wall > 0 {
			r = append(r, float64(x.Baseline.Wall)/float64(x.Cipher.Wall))
		}
	}
	return figureOf(r)
}

// CPUSavedPerGiB is the CPU time (seconds) Cipher saves per GiB written, round by round;
// negative when it costs more.
func (w *WriteSpeed) CPUSavedPerGiB() Figure {
	var r []float64
	for _, x := range w.Rounds {
		if w.Bytes > 0 {
			r = append(r, (x.Baseline.CPU-x.Cipher.CPU).Seconds()*float64(1<<30)/float64(w.Bytes))
		}
	}
	return figureOf(r)
}

// MBps is the write throughput with Cipher and with the baseline (medians).
func (w *WriteSpeed) MBps() (cipher, baseline float64) {
	var c, b []float64
	for _, x := range w.Rounds {
		c = append(c, float64(w.Bytes)/x.Cipher.Wall.Seconds()/1e6)
		b = append(b, float64(w.Bytes)/x.Baseline.Wall.Seconds()/1e6)
	}
	return figureOf(c).Median, figureOf(b).Median
}

// SpeedReport is a speed test: every cipher on this CPU and, when measured, the write through
// the write path on one file system. Recommend turns it into advice.
type SpeedReport struct {
	Measured time.Time // when the ciphers were measured
	Cached   bool      // read from the cache, not measured by this call
	HasAES   bool      // the CPU has AES instructions
	Ciphers  []CipherSpeed
	Write    *WriteSpeed // nil while not (yet) measured
	// Writing is set in progress reports while the write is measured.
	Writing bool
}

// Result returns cipher c's speed.
func (r *SpeedReport) Result(c crypto.CipherID) (CipherSpeed, bool) {
	if i := slices.IndexFunc(r.Ciphers, func(x CipherSpeed) bool { return x.Cipher == c }); i >= 0 {
		return r.Ciphers[i], true
	}
	return CipherSpeed{}, false
}

// Ratio is cipher c's throughput relative to AES-256-GCM's, round by round (both measured in
// the same round, moments apart).
func (r *SpeedReport) Ratio(c crypto.CipherID) Figure {
	x, ok1 := r.Result(c)
	g, ok2 := r.Result(crypto.AESGCM)
	if !ok1 || !ok2 || x.Err != nil || g.Err != nil {
		return Figure{}
	}
	var rs []float64
	for i := 0; i < len(x.Samples) && i < len(g.Samples); i++ {
		if g.Samples[i] > 0 {
			rs = append(rs, x.Samples[i]/g.Samples[i])
		}
	}
	return figureOf(rs)
}

// stable reports whether every figure the recommendation rests on has settled: each
// cipher's ratio to AES-256-GCM, or its own MB/s when there is no AES-256-GCM to compare.
func (r *SpeedReport) stable() bool {
	g, _ := r.Result(crypto.AESGCM)
	for _, c := range r.Ciphers {
		if c.Err != nil {
			continue
		}
		f := c.Figure()
		if c.Cipher != crypto.AESGCM && g.Err == nil && len(g.Samples) > 0 {
			f = r.Ratio(c.Cipher)
		}
		if !f.Stable(minRounds, maxSpread) {
			return false
		}
	}
	return true
}

// clone copies r deeply enough that the copy can be handed to another goroutine while the
// test goes on.
func (r *SpeedReport) clone() SpeedReport {
	c := *r
	c.Ciphers = make([]CipherSpeed, len(r.Ciphers))
	for i, x := range r.Ciphers {
		x.Samples = append([]float64(nil), x.Samples...)
		c.Ciphers[i] = x
	}
	if r.Write != nil {
		w := *r.Write
		w.Rounds = append([]WriteRound(nil), w.Rounds...)
		c.Write = &w
	}
	return c
}

// Meter takes the measurements: the real one (NewSpeed) runs crypto.Measure and writes
// through the write path; tests give fixed figures, or fail when asked to measure.
type Meter interface {
	// Cipher returns cipher c's throughput in MB/s, measured for about d.
	Cipher(ctx context.Context, c crypto.CipherID, d time.Duration) (float64, error)
	// Write encrypts size bytes with cipher c and writes them to a new temporary file in dir
	// through the write path, syncs and removes it.
	Write(ctx context.Context, dir string, c crypto.CipherID, size int64) (WriteSample, error)
}

// Speed is the speed test as a use case: measure, remember, recommend.
type Speed struct {
	// CachePath is the cache file; "" remembers nothing.
	CachePath string
	// DefaultDir is where the write is measured when the caller names no folder.
	DefaultDir string
	Meter      Meter
	// cpu and build key the cache: a result holds only for the CPU it was measured on and
	// the build that measured it (buildinfo.ID: a new build may run other code).
	cpu, build string
	now        func() time.Time
}

// NewSpeed returns the speed test with its cache at $XDG_CACHE_HOME/vaultui/speed.json
// (~/.cache when unset), measuring writes in that folder unless told otherwise. Without a
// home directory it remembers nothing and writes in the system's temporary folder.
func NewSpeed() *Speed {
	s := &Speed{Meter: realMeter{}, cpu: cpuModel(), build: buildinfo.ID(), now: time.Now, DefaultDir: os.TempDir()}
	dir, err := userfile.BaseDir("XDG_CACHE_HOME", ".cache")
	if err != nil {
		return s
	}
	s.DefaultDir = filepath.Join(dir, "vaultui")
	s.CachePath = filepath.Join(s.DefaultDir, "speed.json")
	return s
}

func (s *Speed) clock() time.Time {
	if s.now == nil {
		return time.Now()
	}
	return s.now()
}

// Run measures every cipher and the write to dir ("" for DefaultDir), calls progress (if not
// nil) with the report so far after each measurement, remembers the result and returns it.
// It takes under 3 s; a cancelled ctx ends it with ctx's error and remembers nothing.
func (s *Speed) Run(ctx context.Context, dir string, progress func(SpeedReport)) (SpeedReport, error) {
	r := SpeedReport{HasAES: crypto.HasAESInstructions()}
	for _, c := range crypto.Ciphers {
		impl, _ := crypto.Implementation(c)
		r.Ciphers = append(r.Ciphers, CipherSpeed{Cipher: c, Implementation: impl})
	}
	if err := s.measureCiphers(ctx, &r, progress); err != nil {
		return r, err
	}
	r.Measured = s.clock()
	if err := s.measureWrite(ctx, dir, &r, progress); err != nil {
		return r, err
	}
	// Only a cache: failing to write it costs a measurement next time, nothing more.
	_ = s.save(r)
	return r, nil
}

// ForNewVault is the test "init --cipher auto" and the wizard rely on: the remembered one
// when there is one for this CPU and build, with the write measured on dir's file system
// only if that is not remembered too.
func (s *Speed) ForNewVault(ctx context.Context, dir string, progress func(SpeedReport)) (SpeedReport, error) {
	r, ok := s.Cached(dir)
	if !ok {
		return s.Run(ctx, dir, progress)
	}
	if r.Write != nil {
		return r, nil
	}
	if err := s.measureWrite(ctx, dir, &r, progress); err != nil {
		return r, err
	}
	_ = s.save(r)
	return r, nil
}

func (s *Speed) measureCiphers(ctx context.Context, r *SpeedReport, progress func(SpeedReport)) error {
	deadline := time.Now().Add(cipherBudget)
	for round := 1; ; round++ {
		start := time.Now()
		for i := range r.Ciphers {
			c := &r.Ciphers[i]
			if c.Err != nil {
				continue
			}
			mbps, err := s.Meter.Cipher(ctx, c.Cipher, cipherSlice)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err != nil {
				c.Err, c.Samples, c.MBps = err, nil, 0
			} else {
				c.Samples = append(c.Samples, mbps)
				c.MBps = c.Figure().Median
			}
			if progress != nil {
				progress(r.clone())
			}
		}
		if round >= maxRounds || r.stable() || !timeFor(start, deadline) {
			return nil
		}
	}
}

// timeFor reports whether another round like the one begun at start ends before deadline.
// On a busy machine rounds take longer and there are fewer of them: the spread shown says
// what that costs.
func timeFor(start, deadline time.Time) bool {
	now := time.Now()
	return now.Add(now.Sub(start)).Before(deadline)
}

// challenger is the cipher whose gain over AES-256-GCM the write measures: the recommended
// one, or when that is AES-256-GCM itself, the fastest other, to show what it would give.
func (r *SpeedReport) challenger() (crypto.CipherID, bool) {
	if g, ok := r.Result(crypto.AESGCM); !ok || g.Err != nil {
		return "", false
	}
	if rec := r.Recommend().Cipher; rec != crypto.AESGCM {
		return rec, rec != ""
	}
	best, bestMB := crypto.CipherID(""), 0.0
	for _, c := range r.Ciphers {
		if c.Cipher != crypto.AESGCM && c.Err == nil && c.MBps > bestMB {
			best, bestMB = c.Cipher, c.MBps
		}
	}
	return best, best != ""
}

// measureWrite times the challenger and AES-256-GCM writing through the write path to dir,
// alternating which goes first, until the ratio is stable or writeBudget is spent. A write
// that fails is reported in r.Write.Err: the cipher figures stand without it.
func (s *Speed) measureWrite(ctx context.Context, dir string, r *SpeedReport, progress func(SpeedReport)) error {
	c, ok := r.challenger()
	if !ok {
		return nil
	}
	if dir == "" {
		dir = s.DefaultDir
		if err := os.MkdirAll(dir, 0o700); err != nil {
			r.Write = &WriteSpeed{Dir: dir, Cipher: c, Baseline: crypto.AESGCM, Err: err}
			return nil
		}
	}
	w := &WriteSpeed{Dir: dir, Cipher: c, Baseline: crypto.AESGCM, Bytes: writeSize, Measured: s.clock()}
	w.fs, w.FSType, w.Err = fileSystem(dir)
	r.Write = w
	if w.Err != nil {
		return nil
	}
	r.Writing = true
	defer func() { r.Writing = false }()
	if progress != nil {
		progress(r.clone())
	}
	deadline := time.Now().Add(writeBudget)
	for round := 1; ; round++ {
		start := time.Now()
		var x WriteRound
		order := []struct {
			c  crypto.CipherID
			to *WriteSample
		}{{c, &x.Cipher}, {crypto.AESGCM, &x.Baseline}}
		if round%2 == 0 {
			order[0], order[1] = order[1], order[0]
		}
		for _, o := range order {
			ws, err := s.Meter.Write(ctx, dir, o.c, writeSize)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err != nil {
				w.Err = err
				return nil
			}
			*o.to = ws
		}
		w.Rounds = append(w.Rounds, x)
		if progress != nil {
			progress(r.clone())
		}
		if round >= maxRounds || w.Ratio().Stable(minRounds, maxSpread) || !timeFor(start, deadline) {
			return nil
		}
	}
}
