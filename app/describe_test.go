package app

import (
	"strings"
	"testing"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault"
	"github.com/vaultui/vaultui/vault/format"
)

// TestDescribe: one description of a vault for both front ends, its text escaped.
func TestDescribe(t *testing.T) {
	facts := Describe(vault.Info{Cipher: crypto.AESGCM, CipherName: "AES-256-GCM", Version: 2, Creator: "x\x1b]0;owned\x07", PlaintextNames: true,
		ScryptLogN: 16, ScryptR: 8, ScryptP: 1, ScryptKeyLen: 32, ScryptSaltLen: 32, ConfigConflicts: []string{"gocryptfs (conflict).conf"}})
	got := map[string]string{}
	for _, f := range facts {
		got[f.Label] = f.Value
	}
	if got["Format"] != "gocryptfs v2" || !strings.Contains(got["Opens in"], "gocryptfs") || got["File names"] != "plaintext (not encrypted)" || got["Long names"] != "off" ||
		!strings.HasPrefix(got["Scrypt"], "N=2^16 r=8 p=1") || !strings.Contains(got["Config conflict"], "gocryptfs (conflict).conf") {
		t.Fatalf("%q", got)
	}
	for _, f := range Describe(vault.Info{Cipher: crypto.AEGIS, CipherName: "AEGIS-256X2", Version: 2}) {
		if f.Label == "Format" && !strings.Contains(f.Value, "opens only in vaultui") {
			t.Errorf("an AEGIS vault's format says %q", f.Value)
		}
	}
	if strings.ContainsAny(got["Creator"], "\x1b\x07") {
		t.Fatalf("creator not escaped: %q", got["Creator"])
	}
}

// TestFindingOf: the block range and the encrypted name are written once, escaped.
func TestFindingOf(t *testing.T) {
	evil := "a\x1b[31mb\u202ec"
	f := FindingOf(vault.Problem{Path: evil, Kind: format.KindContent, Detail: "bad \x07", FirstBlock: 3, LastBlock: 5, CipherPath: "x\x1by"})
	line := f.String()
	if strings.ContainsAny(line, "\x1b\x07\u202e") || !strings.Contains(line, `a\x1b[31mb\u202ec`) || !strings.Contains(line, `[encrypted: x\x1by]`) ||
		!strings.Contains(line, "(blocks 3-5)") || !f.Damage {
		t.Errorf("fsck line %q", line)
	}
	if f := FindingOf(vault.Problem{Path: "p", Kind: format.KindContent, Detail: "bad", FirstBlock: 1, LastBlock: 1}); f.What != "bad (block 1)" || f.CipherPath != "" {
		t.Errorf("one block: %+v", f)
	}
	if f := FindingOf(vault.Problem{CipherPath: "abc", Kind: format.KindName, FirstBlock: -1, LastBlock: -1}); f.Where != "abc" || f.String() != "abc: "+format.KindName {
		t.Errorf("no plaintext name: %+v", f)
	}
}

// TestChoices: a folder made twice is only merged; other copies have all three choices.
func TestChoices(t *testing.T) {
	if c := Choices(vault.ConflictEntry{Kind: vault.ConflictFolderMadeTwice}); len(c) != 1 || c[0] != vault.KeepBoth {
		t.Fatalf("folder made twice: %v", c)
	}
	if c := Choices(vault.ConflictEntry{}); len(c) != 3 {
		t.Fatalf("a copy: %v", c)
	}
}
