package app

import "testing"

// The sentences that present vaultui name every vault format from the table (issue 39: they
// said gocryptfs only, long after Cryptomator vaults opened).
func TestFormatNames(t *testing.T) {
	if got := FormatNames("and"); got != "gocryptfs and Cryptomator" {
		t.Errorf("FormatNames(and) = %q", got)
	}
	if got := FormatNames("or"); got != "gocryptfs or Cryptomator" {
		t.Errorf("FormatNames(or) = %q", got)
	}
	if got := FormatMarkers("or"); got != "gocryptfs.conf or vault.cryptomator" {
		t.Errorf("FormatMarkers(or) = %q", got)
	}
	if got := joinWords([]string{"a", "b", "c"}, "or"); got != "a, b or c" {
		t.Errorf("joinWords = %q", got)
	}
}
