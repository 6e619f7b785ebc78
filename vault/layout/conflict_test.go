package layout

import (
	"strings"
	"testing"

	"github.com/vaultui/vaultui/crypto"
)

// Each tool's documented pattern, on a plaintext-like name with an extension, on an encrypted
// name (base64url, no extension), and on a long-name entry, where the tool takes ".HASH" for an
// extension.
func TestParseConflict(t *testing.T) {
	const cipher = "Xk-3aF_q9ZpL0w-bQe1rTg"
	const long = "gocryptfs.longname.ab-CD_ef"
	valid := map[string]bool{"report.odt": true, cipher: true, long: true, "gocryptfs.diriv": true}
	isValid := func(s string) bool { return valid[s] }
	cases := []struct {
		name                   string
		base, tool, date, host string
	}{
		{"report.sync-conflict-20261130-101010-ABCDEF7.odt", "report.odt", "Syncthing", "2026-11-30", "ABCDEF7"},
		{cipher + ".sync-conflict-20261130-101010-ABCDEF7", cipher, "Syncthing", "2026-11-30", "ABCDEF7"},
		{"gocryptfs.longname.sync-conflict-20261130-101010-ABCDEF7.ab-CD_ef", long, "Syncthing", "2026-11-30", "ABCDEF7"},
		{"gocryptfs.sync-conflict-20261130-101010-ABCDEF7.diriv", "gocryptfs.diriv", "Syncthing", "2026-11-30", "ABCDEF7"},
		{"report (Ann's conflicted copy 2026-11-30).odt", "report.odt", "Dropbox", "2026-11-30", "Ann"},
		{cipher + " (conflicted copy 2026-11-30)", cipher, "Dropbox", "2026-11-30", ""},
		{cipher + " (laptop's conflicted copy 2026-11-30 (1))", cipher, "Dropbox", "2026-11-30", "laptop"},
		{"gocryptfs.longname (Ann's conflicted copy 2026-11-30).ab-CD_ef", long, "Dropbox", "2026-11-30", "Ann"},
		{cipher + " (conflicted copy 2026-11-30 101010)", cipher, "Nextcloud", "2026-11-30", ""},
		{"report (conflicted copy ann 2026-11-30 101010).odt", "report.odt", "Nextcloud", "2026-11-30", "ann"},
		{cipher + "_conflict-20261130-101010", cipher, "ownCloud", "2026-11-30", ""},
		{cipher + " (1)", cipher, "Google Drive", "", ""},
		{"report (2).odt", "report.odt", "Google Drive", "", ""},
		{cipher + "-DESKTOP-4F2K", cipher, "OneDrive", "", "DESKTOP-4F2K"},
		{"report-LAPTOP.odt", "report.odt", "OneDrive", "", "LAPTOP"},
		{long + "-LAPTOP", long, "OneDrive", "", "LAPTOP"},
	}
	for _, c := range cases {
		got, ok := ParseConflict(c.name, isValid)
		if !ok || got.Base != c.base || got.Tool != c.tool || got.Date != c.date || got.Host != c.host {
			t.Errorf("ParseConflict(%q) = %+v, %v; want base %q tool %q date %q host %q", c.name, got, ok, c.base, c.tool, c.date, c.host)
		}
	}
	// Names that merely look alike are not conflict copies: what is left must be valid.
	for _, name := range []string{"desktop.ini", ".DS_Store", "Icon\r", cipher, "other (conflicted copy 2026-11-30)", "Xk-3aF_q9ZpL0w", "x.sync-conflict-2026-ABCDEF7"} {
		if c, ok := ParseConflict(name, isValid); ok {
			t.Errorf("ParseConflict(%q) = %+v; want no conflict", name, c)
		}
	}
}

func TestConflictName(t *testing.T) {
	c := Conflict{Tool: "Syncthing", Date: "2026-11-30"}
	none := func(string) bool { return false }
	if got := ConflictName("report.odt", c, none); got != "report (conflict 2026-11-30 Syncthing).odt" {
		t.Errorf("got %q", got)
	}
	if got := ConflictName("Makefile", c, none); got != "Makefile (conflict 2026-11-30 Syncthing)" {
		t.Errorf("got %q", got)
	}
	if got := ConflictName(".bashrc", c, none); got != ".bashrc (conflict 2026-11-30 Syncthing)" {
		t.Errorf("got %q", got)
	}
	if got := ConflictName("x.odt", Conflict{Tool: "OneDrive", Host: "LAPTOP"}, none); got != "x (conflict OneDrive LAPTOP).odt" {
		t.Errorf("got %q", got)
	}
	taken := map[string]bool{"report (conflict 2026-11-30 Syncthing).odt": true}
	if got := ConflictName("report.odt", c, func(s string) bool { return taken[s] }); got != "report (conflict 2026-11-30 Syncthing 2).odt" {
		t.Errorf("a taken name: got %q", got)
	}
	long := strings.Repeat("é", 120) + ".odt" // 244 bytes
	got := ConflictName(long, c, none)
	if len(got) > crypto.NameMax || !strings.HasSuffix(got, " (conflict 2026-11-30 Syncthing).odt") || !strings.HasPrefix(got, "éé") {
		t.Errorf("a long name: %d bytes, %q", len(got), got)
	}
	for i := 0; i < len(got); {
		r := []rune(got[i:])[0]
		if r == '\uFFFD' {
			t.Fatalf("a long name was cut inside a UTF-8 sequence: %q", got)
		}
		i += len(string(r))
	}
}

func TestPlausibleName(t *testing.T) {
	for name, want := range map[string]bool{
		"report.odt":           true,
		"résumé 2026.txt":      true,
		"日本語のファイル":             true,
		"\ufffd is a name too": true,  // U+FFFD encoded as UTF-8 is valid
		"r\xe9sum\xe9.txt":     false, // Latin-1: not UTF-8
		"a\tb":                 false,
		"Icon\r":               false, // macOS's folder icon: loses only where both IVs decrypt it
		"del\x7f":              false,
		"c1\u0085":             false,
		"\x8a\x80\x8e\x0e^.":   false,
	} {
		if got := PlausibleName(name); got != want {
			t.Errorf("PlausibleName(%q) = %v, want %v", name, got, want)
		}
	}
}
