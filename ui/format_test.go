package ui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/vaultui/vaultui/registry"
)

func TestRateAndSize(t *testing.T) {
	for in, want := range map[float64]string{0: "0 B/s", 999: "999 B/s", 1000: "1.0 kB/s", 12345: "12 kB/s", 5.8e6: "5.8 MB/s", 1.2e9: "1.2 GB/s"} {
		if got := rate(in); got != want {
			t.Errorf("rate(%v) = %q, want %q", in, got, want)
		}
	}
}

// The meter is app.RatePassword's: "password123" is weak and says why, and the vault's own
// name does not make a password strong.
func TestStrengthHint(t *testing.T) {
	s := DefaultStyles()
	for _, c := range []struct{ pw, want string }{
		{"", ""},
		{"password123", "strength: weak, a common password"},
		{"stump tidal cradle lurk", "strength: strong (an estimate)"},
	} {
		if got := strengthHint(s, c.pw); got != c.want {
			t.Errorf("strengthHint(%q) = %q, want %q", c.pw, got, c.want)
		}
	}
	if got := strengthHint(s, "Kestrelvault2024", "Kestrelvault"); !strings.Contains(got, "vault's name") {
		t.Errorf("a password made of the vault's name: %q", got)
	}
}

func TestParseIdle(t *testing.T) {
	for in, want := range map[string]time.Duration{"": 0, "0": 0, "10": 10 * time.Minute, "90s": 90 * time.Second, "1h30m": 90 * time.Minute} {
		if got, err := parseIdle(in); err != nil || got != want {
			t.Errorf("parseIdle(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"soon", "-5m", "1x"} {
		if _, err := parseIdle(bad); err == nil {
			t.Errorf("parseIdle(%q) accepted", bad)
		}
	}
	if got := formatIdle(90 * time.Minute); got != "90" {
		t.Errorf("formatIdle(90m) = %q", got)
	}
}

func TestChart(t *testing.T) {
	rows := chart([]float64{0, 4, 8}, 5, 2, 8)
	if len(rows) != 2 || len([]rune(rows[0])) != 5 || len([]rune(rows[1])) != 5 {
		t.Fatalf("chart size: %q", rows)
	}
	// Two columns of padding, then 0, half and full height.
	if rows[1] != "   ██" || rows[0] != "    █" {
		t.Fatalf("chart rows %q", rows)
	}
	// Any traffic shows, even far below the peak.
	if rows := chart([]float64{1}, 1, 1, 1e9); rows[0] != "▁" {
		t.Fatalf("tiny value drawn as %q", rows[0])
	}
	// Older samples beyond the width are dropped.
	if rows := chart([]float64{8, 8, 0}, 2, 1, 8); rows[0] != "█ " {
		t.Fatalf("overflow drawn as %q", rows[0])
	}
}

func TestProgressBar(t *testing.T) {
	for _, c := range []struct {
		pct  float64
		want string
	}{{0, "░░░░"}, {0.5, "██░░"}, {1, "████"}, {0.55, "██▎░"}} {
		if got := progressBar(c.pct, 4); got != c.want {
			t.Errorf("progressBar(%v) = %q, want %q", c.pct, got, c.want)
		}
	}
	if strings.Contains(progressBar(2, 3), "░") {
		t.Error("over 100% is not full")
	}
}

// TestCellWidths: padding and cutting count terminal cells, not runes: 日本 takes four cells,
// so a column after it would shift by two, and a cut to w runes would overflow by as many.
func TestCellWidths(t *testing.T) {
	if got := padRight("日本", 6); got != "日本  " {
		t.Errorf("padRight = %q", got)
	}
	for _, c := range []struct {
		in   string
		w    int
		want string
	}{
		{"ab日本語のパス", 9, "ab日本語…"},
		{"ab日本語のパス", 8, "ab日本…"}, // a wide character does not fit in the one cell left
		{"/a/日本", 7, "/a/日本"},
		{"/a/日本語のパス", 8, "…のパス"}, // a path keeps its end
		{"plain path", 6, "plain…"},
		{"mounted at somewhere", 14, "mounted at…"},        // after a word, not inside one
		{"~/Sync/Vaults/work.crypt", 20, "~/…/work.crypt"}, // a path loses folders in its middle
	} {
		if got := truncate(c.in, c.w); got != c.want || lipgloss.Width(got) > c.w {
			t.Errorf("truncate(%q, %d) = %q (%d cells), want %q", c.in, c.w, got, lipgloss.Width(got), c.want)
		}
	}
	for _, c := range []struct {
		in   string
		w    int
		want string
	}{
		{"/a/日本語のパス", 7, "…のパス"},
		{"/a/日本語のパス", 8, "…のパス"},
		{"/a/日本", 7, "/a/日本"},
		{"/home/u/Vaults/work", 8, "…ts/work"},
	} {
		if got := truncateLeft(c.in, c.w); got != c.want || lipgloss.Width(got) > c.w {
			t.Errorf("truncateLeft(%q, %d) = %q (%d cells), want %q", c.in, c.w, got, lipgloss.Width(got), c.want)
		}
	}
}

// TestListFitsWithWidePaths: a vault whose folders have wide characters in their names fits
// the screen: no line of the list is wider than the terminal.
func TestListFitsWithWidePaths(t *testing.T) {
	fb := newFake()
	fb.vaults = []Vault{{Entry: registry.Entry{Name: "日本の写真", CipherDir: "/data/日本語のフォルダ/写真の保管庫.crypt",
		MountPoint: "/home/u/Vaults/日本語のマウントポイント"}, Cipher: "AES-256-GCM"}}
	tm := newTestModel(t, fb)
	for _, w := range []int{40, 60, 80} {
		tm.send(tea.WindowSizeMsg{Width: w, Height: 16})
		for _, l := range strings.Split(tm.View(), "\n") {
			if lipgloss.Width(l) > w {
				t.Errorf("at %d columns a line takes %d cells: %q", w, lipgloss.Width(l), l)
			}
		}
	}
}
