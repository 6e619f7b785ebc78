package termsafe

import "testing"

func TestEscape(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain name.txt", "plain name.txt"},
		{"Grüße, 日本語 \\ back", "Grüße, 日本語 \\ back"},
		{"\x1b[2J\x1b]0;pwned\x07", `\x1b[2J\x1b]0;pwned\x07`},
		{"line\nforged: ok\r\t", `line\nforged: ok\r\t`},
		{"del\x7f c1\u009b[31m", `del\x7f c1\u009b[31m`},
		{"invoice\u202efdp.exe", `invoice\u202efdp.exe`},
		{"\u2066iso\u2069 \u200f \u061c \u2028", `\u2066iso\u2069 \u200f \u061c \u2028`},
		{"bad \xff\xfe utf8", `bad \xff\xfe utf8`},
		{"nul\x00", `nul\x00`},
	} {
		if got := Escape(c.in); got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
