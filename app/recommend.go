package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/vaultui/vaultui/crypto"
)

// Recommendation is the cipher the speed test suggests for new vaults, with what it gains
// and what it costs, in sentences every front end shows as they are.
type Recommendation struct {
	Cipher crypto.CipherID // "" when nothing could be measured
	// Ratio is Cipher's speed relative to AES-256-GCM for the cipher alone (zero Figure when
	// unknown).
	Ratio Figure
	// Reason says why this cipher, from the cipher figures.
	Reason string
	// Gain says what a mount gains: the write through the write path on the folder measured,
	// with the CPU time saved. "" while not measured.
	Gain string
	// Cost says who can open a vault with it (see OpensIn), and the way out when it matters.
	Cost string
}

// Lines returns Reason, Gain and Cost, leaving out what is empty.
func (r Recommendation) Lines() []string {
	var out []string
	for _, s := range []string{r.Reason, r.Gain, r.Cost} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
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
			Reason: "This CPU has no AES instructions: XChaCha20-Poly1305 is fast and constant-time in software"}
		if rec.Ratio.N > 0 {
			rec.Reason += fmt.Sprintf(" (%s AES-256-GCM's speed here)", rec.Ratio.Ratio())
		}
		rec.Reason += "."
	case ok(crypto.AEGIS) && !ok(crypto.AESGCM):
		rec = Recommendation{Cipher: crypto.AEGIS,
			Reason: "AEGIS-256X2 works on this CPU and AES-256-GCM could not be measured."}
	case ok(crypto.AEGIS) && aegis.Min > 1:
		rec = Recommendation{Cipher: crypto.AEGIS, Ratio: aegis,
			Reason: fmt.Sprintf("For the cipher alone, AEGIS-256X2 is %s as fast as AES-256-GCM on this CPU.", aegis.Ratio())}
	case ok(crypto.AEGIS):
		rec = Recommendation{Cipher: crypto.AESGCM, Ratio: Figure{Median: 1, Min: 1, Max: 1, N: aegis.N},
			Reason: fmt.Sprintf("AEGIS-256X2 was not faster than AES-256-GCM in every round on this CPU: %s.", aegis.Ratio())}
	case ok(crypto.AESGCM):
		rec = Recommendation{Cipher: crypto.AESGCM, Ratio: Figure{Median: 1, Min: 1, Max: 1, N: 1},
			Reason: "This CPU has AES instructions and AEGIS-256X2 could not be measured."}
	default:
		return Recommendation{Reason: "No cipher could be measured."}
	}
	rec.Gain = r.gain(rec.Cipher)
	rec.Cost = cost(rec.Cipher)
	return rec
}

// gain describes the write through the write path: the mount-level ratio next to the cipher's
// own, and the CPU time per GiB saved.
func (r *SpeedReport) gain(rec crypto.CipherID) string {
	w := r.Write
	if w == nil || r.Writing {
		return ""
	}
	where := tilde(w.Dir)
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
		s += fmt.Sprintf(", against %s for the cipher alone", x(alone.Median))
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

// cost says who opens a vault with cipher c, and for a vault only vaultui opens, what to
// choose instead.
func cost(c crypto.CipherID) string {
	cp := OpensIn(c)
	if cp.VaultuiOnly() {
		return "Cost: " + lowerFirst(cp.Sentence()) + " Choose " + crypto.AESGCM.String() +
			" for a vault that must open in gocryptfs, cppcryptfs, DroidFS or SiriKali."
	}
	return cp.Sentence()
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// tilde writes a path under the home directory with ~, as people read it.
func tilde(p string) string {
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
