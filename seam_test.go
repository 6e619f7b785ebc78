package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// formatCode is where the formats are told apart (issue 37, docs/architecture.md): the
// vault packages (the table of formats and its adapters, each format's package:
// vault/gocryptfs, vault/cryptomator) and the mount's per-format files.
var formatCode = []string{
	"vault/",
	"mountmgr/vfs/formats.go", "mountmgr/vfs/tree.go", "mountmgr/vfs/tree_cryptomator.go", "mountmgr/vfs/content.go",
}

// neutralCode is inside formatCode but written against the format interface alone: the
// proof of issue 37 (converting a vault from one format to the other).
var neutralCode = []string{"vault/convert/"}

// neutralBranch is what else tells formats apart in neutral code: a format's ID compared or
// spelled out, or a format's layout rules imported.
var neutralBranch = regexp.MustCompile(`\.ID\s*[!=]=|"(gocryptfs|cryptomator)"|"github\.com/vaultui/vaultui/vault/layout"`)

// formatBranch matches what tells formats apart: the old format test and sentinels, a type
// assertion or switch to a format's own type, and the Cryptomator package itself.
var formatBranch = regexp.MustCompile(`IsCryptomator\(|CryptomatorVault|\.Cryptomator\b|` +
	`\.\(\*?(gocryptfsTree|cryptomatorTree|cryptomator\.\w+|gocryptfs\.Vault)\)|` +
	`case \*?(gocryptfs\.Vault|cryptomator\.\w+)[:,]|` +
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
		slash := filepath.ToSlash(p)
		neutral := slices.ContainsFunc(neutralCode, func(n string) bool { return strings.HasPrefix(slash, n) })
		for _, allowed := range formatCode {
			if strings.HasPrefix(slash, allowed) && !neutral {
				return nil
			}
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			branch := formatBranch.MatchString(line) || neutral && neutralBranch.MatchString(line)
			if branch && !strings.HasPrefix(strings.TrimSpace(line), "//") {
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
