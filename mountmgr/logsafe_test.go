package mountmgr

import (
	"bytes"
	"log"
	"testing"
)

// TestDaemonLogEscapes: a cipher name with escape sequences or a newline reaches the daemon
// log escaped, on one line.
func TestDaemonLogEscapes(t *testing.T) {
	var buf bytes.Buffer
	l := escapingLogger(log.New(&buf, "", 0))
	l.Printf("bad block in %s", "evil\x1b]0;owned\x07\nfake: mounted /x\u202e")
	want := `bad block in evil\x1b]0;owned\x07\nfake: mounted /x\u202e` + "\n"
	if buf.String() != want {
		t.Errorf("log line %q, want %q", buf.String(), want)
	}
	if escapingLogger(l) != l {
		t.Error("an escaping logger was wrapped twice")
	}
}
