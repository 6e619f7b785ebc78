package app

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/vaultui/vaultui/internal/termsafe"
	"github.com/vaultui/vaultui/registry"
	"github.com/vaultui/vaultui/vault"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

// Describe says what a vault's files mean, one fact a line, for every front end to show as
// it likes (the CLI's info, the TUI's info screen): vault.Info.Facts, each Value escaped for
// a terminal, since the values come from files whoever can write the vault's folder controls.
func Describe(i vault.Info) []vault.Fact {
	facts := i.Facts()
	for k := range facts {
		facts[k].Value = termsafe.Escape(facts[k].Value)
	}
	return facts
}

// Info reads what a registered vault's files say (vault.Folder.Info): a reverse entry's
// folder must be prepared for reverse mode.
func Info(e registry.Entry) (vault.Info, error) {
	f, err := openEntry(e)
	if err != nil {
		return vault.Info{}, err
	}
	return f.Info()
}

// openEntry opens a registered vault's folder (vault.Open), refusing a reverse entry whose
// folder holds a vault of its own.
func openEntry(e registry.Entry) (*vault.Folder, error) {
	f, err := vault.Open(e.CipherDir)
	if err == nil && e.Reverse && !f.Format.Can.ReverseView {
		return nil, fmt.Errorf("%s: %w: it is a %s vault, not a plaintext folder prepared for reverse mode (%s)", e.CipherDir, vault.ErrNotFound, f.Format.Name, gocryptfs.ReverseConfName)
	}
	return f, err
}

// ReverseView is how every front end names what a reverse vault mounts.
const ReverseView = "reverse: the read-only encrypted view of this plaintext folder"

// EntryFacts are the facts of a registered vault that its config does not hold: for a
// reverse vault, what it mounts and the rules that leave files out of the view.
func EntryFacts(e registry.Entry) []vault.Fact {
	if !e.Reverse {
		return nil
	}
	facts := []vault.Fact{{Label: "View", Value: ReverseView}}
	for _, rule := range e.Exclude {
		facts = append(facts, vault.Fact{Label: "Excluded", Value: termsafe.Escape(rule)})
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
	where := cmp.Or(p.Path, p.CipherPath, ".")
	what := OneLine(p.Detail)
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

// OneLine joins a multi-line text into one line, for a message shown in a list or a table.
func OneLine(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "\n", " ") }
