package app

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vaultui/vaultui/crypto"
)

// Recommendation is the cipher the speed test suggests for new vaults, in the words every
// front end shows as they are: a line of what it gains and one of what it costs first, and
// the details (how it was measured, how noisy, who else opens it) for a user who asks.
type Recommendation struct {
	Cipher crypto.CipherID // "" when nothing could be measured
	// Ratio is Cipher's speed relative to AES-256-GCM for the cipher alone (zero Figure when
	// unknown).
	Ratio Figure
	// Gain is one line: why this cipher, with its ratio as SpeedReport.Times writes it.
	Gain string
	// Cost is one line: who opens a vault with it ("... opens only in vaultui.").
	Cost string
	// Method says how the ratio was measured and how far to trust it (rounds, spread).
	Method string
	// Write says what a mount gains: the write through the write path on the folder
	// measured, with the CPU time saved. "" while not measured.
	Write string
	// Compat says who cannot open such a vault and why, and the way out when it matters.
	Compat string
}

// Lines returns Gain and Cost, what a front end shows first.
func (r Recommendation) Lines() []string { return nonEmpty(r.Gain, r.Cost) }

// Details returns Method, Write and Compat, what a front end shows on request.
func (r Recommendation) Details() []string { return nonEmpty(r.Method, r.Write, r.Compat) }

func nonEmpty(ss ...string) []string {
	return slices.DeleteFunc(ss, func(s string) bool { return s == "" })
}

// Times is cipher c's speed relative to AES-256-GCM as every front end writes it ("3.6x"),
// from the per-round ratios (Ratio); "" when unknown. The speed screen's column, the
// wizard's list and the recommendation's Gain all print this, so one measurement reads
// the same everywhere.
func (r *SpeedReport) Times(c crypto.CipherID) string {
	f := r.Ratio(c)
	if f.N == 0 {
		return ""
	}
	return x(f.Median)
}

// Recommend picks the cipher for new vaults: AEGIS-256X2 when the CPU has AES instructions
// and AEGIS was faster than AES-256-GCM in every round (its cost is compatibility, so a tie
// or a doubt goes to AES-256-GCM); AES-256-GCM when the CPU has AES instructions otherwise;
// XChaCha20-Poly1305 when it has none (software AES is slow and leaks timing).
func (r *SpeedReport) Recommend() Recommendation {
	ok := func(c crypto.CipherID) bool {
		x, found := r.Result(c)
		return found && x.Err == nil && len(x.Samples) > 0
	}
	var rec Recommendation
	switch aegis := r.Ratio(crypto.AEGIS); {
	case !r.HasAES:
		rec = Recommendation{Cipher: crypto.XChaCha, Ratio: r.Ratio(crypto.XChaCha),
			Gain: "This CPU has no AES instructions: XChaCha20-Poly1305 is fast and constant-time in software."}
		if t := r.Times(crypto.XChaCha); t != "" {
			rec.Gain = "This CPU has no AES instructions: XChaCha20-Poly1305 is " + t + " as fast as AES-256-GCM here."
		}
	case ok(crypto.AEGIS) && !ok(crypto.AESGCM):
		rec = Recommendation{Cipher: crypto.AEGIS,
			Gain: "AEGIS-256X2 works on this CPU and AES-256-GCM could not be measured."}
	case ok(crypto.AEGIS) && aegis.Min > 1:
		rec = Recommendation{Cipher: crypto.AEGIS, Ratio: aegis,
			Gain: "AEGIS-256X2 is " + r.Times(crypto.AEGIS) + " as fast as AES-256-GCM on this CPU."}
	case ok(crypto.AEGIS):
		rec = Recommendation{Cipher: crypto.AESGCM, Ratio: Figure{Median: 1, Min: 1, Max: 1, N: aegis.N},
			Gain: "AEGIS-256X2 was not faster than AES-256-GCM in every round on this CPU (" + r.Times(crypto.AEGIS) + ")."}
	case ok(crypto.AESGCM):
		rec = Recommendation{Cipher: crypto.AESGCM, Ratio: Figure{Median: 1, Min: 1, Max: 1, N: 1},
			Gain: "This CPU has AES instructions and AEGIS-256X2 could not be measured."}
	default:
		return Recommendation{Gain: "No cipher could be measured."}
	}
	rec.Method = r.method()
	rec.Write = r.gain(rec.Cipher)
	rec.Cost, rec.Compat = cost(rec.Cipher)
	return rec
}

// method says how the ratios were measured: each cipher against AES-256-GCM in the same
// round, the median of the rounds with half their range as the noise.
func (r *SpeedReport) method() string {
	var parts []string
	for _, c := range r.Ciphers {
		if f := r.Ratio(c.Cipher); f.N > 0 && c.Cipher != crypto.AESGCM {
			parts = append(parts, c.Cipher.String()+" "+f.Ratio())
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "Each cipher encrypted 4 KiB blocks on one core in short interleaved rounds, against AES-256-GCM in the same round: " +
		strings.Join(parts, ", ") + ". AEGIS-256X2 is chosen only when it was faster in every round."
}

// gain describes the write through the write path: the mount-level ratio next to the cipher's
// own, and the CPU time per GiB saved.
func (r *SpeedReport) gain(rec crypto.CipherID) string {
	w := r.Write
	if w == nil || r.Writing {
		return ""
	}
	where := Tilde(w.Dir)
	if w.FSType != "" {
		where += " (" + w.FSType + ")"
	}
	if w.Err != nil {
		return fmt.Sprintf("The write through vaultui's write path to %s could not be measured: %v.", where, w.Err)
	}
	ratio := w.Ratio()
	if ratio.N == 0 {
		return ""
	}
	s := fmt.Sprintf("On %s, through vaultui's write path (%d MiB encrypted, written and synced; no FUSE), %s %s %s as fast as %s",
		where, w.Bytes>>20, w.Cipher, map[bool]string{true: "writes", false: "would write"}[w.Cipher == rec], ratio.Ratio(), w.Baseline)
	if alone := r.Ratio(w.Cipher); alone.N > 0 {
		s += ", against " + r.Times(w.Cipher) + " for the cipher alone"
		if alone.Median >= 1.5 && ratio.Median < 1.2 {
			s += ": the disk decides, not the cipher"
		}
	}
	switch cpu := w.CPUSavedPerGiB().Median; {
	case cpu >= 0.005:
		s += fmt.Sprintf(". %s saves %.2f s of CPU per GiB written", w.Cipher, cpu)
	case cpu <= -0.005:
		s += fmt.Sprintf(". %s costs %.2f s more CPU per GiB written", w.Cipher, -cpu)
	}
	return s + "."
}

// cost says in a line who opens a vault with cipher c, and in full who cannot and why, with
// what to choose instead for a vault only vaultui opens.
func cost(c crypto.CipherID) (line, full string) {
	cp := OpensIn(c)
	if full = cp.Sentence(); full == cp.Line() {
		full = ""
	}
	if cp.VaultuiOnly() {
		full += " Choose " + crypto.AESGCM.String() + " for a vault that must open in gocryptfs, cppcryptfs, DroidFS or SiriKali."
	}
	return cp.Line(), full
}

// Tilde writes a path under the home directory with ~, as people read it.
func Tilde(p string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" || home == "/" {
		return p
	}
	if rel, err := filepath.Rel(home, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		if rel == "." {
			return "~"
		}
		return "~/" + rel
	}
	return p
}
