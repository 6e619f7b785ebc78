package mountmgr

import (
	"io"
	"log"
	"strings"

	"github.com/vaultui/vaultui/internal/termsafe"
)

// escapingWriter escapes each log line (termsafe.Escape): the daemon logs cipher names
// and paths that whoever writes a cipherdir chooses, and raw they could forge log lines or
// send escape sequences to whoever reads the log in a terminal.
type escapingWriter struct{ w io.Writer }

func (e escapingWriter) Write(p []byte) (int, error) {
	line := strings.TrimSuffix(string(p), "\n")
	if _, err := io.WriteString(e.w, termsafe.Escape(line)+"\n"); err != nil {
		return 0, err
	}
	return len(p), nil
}

// escapingLogger returns a logger like l whose lines are escaped.
func escapingLogger(l *log.Logger) *log.Logger {
	if _, ok := l.Writer().(escapingWriter); ok {
		return l
	}
	return log.New(escapingWriter{l.Writer()}, l.Prefix(), l.Flags())
}
