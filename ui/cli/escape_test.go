package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/vault"
)

// TestVaultTextEscaped: names from a vault (fsck findings, error messages that quote them)
// reach the terminal with control characters escaped.
func TestVaultTextEscaped(t *testing.T) {
	evil := "a\x1b[31mb\u202ec"
	line := formatProblem(vault.Problem{Path: evil, Kind: vault.KindContent, Detail: "bad \x07", FirstBlock: -1, LastBlock: -1, CipherPath: "x\x1by"})
	if strings.ContainsAny(line, "\x1b\x07\u202e") || !strings.Contains(line, `a\x1b[31mb\u202ec`) || !strings.Contains(line, `x\x1by`) {
		t.Errorf("fsck line %q", line)
	}
	var buf bytes.Buffer
	printError(&buf, withHint(errors.New("export: "+evil+": damaged"), "see %s", evil))
	if strings.ContainsAny(buf.String(), "\x1b\u202e") || !strings.Contains(buf.String(), `a\x1b[31mb\u202ec`) {
		t.Errorf("error output %q", buf.String())
	}
}
