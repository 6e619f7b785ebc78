package app

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault"
)

func report(hasAES bool, aegis, gcm, xchacha []float64, aegisErr error) SpeedReport {
	return SpeedReport{HasAES: hasAES, Ciphers: []CipherSpeed{
		{Cipher: crypto.AEGIS, Samples: aegis, Err: aegisErr},
		{Cipher: crypto.AESGCM, Samples: gcm},
		{Cipher: crypto.XChaCha, Samples: xchacha},
		{Cipher: crypto.AESSIV, Samples: []float64{100, 100, 100}},
	}}
}

// TestRecommend: the choice, and that its text names the figure with its spread and who
// opens a vault with it.
func TestRecommend(t *testing.T) {
	three := func(v float64) []float64 { return []float64{v, v, v} }
	for _, c := range []struct {
		name string
		r    SpeedReport
		want crypto.CipherID
		text []string
	}{
		{"aegis faster", report(true, []float64{6200, 6000, 6400}, three(2000), three(900), nil), crypto.AEGIS,
			[]string{"3.1x as fast as AES-256-GCM", "3.1x ±3% (median of 3 rounds)", "opens only in vaultui",
				`Unknown feature flag "AEGIS256X2"`, "cppcryptfs (Windows)", "DroidFS (Android)", "Choose AES-256-GCM"}},
		{"aegis slower", report(true, three(1500), three(2000), three(900), nil), crypto.AESGCM,
			[]string{"not faster", "0.75x", "opens in vaultui, gocryptfs, cppcryptfs (Windows), DroidFS (Android) and SiriKali"}},
		// Faster in the median but not in every round: the doubt goes to compatibility.
		{"aegis in doubt", report(true, []float64{2400, 1900, 2400}, three(2000), three(900), nil), crypto.AESGCM,
			[]string{"not faster than AES-256-GCM in every round", "gocryptfs"}},
		{"aegis failed", report(true, nil, three(2000), three(900), errors.New("boom")), crypto.AESGCM,
			[]string{"could not be measured", "SiriKali (via gocryptfs)"}},
		{"no aes", report(false, three(300), three(200), three(900), nil), crypto.XChaCha,
			[]string{"no AES instructions", "4.5x", "opens in vaultui and gocryptfs 2.2 or later"}},
	} {
		rec := c.r.Recommend()
		text := strings.Join(append(rec.Lines(), rec.Details()...), "\n")
		if rec.Cipher != c.want {
			t.Errorf("%s: recommends %s, want %s", c.name, rec.Cipher, c.want)
		}
		for _, s := range c.text {
			if !strings.Contains(text, s) {
				t.Errorf("%s: text lacks %q:\n%s", c.name, s, text)
			}
		}
	}
}

// TestRecommendInTwoLines: a user first reads one line of gain, with the ratio as Times
// writes it, and one of cost; the rounds and the noise wait in the details.
func TestRecommendInTwoLines(t *testing.T) {
	// Ratios of the rounds 3.2, 3.6, 3.9: median 3.6, while the medians' ratio is 3.9.
	r := report(true, []float64{6400, 7200, 7800}, []float64{2000, 2000, 2000}, []float64{900, 900, 900}, nil)
	r.Ciphers[1].Samples = []float64{2000, 2000, 2000}
	r.Ciphers[0].MBps, r.Ciphers[1].MBps = 7800, 2000
	if got := r.Times(crypto.AEGIS); got != "3.6x" {
		t.Fatalf("Times = %q, want 3.6x (the median of the rounds' ratios)", got)
	}
	rec := r.Recommend()
	lines := rec.Lines()
	if len(lines) != 2 || lines[0] != "AEGIS-256X2 is 3.6x as fast as AES-256-GCM on this CPU." ||
		lines[1] != "A vault with AEGIS-256X2 opens only in vaultui." {
		t.Fatalf("lines: %q", lines)
	}
	details := strings.Join(rec.Details(), "\n")
	for _, s := range []string{"±", "median of 3 rounds", "faster in every round", "Choose AES-256-GCM"} {
		if !strings.Contains(details, s) {
			t.Errorf("details lack %q:\n%s", s, details)
		}
	}
	if empty := (SpeedReport{}); empty.Times(crypto.AEGIS) != "" {
		t.Error("Times of nothing measured is not empty")
	}
}

