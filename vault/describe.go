package vault

import (
	"fmt"
	"strings"
)

// Fact is one labelled line describing a vault, for every front end to show as it likes.
// Values come from files that whoever can write the vault's folder controls: front ends
// escape them.
type Fact struct{ Label, Value string }

// Facts says what the vault's files mean, one fact a line, in its format's terms, then what
// the format cannot hold or do (from its capabilities).
func (i Info) Facts() []Fact {
	f, err := FormatByID(i.FormatID)
	if err != nil {
		return []Fact{{"Format", "unknown (" + i.FormatID + ")"}}
	}
	facts := f.kind.describe(i)
	if missing := f.missing(); missing != "" {
		facts = append(facts, Fact{"Not supported", missing})
	}
	return facts
}

// missing lists what the format cannot hold or do, from its capabilities, for Facts.
func (f *Format) missing() string {
	var holds []string
	for _, c := range []struct {
		can  bool
		what string
	}{{f.Can.HardLinks, "hard links"}, {f.Can.SpecialFiles, "special files"}, {f.Can.Xattrs, "extended attributes"}} {
		if !c.can {
			holds = append(holds, c.what)
		}
	}
	if len(holds) == 0 || !f.Can.Mount {
		return ""
	}
	return listed(holds) + " (the format has none)"
}

// scryptFact is the scrypt line every format has.
func scryptFact(i Info) Fact {
	return Fact{"Scrypt", fmt.Sprintf("N=2^%d r=%d p=%d (key %d bytes, salt %d bytes)", i.ScryptLogN, i.ScryptR, i.ScryptP, i.ScryptKeyLen, i.ScryptSaltLen)}
}

// VaultuiOnly reports whether only vaultui opens the vault.
func (c Compat) VaultuiOnly() bool { return len(c.Programs) == 1 }

// List is Programs as a sentence's list: "vaultui, gocryptfs and DroidFS (Android)".
func (c Compat) List() string {
	if len(c.Programs) == 0 {
		return "no program"
	}
	return listed(c.Programs)
}

// listed joins words as a sentence's list: "a", "a and b", "a, b and c".
func listed(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// Detail is what "info" shows: the programs, and who cannot open it and why.
func (c Compat) Detail() string {
	s := c.List()
	if c.VaultuiOnly() {
		s += " only"
	}
	if c.Others != "" {
		s += " (" + c.Others + ")"
	}
	return s
}

// Line says it in a line: "A vault with AEGIS-256X2 opens only in vaultui." (Sentence adds who
// cannot open it and why).
func (c Compat) Line() string {
	if c.VaultuiOnly() {
		return c.Subject + " opens only in vaultui."
	}
	return c.Subject + " opens in " + c.List() + "."
}

// Sentence says it in full: "A vault with AES-256-GCM opens in vaultui, gocryptfs, ...".
func (c Compat) Sentence() string {
	if c.VaultuiOnly() {
		return c.Subject + " opens only in vaultui: " + c.Others + "."
	}
	s := c.Subject + " opens in " + c.List()
	if c.Others != "" {
		s += "; " + c.Others
	}
	return s + "."
}
