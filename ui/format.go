package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/vaultui/vaultui/app"
)

// rate formats bytes per second the way people read it: "0 B/s", "512 kB/s", "12.3 MB/s".
func rate(bps float64) string { return size(bps) + "/s" }

// size formats a byte count with decimal units.
func size(b float64) string {
	units := []string{"B", "kB", "MB", "GB", "TB"}
	i := 0
	for b >= 1000 && i < len(units)-1 {
		b /= 1000
		i++
	}
	if i > 0 && b < 10 {
		return fmt.Sprintf("%.1f %s", b, units[i])
	}
	return fmt.Sprintf("%.0f %s", b, units[i])
}

// ago says how long ago t was, coarsely.
func ago(now, t time.Time) string { return app.Age(now.Sub(t)) + " ago" }

// expandPath makes a typed path absolute, expanding a leading "~".
func expandPath(p string) string {
	p = strings.TrimSpace(p)
	if p == "" {
		return ""
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[1:])
		}
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return filepath.Clean(p)
}

func samePath(a, b string) bool { return filepath.Clean(a) == filepath.Clean(b) }

// parseIdle reads an idle timeout: empty or "0" for none, a Go duration
// ("90s", "1h"), or a bare number of minutes.
func parseIdle(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "0" {
		return 0, nil
	}
	if n, err := strconv.Atoi(s); err == nil && n > 0 {
		return time.Duration(n) * time.Minute, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("idle timeout %q: use minutes (10) or a duration (1h30m)", s)
	}
	return d, nil
}

func formatIdle(d time.Duration) string {
	if d == 0 {
		return ""
	}
	if d%time.Minute == 0 {
		return strconv.Itoa(int(d / time.Minute))
	}
	return d.String()
}

// truncate cuts s to at most w terminal cells, marking the cut with "…": after the last
// word or folder name that fits, so none is cut, unless the first alone is too long (a wide
// character that would straddle the edge goes too). A path alone is cut in its middle
// (truncatePath).
func truncate(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if lipgloss.Width(s) <= w {
		return s
	}
	if strings.Contains(s, "/") && !strings.ContainsAny(s, " \x1b") {
		return truncatePath(s, w)
	}
	cut := ansi.Truncate(s, w, "…")
	if strings.Contains(s, "\x1b") {
		return cut // styled: cut where it must
	}
	kept := strings.TrimSuffix(cut, "…") // a prefix of s
	next, _ := utf8.DecodeRuneInString(s[len(kept):])
	switch i := strings.LastIndexAny(kept, " /"); {
	case lipgloss.Width(string(next)) > 1:
		return cut // wide scripts write no spaces: any character ends a word
	case next == ' ':
	case i > 0:
		kept = kept[:i+1] // a path breaks after a "/", between folder names
	default:
		return cut
	}
	return strings.TrimRight(kept, " ") + "…"
}

// truncatePath cuts a path to at most w cells in the middle, between folder names:
// "~/…/Vaults/work" keeps where it starts and as much of where it ends as fits. Only a
// last name too long for "…/name" is cut itself, at its start.
func truncatePath(p string, w int) string {
	if lipgloss.Width(p) <= w {
		return p
	}
	parts := strings.Split(p, "/")
	for i := 2; i < len(parts); i++ { // keep parts[0], drop parts[1:i]
		if t := parts[0] + "/…/" + strings.Join(parts[i:], "/"); lipgloss.Width(t) <= w {
			return t
		}
	}
	return truncateLeft(p, w)
}

// wrap breaks s into lines of at most w cells at spaces (long words are
// broken too), for sentences that must be read whole on a narrow terminal.
func wrap(s string, w int) string {
	if w <= 0 {
		return ""
	}
	return lipgloss.NewStyle().Width(w).Render(s)
}

// indent puts n spaces before every line of s.
func indent(s string, n int) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
}

// plural is "1 vault" or "2 vaults": n with the noun's singular or plural.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// truncateLeft keeps the end of s (the interesting part of a path) in at most w terminal
// cells, marking the cut with "…".
func truncateLeft(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := lipgloss.Width(s)
	if n <= w {
		return s
	}
	out := ansi.TruncateLeft(s, n-w+1, "…")
	for lipgloss.Width(out) > w { // a wide character straddled the cut
		n++
		out = ansi.TruncateLeft(s, n-w+1, "…")
	}
	return out
}
