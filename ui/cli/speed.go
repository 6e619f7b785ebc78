package cli

import (
	"flag"
	"fmt"

	"github.com/vaultui/vaultui/crypto"
)

var speedCommand = &command{
	name:    "speed",
	group:   groupOther,
	summary: "Measure every content cipher on this CPU and recommend one",
	args:    "[--json]",
	help: `Encrypts 4 KiB blocks, as a mounted vault does, with each cipher for a
moment (under 3 seconds in all) and prints MB/s as each result arrives, then
the recommendation: AEGIS-256X2 when the CPU has AES instructions and AEGIS
is faster than AES-256-GCM; AES-256-GCM when it is not; XChaCha20-Poly1305
when the CPU has no AES instructions. "vaultui init --cipher auto" uses it.

examples:
  vaultui speed
  vaultui speed --json`,
	setup: func(fs *flag.FlagSet) runFunc {
		asJSON := fs.Bool("json", false, "print JSON once every cipher is measured")
		return func(e *env, args []string) error {
			if len(args) != 0 {
				return e.usage("takes no arguments, got %d", len(args))
			}
			var report func(crypto.SpeedResult)
			if !*asJSON {
				report = func(r crypto.SpeedResult) { fmt.Fprintln(e.stdout, formatSpeed(r)) }
			}
			results, rec := crypto.SpeedTest(e.ctx, report)
			if err := e.ctx.Err(); err != nil {
				return fmt.Errorf("speed test interrupted: %w", err)
			}
			if *asJSON {
				return writeJSON(e.stdout, speedJSON(results, rec))
			}
			if rec.Cipher == "" {
				return fmt.Errorf("no cipher could be measured")
			}
			fmt.Fprintf(e.stdout, "\nRecommended: %s. %s\n", rec.Cipher, rec.Reason)
			return nil
		}
	},
}

func formatSpeed(r crypto.SpeedResult) string {
	if r.Err != nil {
		return fmt.Sprintf("%-20s unavailable: %s", r.Cipher, oneLine(r.Err.Error()))
	}
	line := fmt.Sprintf("%-20s %8.0f MB/s", r.Cipher, r.MBps)
	if impl := r.Implementation; impl != "" {
		line += "  (" + impl + ")"
	}
	return line
}

// The shape of "speed --json": stable for scripts.
type speedResultJSON struct {
	Cipher         string  `json:"cipher"` // crypto.CipherID, e.g. "aegis"
	Name           string  `json:"name"`   // e.g. "AEGIS-256X2"
	MBps           float64 `json:"mbps"`
	Implementation string  `json:"implementation,omitempty"` // AEGIS: e.g. "VAES-512"
	Error          string  `json:"error,omitempty"`
}

type speedReportJSON struct {
	AESInstructions bool              `json:"aes_instructions"`
	Results         []speedResultJSON `json:"results"`
	Recommendation  struct {
		Cipher string  `json:"cipher"`
		Name   string  `json:"name"`
		Reason string  `json:"reason"`
		Ratio  float64 `json:"ratio_to_aes_gcm"`
	} `json:"recommendation"`
}

func speedJSON(results []crypto.SpeedResult, rec crypto.Recommendation) speedReportJSON {
	out := speedReportJSON{AESInstructions: crypto.HasAESInstructions(), Results: []speedResultJSON{}}
	for _, r := range results {
		j := speedResultJSON{Cipher: string(r.Cipher), Name: r.Cipher.String(), MBps: r.MBps,
			Implementation: r.Implementation}
		if r.Err != nil {
			j.Error = r.Err.Error()
		}
		out.Results = append(out.Results, j)
	}
	out.Recommendation.Cipher = string(rec.Cipher)
	if rec.Cipher != "" {
		out.Recommendation.Name = rec.Cipher.String()
	}
	out.Recommendation.Reason = rec.Reason
	out.Recommendation.Ratio = rec.Ratio
	return out
}
