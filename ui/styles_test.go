package ui

import (
	"io"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

type env map[string]string

func (e env) Getenv(k string) string { return e[k] }
func (e env) Environ() []string {
	var out []string
	for k, v := range e {
		out = append(out, k+"="+v)
	}
	return out
}

// TestNoColor checks that the styles the app draws with lose their colours
// when NO_COLOR is set, the way lipgloss's default renderer reads the
// environment of the real terminal.
func TestNoColor(t *testing.T) {
	render := func(e env) string {
		r := lipgloss.NewRenderer(io.Discard, termenv.WithTTY(true), termenv.WithEnvironment(e))
		r.SetHasDarkBackground(true)
		return DefaultStyles().Error.Renderer(r).Render("wrong password")
	}
	colour := env{"TERM": "xterm-256color", "COLORTERM": "truecolor"}
	if got := render(colour); !strings.Contains(got, "\x1b[") {
		t.Fatalf("no colour on a colour terminal: %q", got)
	}
	colour["NO_COLOR"] = "1"
	if got := render(colour); got != "wrong password" {
		t.Fatalf("NO_COLOR still draws escapes: %q", got)
	}
}
