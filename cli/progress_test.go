package cli

import (
	"strings"
	"testing"

	"github.com/vaultui/vaultui/vault"
)

// TestProgressLineInBytes: the first report (the count, before any work) is drawn at once,
// and the line gives the share of the content in bytes: one big file is not "1/6" for
// minutes.
func TestProgressLineInBytes(t *testing.T) {
	var out strings.Builder
	p := &progress{statusLine: statusLine{w: &out, on: true}, verb: "checking"}
	p.update(vault.FsckProgress{Counting: true})
	if got := out.String(); !strings.Contains(got, "checking: counting… 0 entries, 0 B") {
		t.Fatalf("first line %q, want the count at once", got)
	}
	got := p.line(vault.FsckProgress{Done: 1, Total: 6, Bytes: 510e6, TotalBytes: 3e9, Path: "movies/big.mkv"})
	if want := "checking  17% 510.0 MB of 3.0 GB, 1/6 entries movies/big.mkv"; got != want {
		t.Fatalf("line %q, want %q", got, want)
	}
}
