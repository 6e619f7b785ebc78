package app

import (
	"fmt"
	"strings"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/termsafe"
	"github.com/vaultui/vaultui/registry"
	"github.com/vaultui/vaultui/vault"
)

// Fact is one labelled line describing a vault; Value is escaped for a terminal.
type Fact struct{ Label, Value string }

// Describe says what a vault's config means, one fact a line, for every front end to show
// as it likes (the CLI's info, the TUI's info screen). The values come from the config,
// which whoever can write the cipherdir controls: they are escaped.
func Describe(i vault.Info) []Fact {
	if i.Format != "" {
		return escapeFacts(describeCryptomator(i))
	}
	names := "encrypted (EME, per-directory IV)"
	switch {
	case i.PlaintextNames:
		names = "plaintext (not encrypted)"
	case i.DeterministicNames:
		names = "encrypted (EME, deterministic: no per-directory IV)"
	}
	longNames := "off"
	if i.LongNames {
		longNames = fmt.Sprintf("on: encrypted names over %d bytes are stored hashed", i.LongNameMax)
	}
	hkdf := "no"
	if i.HKDF {
		hkdf = "yes"
	}
	facts := []Fact{
		{"Cipher", i.CipherName},
		{"Opens in", OpensIn(i.Cipher).Detail()},
		{"Format", Format(i.Version, i.Cipher)},
		{"Creator", i.Creator},
		{"File names", names},
		{"Long names", longNames},
		{"HKDF", hkdf},
		{"Scrypt", fmt.Sprintf("N=2^%d r=%d p=%d (key %d bytes, salt %d bytes)", i.ScryptLogN, i.ScryptR, i.ScryptP, i.ScryptKeyLen, i.ScryptSaltLen)},
		{"Feature flags", strings.Join(i.FeatureFlags, " ")},
	}
	for _, c := range i.ConfigConflicts {
		facts = append(facts, Fact{"Config conflict", c + " (a sync tool's copy; this vault uses " + crypto.ConfName + ")"})
	}
	return escapeFacts(facts)
}

// escapeFacts escapes the facts' values for a terminal.
func escapeFacts(facts []Fact) []Fact {
	for k := range facts {
		facts[k].Value = termsafe.Escape(facts[k].Value)
	}
	return facts
}

// describeCryptomator is Describe for a Cryptomator vault (vault.Info.Format set).
func describeCryptomator(i vault.Info) []Fact {
	return []Fact{
		{"Format", i.Format},
		{"Cipher", i.CipherName},
		{"Opens in", OpensIn(CryptomatorVault).Detail()},
		{"File names", "encrypted (AES-SIV, bound to the directory's ID)"},
		{"Long names", fmt.Sprintf("encrypted names over %d characters are stored shortened (.c9s)", i.LongNameMax)},
		{"Scrypt", fmt.Sprintf("N=2^%d r=%d p=%d (key %d bytes, salt %d bytes)", i.ScryptLogN, i.ScryptR, i.ScryptP, i.ScryptKeyLen, i.ScryptSaltLen)},
		{"Not supported", "--sharedstorage; settling copies of folders, symlinks and shortened names; hard links, special files and extended attributes (the format has none)"},
	}
}

// Info reads what a vault's config says: its gocryptfs.conf, or for a reverse vault the
// .gocryptfs.reverse.conf of its plaintext folder (which has no gocryptfs.conf).
func Info(e registry.Entry) (vault.Info, error) {
	if !e.Reverse {
		return vault.ReadInfo(e.CipherDir)
	}
	c, err := vault.LoadReverseConfig(e.CipherDir)
	if err != nil {
		return vault.Info{}, err
	}
	return c.Info(e.CipherDir), nil
}

// ReverseView is how every front end names what a reverse vault mounts.
const ReverseView = "reverse: the read-only encrypted view of this plaintext folder"

// EntryFacts are the facts of a registered vault that its config does not hold: for a
// reverse vault, what it mounts and the rules that leave files out of the view.
func EntryFacts(e registry.Entry) []Fact {
	if !e.Reverse {
		return nil
	}
	facts := []Fact{{"View", ReverseView}}
	for _, rule := range e.Exclude {
		facts = append(facts, Fact{"Excluded", termsafe.Escape(rule)})
	}
	return facts
}

// Finding is one thing fsck found, ready to show: Where names the file (its plaintext path,
// else its path in the cipherdir), What says what is wrong, with the damaged block range.
type Finding struct {
	Where, Kind, What string
	// CipherPath is the file's path in the cipherdir when it differs from Where, else "".
	CipherPath string
	// Damage: not a note (a sync tool's conflict copy, a foreign file) but something broken.
	Damage bool
}

// FindingOf describes one fsck problem. Every text in it is escaped for a terminal.
func FindingOf(p vault.Problem) Finding {
	where := p.Path
	if where == "" {
		where = p.CipherPath
	}
	if where == "" {
		where = "."
	}
	what := oneLine(p.Detail)
	if p.FirstBlock >= 0 && p.LastBlock >= p.FirstBlock {
		if p.FirstBlock == p.LastBlock {
			what += fmt.Sprintf(" (block %d)", p.FirstBlock)
		} else {
			what += fmt.Sprintf(" (blocks %d-%d)", p.FirstBlock, p.LastBlock)
		}
	}
	f := Finding{Where: where, Kind: p.Kind, What: strings.TrimSpace(what), Damage: p.Damage()}
	if p.CipherPath != "" && p.Path != "" && p.CipherPath != p.Path {
		f.CipherPath = p.CipherPath
	}
	f.Where, f.Kind, f.What, f.CipherPath = termsafe.Escape(f.Where), termsafe.Escape(f.Kind), termsafe.Escape(f.What), termsafe.Escape(f.CipherPath)
	return f
}

// String is the finding on one line: "WHERE: KIND: WHAT [encrypted: CIPHERPATH]".
func (f Finding) String() string {
	var b strings.Builder
	b.WriteString(f.Where)
	if f.Kind != "" {
		b.WriteString(": " + f.Kind)
	}
	if f.What != "" {
		b.WriteString(": " + f.What)
	}
	if f.CipherPath != "" {
		b.WriteString(" [encrypted: " + f.CipherPath + "]")
	}
	return b.String()
}

// oneLine joins a multi-line text into one line.
func oneLine(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "\n", " ") }
