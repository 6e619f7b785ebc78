package cli

import (
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"time"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/crypto"
)

var speedCommand = &command{
	name:    "speed",
	group:   groupOther,
	summary: "Measure every content cipher on this CPU and recommend one",
	args:    "[--dir DIR] [--json]",
	help: `Encrypts 4 KiB blocks, as a mounted vault does, with each cipher in
short interleaved rounds, repeated until the figures are stable or the time
is up, and prints each cipher's median MB/s with its range. Then it writes
32 MiB through vaultui's write path (encrypt, write, fsync; no FUSE) to a
temporary file in --dir (default: vaultui's cache folder), once with the
recommended cipher and once with AES-256-GCM, to show what a mount on that
file system gains, and the CPU time saved per GiB. Under 3 seconds in all.

The recommendation: AEGIS-256X2 when the CPU has AES instructions and AEGIS
was faster than AES-256-GCM in every round; AES-256-GCM when it was not;
XChaCha20-Poly1305 when the CPU has no AES instructions. It says who can
open a vault with it: one with AEGIS-256X2 opens only in vaultui.

The result is remembered for this CPU and build ($XDG_CACHE_HOME/vaultui/
speed.json); "vaultui init --cipher auto" and the terminal app use it.

examples:
  vaultui speed
  vaultui speed --dir ~/Sync
  vaultui speed --json`,
	setup: func(fs *flag.FlagSet) runFunc {
		asJSON := fs.Bool("json", false, "print JSON")
		dir := fs.String("dir", "", "measure the write on the file system of `DIR` (default: the cache folder)")
		return func(e *env, args []string) error {
			sp, d := e.speedTest(), *dir
			if d != "" {
				var err error
				if d, err = filepath.Abs(d); err != nil {
					return err
				}
			}
			if !*asJSON {
				fmt.Fprintln(e.stderr, "Measuring the ciphers on this CPU, then a write through vaultui's write path (under 3 seconds)...")
			}
			rep, err := sp.Run(e.ctx, d, nil)
			if err != nil {
				return fmt.Errorf("speed test interrupted: %w", err)
			}
			rec := rep.Recommend()
			if *asJSON {
				return writeJSON(e.stdout, speedJSON(rep, rec))
			}
			for _, r := range rep.Ciphers {
				fmt.Fprintln(e.stdout, formatSpeed(r))
			}
			if rec.Cipher == "" {
				return errors.New("no cipher could be measured")
			}
			// What a user reads first, then how it was measured for one who reads on.
			fmt.Fprintf(e.stdout, "\nRecommended: %s\n", rec.Cipher)
			for _, l := range rec.Lines() {
				fmt.Fprintln(e.stdout, l)
			}
			fmt.Fprintln(e.stdout, "\nDetails:")
			for _, l := range rec.Details() {
				fmt.Fprintf(e.stdout, "  %s\n", l)
			}
			return nil
		}
	},
}

// speedTest is the speed test use case, with its cache.
func (e *env) speedTest() *app.Speed {
	if e.speed == nil {
		e.speed = app.NewSpeed()
	}
	return e.speed
}

// autoCipher is "init --cipher auto": the recommendation of the remembered speed test, or of
// one run now, with the write measured in dir (where the vault goes). It says on stderr what
// it chose, from which test, and what the choice gains and costs.
func (e *env) autoCipher(dir string) (crypto.CipherID, error) {
	sp := e.speedTest()
	if _, ok := sp.Cached(dir); !ok {
		fmt.Fprintln(e.stderr, "Measuring the ciphers to choose one (--cipher auto, under 3 seconds)...")
	}
	rep, err := sp.ForNewVault(e.ctx, dir, nil)
	if err != nil {
		return "", fmt.Errorf("speed test interrupted: %w", err)
	}
	rec := rep.Recommend()
	if rec.Cipher == "" {
		return "", errors.New("the speed test did not recommend a cipher; choose one with --cipher")
	}
	from := "measured now"
	if rep.Cached {
		from = "speed test of " + rep.Measured.Local().Format(time.DateTime) + `; "vaultui speed" measures again`
	}
	fmt.Fprintf(e.stderr, "Using %s (%s):\n", rec.Cipher, from)
	for _, l := range rec.Lines() {
		fmt.Fprintf(e.stderr, "  %s\n", l)
	}
	return rec.Cipher, nil
}

