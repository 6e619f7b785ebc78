package cli

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/vaultui/vaultui/mountmgr"
)

// cellsBefore is how many terminal cells of line come before sub.
func cellsBefore(line, sub string) int {
	i := strings.Index(line, sub)
	if i < 0 {
		return -1
	}
	return lipgloss.Width(line[:i])
}

// TestTablePadsByCells: a path with wide characters (日本 is two runes and four cells) must
// not shift the columns after it, as tabwriter, which counts runes, did in status and list.
func TestTablePadsByCells(t *testing.T) {
	var out bytes.Buffer
	tw := newTable(&out)
	fmt.Fprintln(tw, "NAME\tPATH\tCIPHER")
	fmt.Fprintln(tw, "a\t/v/日本\tAES-256-GCM")
	fmt.Fprintln(tw, "b\t/v/abcd\tAEGIS-256X2")
	fmt.Fprintln(tw, "c\t/v/e\u0301\tXChaCha20") // e and a combining accent: one cell
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	want := []string{
		"NAME  PATH     CIPHER",
		"a     /v/日本  AES-256-GCM",
		"b     /v/abcd  AEGIS-256X2",
		"c     /v/e\u0301     XChaCha20",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", out.String(), strings.Join(want, "\n"))
	}
}

// TestStatusPadsByCells: status's columns stay put with a wide mount point.
func TestStatusPadsByCells(t *testing.T) {
	now := time.Now()
	var out bytes.Buffer
	printStatus(&out, []mountmgr.MountInfo{
		{MountPoint: "/m/日本", CipherDir: "/c/x", Cipher: "AES-256-GCM", Since: now},
		{MountPoint: "/m/abcd", CipherDir: "/c/y", Cipher: "AES-256-GCM", Since: now},
	}, now)
	lines := strings.Split(out.String(), "\n")
	if a, b := cellsBefore(lines[1], "/c/x"), cellsBefore(lines[2], "/c/y"); a != b || a < 0 {
		t.Errorf("CIPHERDIR at cell %d and %d:\n%s", a, b, out.String())
	}
}
