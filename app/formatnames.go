package app

import (
	"strings"

	"github.com/vaultui/vaultui/vault"
)

// FormatNames names the vault formats in a sentence, joined by conj ("and", "or"):
// "gocryptfs and Cryptomator". The front ends' presentations of vaultui (help, the man page,
// the terminal app) take it from here, so a format added to the table shows in them.
func FormatNames(conj string) string {
	return formatWords(conj, func(f *vault.Format) string { return f.Name })
}

// FormatMarkers names the files that make a folder a vault, joined by conj:
// "gocryptfs.conf or vault.cryptomator".
func FormatMarkers(conj string) string {
	return formatWords(conj, func(f *vault.Format) string { return f.Marker })
}

// formatWords joins what of says of each format of the vaults vaultui creates, opens and
// mounts (vault.Formats): all but the reverse view, which is a prepared plaintext folder.
func formatWords(conj string, of func(*vault.Format) string) string {
	var words []string
	for _, f := range vault.Formats() {
		if !f.Can.ReverseView {
			words = append(words, of(f))
		}
	}
	return joinWords(words, conj)
}

// joinWords joins words as a sentence does: "a", "a and b", "a, b and c".
func joinWords(words []string, conj string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " " + conj + " " + words[len(words)-1]
}
