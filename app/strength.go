package app

import (
	"slices"
	"unicode/utf8"

	zxcvbn "github.com/ccojocar/zxcvbn-go"
)

// PasswordStrength is how hard a new password is to guess, as zxcvbn rates it: it knows
// common passwords, words and names, keyboard rows, repeats, sequences, dates and l33t
// spellings, which counting character classes does not ("password123" has letters and
// digits, and is among the first guesses of any attacker). It is an estimate, and says so.
type PasswordStrength struct {
	// Score is zxcvbn's: 0 (guessed at once) to 4 (out of reach of a determined attacker).
	Score int
	// Label is what a user reads: weak (0 and 1), fair (2), good (3), strong (4); "" for
	// no password.
	Label string
	// Why names the pattern that makes a password below strong guessable ("a common
	// password", "a keyboard pattern"); "" when strong or when nothing stands out.
	Why string
}

// rateMaxBytes bounds what is rated: zxcvbn's time grows much faster than the length (a
// 200-byte password takes seconds), and the rating runs on every key typed. A longer
// password is rated on its first rateMaxBytes, a lower bound of what the whole one costs
// an attacker.
const rateMaxBytes = 64

// RatePassword rates a password being set. related are words the user typed nearby (the
// vault's name, its folder's name): a password made of them is no secret. Both front ends
// rate with this, the TUI as the password is typed and the CLI after its prompt.
func RatePassword(pw string, related ...string) PasswordStrength {
	if pw == "" {
		return PasswordStrength{}
	}
	if len(pw) > rateMaxBytes {
		cut := rateMaxBytes
		for cut > 0 && !utf8.RuneStart(pw[cut]) {
			cut--
		}
		pw = pw[:cut]
	}
	res := zxcvbn.PasswordStrength(pw, nonEmpty(slices.Clone(related)...))
	s := PasswordStrength{Score: res.Score, Label: [...]string{"weak", "weak", "fair", "good", "strong"}[min(max(res.Score, 0), 4)]}
	if s.Score < 4 {
		// The longest pattern found is what gives the password away.
		longest := 0
		for _, m := range res.MatchSequence {
			why := patternWhy(m.Pattern, m.DictionaryName)
			if n := m.J - m.I + 1; why != "" && n > longest {
				longest, s.Why = n, why
			}
		}
		if s.Why == "" && s.Score <= 1 {
			s.Why = "too short"
		}
	}
	return s
}

// patternWhy says in a few words what a zxcvbn match is.
func patternWhy(pattern, dictionary string) string {
	switch pattern {
	case "dictionary", "l33t":
		switch dictionary {
		case "user_inputs":
			return "made of the vault's name"
		case "Passwords":
			return "a common password"
		case "English":
			return "a common word"
		}
		return "a common name"
	case "spatial":
		return "a keyboard pattern"
	case "repeat":
		return "a repeated pattern"
	case "sequence":
		return "a sequence like abc or 123"
	case "date":
		return "a date"
	}
	return ""
}

// String is the rating in a few words for both front ends: "weak, a common password",
// "strong (an estimate)"; "" for no password.
func (s PasswordStrength) String() string {
	switch {
	case s.Label == "":
		return ""
	case s.Why != "":
		return s.Label + ", " + s.Why
	}
	return s.Label + " (an estimate)"
}
