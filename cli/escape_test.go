package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestVaultTextEscaped: names from a vault (error messages that quote them; fsck findings:
// app.TestFindingOf)
// reach the terminal with control characters escaped.
func TestVaultTextEscaped(t *testing.T) {
	evil := "a\x1b[31mb\u202ec"
	var buf bytes.Buffer
	printError(&buf, withHint(errors.New("export: "+evil+": damaged"), "see %s", evil))
	if strings.ContainsAny(buf.String(), "\x1b\u202e") || !strings.Contains(buf.String(), `a\x1b[31mb\u202ec`) {
		t.Errorf("error output %q", buf.String())
	}
}