func formatSpeed(r app.CipherSpeed) string {
	if r.Err != nil {
		return fmt.Sprintf("%-20s unavailable: %s", r.Cipher, app.OneLine(r.Err.Error()))
	}
	f := r.Figure()
	line := fmt.Sprintf("%-20s %8.0f MB/s", r.Cipher, f.Median)
	if f.N > 1 {
		line += fmt.Sprintf("  (%.0f to %.0f over %d rounds)", f.Min, f.Max, f.N)
	}
	if impl := r.Implementation; impl != "" {
		line += "  " + impl
	}
	return line
}

// The shape of "speed --json": stable for scripts.
type speedResultJSON struct {
	Cipher         string   `json:"cipher"` // crypto.CipherID, e.g. "aegis"
	Name           string   `json:"name"`   // e.g. "AEGIS-256X2"
	MBps           float64  `json:"mbps"`   // median of the rounds
	Range          rangeOf  `json:"range"`
	Implementation string   `json:"implementation,omitempty"` // AEGIS: e.g. "VAES-512"
	OpensIn        []string `json:"opens_in"`
	Error          string   `json:"error,omitempty"`
}

// rangeOf is a Figure's extent: its median is the field it qualifies.
type rangeOf struct {
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Rounds int     `json:"rounds"`
}

func rangeJSON(f app.Figure) rangeOf { return rangeOf{Min: f.Min, Max: f.Max, Rounds: f.N} }

type speedWriteJSON struct {
	Dir             string  `json:"dir"`
	FSType          string  `json:"fstype"`
	Cipher          string  `json:"cipher"`
	Baseline        string  `json:"baseline"`
	BytesPerRound   int64   `json:"bytes_per_round"`
	Ratio           float64 `json:"ratio"`
	RatioRange      rangeOf `json:"ratio_range"`
	MBps            float64 `json:"mbps"`
	BaselineMBps    float64 `json:"baseline_mbps"`
	CPUSavedPerGiBs float64 `json:"cpu_seconds_saved_per_gib"`
	Error           string  `json:"error,omitempty"`
}

type speedReportJSON struct {
	AESInstructions bool              `json:"aes_instructions"`
	Results         []speedResultJSON `json:"results"`
	Write           *speedWriteJSON   `json:"write,omitempty"`
	Recommendation  struct {
		Cipher     string   `json:"cipher"`
		Name       string   `json:"name"`
		Reason     string   `json:"reason"`
		Method     string   `json:"method,omitempty"`
		Gain       string   `json:"gain,omitempty"`
		Cost       string   `json:"cost"`
		Ratio      float64  `json:"ratio_to_aes_gcm"`
		RatioRange rangeOf  `json:"ratio_range"`
		OpensIn    []string `json:"opens_in"`
	} `json:"recommendation"`
}

func speedJSON(rep app.SpeedReport, rec app.Recommendation) speedReportJSON {
	out := speedReportJSON{AESInstructions: rep.HasAES, Results: []speedResultJSON{}}
	for _, r := range rep.Ciphers {
		j := speedResultJSON{Cipher: string(r.Cipher), Name: r.Cipher.String(), MBps: r.MBps,
			Range: rangeJSON(r.Figure()), Implementation: r.Implementation, OpensIn: app.OpensIn(r.Cipher).Programs}
		if r.Err != nil {
			j.Error = r.Err.Error()
		}
		out.Results = append(out.Results, j)
	}
	if w := rep.Write; w != nil {
		ratio := w.Ratio()
		mb, base := w.MBps()
		out.Write = &speedWriteJSON{Dir: w.Dir, FSType: w.FSType, Cipher: string(w.Cipher), Baseline: string(w.Baseline),
			BytesPerRound: w.Bytes, Ratio: ratio.Median, RatioRange: rangeJSON(ratio), MBps: mb, BaselineMBps: base,
			CPUSavedPerGiBs: w.CPUSavedPerGiB().Median}
		if w.Err != nil {
			out.Write.Error = w.Err.Error()
		}
	}
	r := &out.Recommendation
	r.Cipher = string(rec.Cipher)
	if rec.Cipher != "" {
		r.Name = rec.Cipher.String()
		r.OpensIn = app.OpensIn(rec.Cipher).Programs
	}
	r.Reason, r.Method, r.Gain, r.Cost = rec.Gain, rec.Method, rec.Write, rec.Cost
	r.Ratio, r.RatioRange = rec.Ratio.Median, rangeJSON(rec.Ratio)
	return out
}
