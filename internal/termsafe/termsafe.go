// Package termsafe escapes text that came from a vault (file names, config fields, errors that
// quote them) before it reaches a terminal or a log. Anyone who can write the cipherdir chooses
// those bytes, so every front end and the daemon's log print them through Escape.
//
// It imports only the standard library; ui, cli, app, mountmgr import it.
package termsafe

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape makes text that comes from a vault's files (config fields, file names, error
// messages that quote them) safe to print on a terminal or into a log: anyone who can write
// the cipherdir chooses those bytes, and raw they could move the cursor, recolor or retitle
// the terminal, forge log lines, or reorder text with bidirectional overrides. Control
// characters (C0, DEL, C1), line and paragraph separators, bidi embedding, override and
// isolate characters, and bytes that are not UTF-8 are shown as Go-style escapes (\x1b,
// \n, \u202e); everything else, including a backslash, is left as it is. Every place that
// prints such text uses this one function.
func Escape(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return r == utf8.RuneError || unsafeRune(r) }) < 0 {
		return s // nothing to escape (a RuneError here is a byte that is not UTF-8, or U+FFFD)
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && unsafeRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// unsafeRune: controls, separators that break lines, and the bidi formatting characters.
func unsafeRune(r rune) bool {
	return unicode.Is(unicode.Cc, r) || // C0, DEL, C1
		r == '\u2028' || r == '\u2029' || // line and paragraph separators
		r >= '\u202a' && r <= '\u202e' || // LRE RLE PDF LRO RLO
		r >= '\u2066' && r <= '\u2069' || // LRI RLI FSI PDI
		r == '\u200e' || r == '\u200f' || r == '\u061c' // LRM RLM ALM
}