// TestRecommendGain: the write-path figure is shown with the cipher-only one, and says when
// the disk decides.
func TestRecommendGain(t *testing.T) {
	ms := time.Millisecond
	r := report(true, []float64{6200, 6000, 6400}, []float64{2000, 2000, 2000}, []float64{900, 900, 900}, nil)
	disk := &WriteSpeed{Dir: "/srv/v", FSType: "ext4", Cipher: crypto.AEGIS, Baseline: crypto.AESGCM, Bytes: 32 << 20,
		Rounds: []WriteRound{
			{WriteSample{300 * ms, 10 * ms}, WriteSample{330 * ms, 20 * ms}},
			{WriteSample{300 * ms, 10 * ms}, WriteSample{320 * ms, 20 * ms}},
			{WriteSample{300 * ms, 10 * ms}, WriteSample{340 * ms, 20 * ms}},
		}}
	r.Write = disk
	g := r.Recommend().Write
	for _, s := range []string{"On /srv/v (ext4)", "vaultui's write path", "32 MiB", "1.10x ±3% (median of 3 rounds)",
		"against 3.1x for the cipher alone: the disk decides", "saves 0.32 s of CPU per GiB"} {
		if !strings.Contains(g, s) {
			t.Errorf("gain lacks %q: %s", s, g)
		}
	}
	tmpfs := *disk
	tmpfs.FSType, tmpfs.Rounds = "tmpfs", []WriteRound{{WriteSample{50 * ms, 10 * ms}, WriteSample{100 * ms, 20 * ms}}}
	r.Write = &tmpfs
	if g := r.Recommend().Write; strings.Contains(g, "disk decides") || !strings.Contains(g, "writes 2.0x (1 round)") {
		t.Errorf("tmpfs gain: %s", g)
	}
	// Measured for AEGIS while GCM is recommended: what AEGIS would give.
	slow := report(true, []float64{1900, 1900, 1900}, []float64{2000, 2000, 2000}, nil, nil)
	slow.Write = disk
	if g := slow.Recommend().Write; !strings.Contains(g, "AEGIS-256X2 would write") {
		t.Errorf("gain for a cipher not recommended: %s", g)
	}
	r.Write = &WriteSpeed{Dir: "/srv/v", Cipher: crypto.AEGIS, Baseline: crypto.AESGCM, Err: errors.New("no space")}
	if g := r.Recommend().Write; !strings.Contains(g, "could not be measured: no space") {
		t.Errorf("failed write: %s", g)
	}
}

// TestOpensInEveryCipher: the one table names who opens a vault of each cipher.
func TestOpensInEveryCipher(t *testing.T) {
	want := map[crypto.CipherID]string{
		crypto.AEGIS:   "opens only in vaultui",
		crypto.AESGCM:  "gocryptfs, cppcryptfs (Windows), DroidFS (Android) and SiriKali (via gocryptfs)",
		crypto.XChaCha: "gocryptfs 2.2 or later",
		crypto.AESSIV:  "gocryptfs (its reverse mode's cipher)",
	}
	for _, c := range crypto.Ciphers {
		cp := OpensIn(c)
		if !strings.Contains(cp.Sentence(), want[c]) || cp.Short == "" || cp.Programs[0] != "vaultui" {
			t.Errorf("%s: %+v: %s", c, cp, cp.Sentence())
		}
		if (c == crypto.AEGIS) != cp.VaultuiOnly() {
			t.Errorf("%s: vaultui only %v", c, cp.VaultuiOnly())
		}
	}
	format := func(c crypto.CipherID) string {
		for _, f := range (vault.Info{FormatID: "gocryptfs", Version: 2, Cipher: c}).Facts() {
			if f.Label == "Format" {
				return f.Value
			}
		}
		return ""
	}
	if f := format(crypto.AEGIS); !strings.Contains(f, "AEGIS256X2") || !strings.Contains(f, "only in vaultui") {
		t.Errorf("AEGIS format %q", f)
	}
	if f := format(crypto.AESGCM); f != "gocryptfs v2" {
		t.Errorf("GCM format %q", f)
	}
}
