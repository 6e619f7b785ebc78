package app

import (
	"strings"
	"testing"
	"time"
)

// The hand-written meter this replaces counted character classes: it rated these fair or
// strong (~57, ~83 and ~94 bits). A user who picks one of them must be told it is weak.
func TestRatePasswordWeak(t *testing.T) {
	for _, pw := range []string{"password123", "qwertyuiop123456", strings.Repeat("a", 20), "abc"} {
		r := RatePassword(pw)
		if r.Score > 1 || r.Label != "weak" {
			t.Errorf("RatePassword(%q) = %+v, want score <= 1, weak", pw, r)
		}
		if r.Why == "" {
			t.Errorf("RatePassword(%q) says no reason for being weak", pw)
		}
	}
}

// Four words drawn from a 7,776-word list (EFF's long list, as diceware) are strong.
func TestRatePasswordPassphrase(t *testing.T) {
	for _, pw := range []string{"stump tidal cradle lurk", "gravy unbent sizzle outlast"} {
		if r := RatePassword(pw); r.Score != 4 || r.Label != "strong" || r.Why != "" {
			t.Errorf("RatePassword(%q) = %+v, want 4, strong, no reason", pw, r)
		}
	}
}

// Words the user has just typed elsewhere (the vault's name) are no secret.
func TestRatePasswordRelated(t *testing.T) {
	pw := "Kestrelvault2024"
	alone, related := RatePassword(pw), RatePassword(pw, "kestrelvault")
	if related.Score >= alone.Score {
		t.Errorf("the vault's name in the password did not lower its score: %+v alone, %+v with the name", alone, related)
	}
}

func TestRatePasswordEmpty(t *testing.T) {
	if r := RatePassword(""); r != (PasswordStrength{}) {
		t.Errorf("RatePassword(\"\") = %+v, want nothing", r)
	}
}

// The rating runs on every key typed; zxcvbn's time grows fast with the length, so a long
// password (the CLI reads up to 4096 bytes) must still be rated at once.
func TestRatePasswordLongIsQuick(t *testing.T) {
	start := time.Now()
	r := RatePassword(variedPassword(4000))
	if d := time.Since(start); d > time.Second {
		t.Errorf("rating a 4000-byte password took %v", d)
	}
	if r.Label != "strong" {
		t.Errorf("a long varied password is %+v", r)
	}
	if r := RatePassword(strings.Repeat("password", 500)); r.Label != "weak" {
		t.Errorf("a long repeated pattern is %+v", r)
	}
}

// variedPassword is n bytes that repeat no pattern zxcvbn knows.
func variedPassword(n int) string {
	const chars = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789!#%&*+-=?@"
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = chars[x%uint32(len(chars))]
	}
	return string(b)
}

// One line for both front ends: what gives the password away, or that it is an estimate.
func TestPasswordStrengthString(t *testing.T) {
	for pw, want := range map[string]string{
		"":                        "",
		"password123":             "weak, a common password",
		"stump tidal cradle lurk": "strong (an estimate)",
	} {
		if got := RatePassword(pw).String(); got != want {
			t.Errorf("RatePassword(%q).String() = %q, want %q", pw, got, want)
		}
	}
}
