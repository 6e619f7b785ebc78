package cli

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/registry"
	"github.com/vaultui/vaultui/vault"
)

// TestReadmeDocumentsCommands keeps docs/reference.md true: every vault, registry and
// speed command appears with its exact usage line, and the exit code table is
// exitStatuses, the codes Main returns.
func TestReadmeDocumentsCommands(t *testing.T) {
	data, err := os.ReadFile("../docs/reference.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	for _, c := range commands {
		if c.group == groupMounts || c.hidden {
			continue // documented in the Mounting section by the mount commands' owner
		}
		if usage := usageLine(c); !strings.Contains(readme, usage+"\n") {
			t.Errorf("docs/reference.md lacks %q", usage)
		}
	}
	// The exit code table says what exitStatuses says (the man page prints that), row for row.
	rows := regexp.MustCompile(`(?m)^\| [0-9]+ \|.*$`).FindAllString(readme, -1)
	var want []string
	listed := map[int]bool{}
	for _, s := range exitStatuses {
		want = append(want, fmt.Sprintf("| %d | %s |", s.code, s.meaning))
		listed[s.code] = true
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("docs/reference.md exit code table:\n%s\nwant (exitStatuses):\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	for _, code := range []int{exitOK, exitError, exitUsage, exitWrongPassword, exitCorrupt, exitMountpoint,
		exitAlreadyMounted, exitBusy, exitDaemon, exitNoSuchVault, exitUnsupported, exitInterrupted} {
		if !listed[code] {
			t.Errorf("exitStatuses lacks exit code %d", code)
		}
	}
}

func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{errors.New("anything"), exitError},
		{&usageError{msg: "bad"}, exitUsage},
		{fmt.Errorf("unlock /v: %w", vault.ErrWrongPassword), exitWrongPassword},
		{withHint(fmt.Errorf("x: %w", vault.ErrCorrupt), "h"), exitCorrupt},
		{fmt.Errorf("x: %w", vault.ErrNotFound), exitNoSuchVault},
		{problemsFound(3), exitCorrupt},
		{fmt.Errorf("x: %w", registry.ErrCorrupt), exitError},
		{&codeError{errors.New("x"), exitBusy}, exitBusy},
	} {
		if got := exitCode(tc.err); got != tc.want {
			t.Errorf("exitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
	// The mounts' sentinels, also as they come back from the daemon (mountmgr.KindOf).
	if got := exitCode(fmt.Errorf("unmount: %w", mountmgr.ErrBusy)); got != exitBusy {
		t.Errorf("mount busy: got %d", got)
	}
}

// TestFrontMatterNamesEveryFormat: what a user reads first (the README's first paragraph,
// the help header, the man page's NAME line) names every vault format.
func TestFrontMatterNamesEveryFormat(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	para := strings.SplitN(strings.TrimSpace(strings.SplitN(string(data), "\n\n", 3)[1]), "\n\n", 2)[0]
	var help, man strings.Builder
	printOverview(&help, commands)
	writeMan(&man, commands)
	nameLine := strings.SplitN(strings.SplitN(man.String(), ".SH NAME\n", 2)[1], "\n", 2)[0]
	helpHeader := strings.SplitN(help.String(), "\n", 2)[0]
	for _, f := range vault.Formats() {
		if f.Can.ReverseView {
			continue
		}
		for what, text := range map[string]string{"README's first paragraph": para, "help header": helpHeader, "man page NAME": nameLine} {
			if !strings.Contains(text, f.Name) {
				t.Errorf("the %s does not name %s: %q", what, f.Name, text)
			}
		}
	}
}
