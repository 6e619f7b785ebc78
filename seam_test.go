package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// formatCode is where the formats are told apart (issue 37, docs/architecture.md): the
// vault packages (the table of formats, each format's code; the gocryptfs format still shares
// package vault with the format-neutral facade) and the mount's per-format files.
var formatCode = []string{
	"vault/",
	"mountmgr/vfs/formats.go", "mountmgr/vfs/tree.go", "mountmgr/vfs/tree_cryptomator.go", "mountmgr/vfs/content.go",
}

// formatBranch matches what tells formats apart: the old format test and sentinels, a type
// assertion or switch to a format's own type, and the Cryptomator package itself.
var formatBranch = regexp.MustCompile(`IsCryptomator\(|CryptomatorVault|\.Cryptomator\b|` +
	`\.\(\*?(gocryptfsTree|cryptomatorTree|cryptomator\.\w+|vault\.Vault)\)|` +
	`case \*?(vault\.Vault|cryptomator\.\w+)[:,]|` +
	`"github\.com/vaultui/vaultui/vault/cryptomator"`)

// TestOneVaultModel: outside the format code, production code asks a format's capabilities
// and reads its row of the table (vault.Format), never which format a vault is.
func TestOneVaultModel(t *testing.T) {
	var hits []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || strings.HasPrefix(d.Name(), "_")) && p != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		for _, allowed := range formatCode {
			if strings.HasPrefix(filepath.ToSlash(p), allowed) {
				return nil
			}
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if formatBranch.MatchString(line) && !strings.HasPrefix(strings.TrimSpace(line), "//") {
				hits = append(hits, p+":"+strconv.Itoa(i+1)+": "+strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		t.Errorf("a format told apart outside the format code (ask a capability of vault.Format instead): %s", h)
	}
}
