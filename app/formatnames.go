package app

import (
	"strings"

	"github.com/vaultui/vaultui/vault"
)

// vaultFormats are the formats of the vaults vaultui creates, opens and mounts, from the
// table (vault.Formats): all but the reverse view, which is a prepared plaintext folder.
func vaultFormats() []*vault.Format {
	var out []*vault.Format
	for _, f := range vault.Formats() {
		if !f.Can.ReverseView {
			out = append(out, f)
		}
	}
	return out
}

// FormatNames names the vault formats in a sentence, joined by conj ("and", "or"):
// "gocryptfs and Cryptomator". The front ends' presentations of vaultui (help, the man page,
// the terminal app) take it from here, so a format added to the table shows in them.
func FormatNames(conj string) string {
	var names []string
	for _, f := range vaultFormats() {
		names = append(names, f.Name)
	}
	return joinWords(names, conj)
}

// FormatMarkers names the files that make a folder a vault, joined by conj:
// "gocryptfs.conf or vault.cryptomator".
func FormatMarkers(conj string) string {
	var names []string
	for _, f := range vaultFormats() {
		names = append(names, f.Marker)
	}
	return joinWords(names, conj)
}

// joinWords joins words as a sentence does: "a", "a and b", "a, b and c".
func joinWords(words []string, conj string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " " + conj + " " + words[len(words)-1]
}
