package cli

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vaultui/vaultui/mountmgr"
)

// A report with a cleaned mount and one whose cleanup failed (still listed as a stale mount).
var (
	reportFound = time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	testReport  = []mountmgr.StaleMount{
		{MountPoint: "/m/a", CipherDir: "/c/a", Found: reportFound, Cleaned: true},
		{MountPoint: "/m/b", CipherDir: "/c/b", Found: reportFound, Error: "device or resource busy"},
	}
	testMounts = []mountmgr.MountInfo{
		{MountPoint: "/m/b", CipherDir: "/c/b", Stale: true},
		{MountPoint: "/m/c", CipherDir: "/c/c", Cipher: "AES-256-GCM", Since: reportFound},
	}
)

func TestStatusJSONStaleReport(t *testing.T) {
	got := statusJSON(testMounts, testReport)
	if len(got) != 3 {
		t.Fatalf("%d entries, want the 2 mounts and the cleaned one: %+v", len(got), got)
	}
	b, c, a := got[0], got[1], got[2]
	if b.MountPoint != "/m/b" || !b.Stale || b.Cleaned || b.CleanupError != "device or resource busy" || !b.Found.Equal(reportFound) {
		t.Errorf("failed cleanup not merged into its stale mount: %+v", b)
	}
	if c.MountPoint != "/m/c" || c.Stale || c.Cleaned || c.CleanupError != "" || !c.Found.IsZero() {
		t.Errorf("live mount: %+v", c)
	}
	if a.MountPoint != "/m/a" || a.CipherDir != "/c/a" || !a.Stale || !a.Cleaned || !a.Found.Equal(reportFound) {
		t.Errorf("cleaned mount: %+v", a)
	}
	if plain := statusJSON(testMounts, nil); len(plain) != 2 || plain[0].CleanupError != "" {
		t.Errorf("without a report: %+v", plain)
	}
}

func TestPrintStaleReport(t *testing.T) {
	var buf bytes.Buffer
	printStaleReport(&buf, testReport)
	want := "Cleaned up stale mount /m/a (vault /c/a): the previous mount manager stopped without unmounting.\n" +
		"Could not clean up stale mount /m/b (vault /c/b) left by a mount manager that stopped without unmounting: device or resource busy. " +
		"The mount manager retries every second; \"vaultui unmount /m/b\" tries now.\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

func TestStaleNoteIsOneLine(t *testing.T) {
	report := append([]mountmgr.StaleMount{{MountPoint: "/m/z", CipherDir: "/c/z", Cleaned: true}}, testReport...)
	got := staleNote(report)
	want := "note: the previous mount manager stopped without unmounting; cleaned up stale mounts /m/z (vault /c/z), /m/a (vault /c/a); " +
		`could not clean up /m/b (vault /c/b): device or resource busy ("vaultui status" lists it)`
	if got != want || strings.Contains(got, "\n") {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := staleNote(testReport[:1]); got != "note: the previous mount manager stopped without unmounting; cleaned up stale mount /m/a (vault /c/a)" {
		t.Errorf("one cleaned: %s", got)
	}
}

// TestStatusShowsDetached: a detached mount (lazy unmount, or a stopping daemon serving the
// files still open) says so, with the deadline when there is one, in the table and in JSON.
func TestStatusShowsDetached(t *testing.T) {
	until := time.Date(2026, 5, 6, 7, 9, 9, 0, time.Local)
	mounts := []mountmgr.MountInfo{
		{MountPoint: "/m/lazy", CipherDir: "/c/lazy", Cipher: "AES-256-GCM", Since: reportFound, Detached: true},
		{MountPoint: "/m/stop", CipherDir: "/c/stop", Cipher: "AES-256-GCM", Since: reportFound, Detached: true, Until: until},
		{MountPoint: "/m/live", CipherDir: "/c/live", Cipher: "AES-256-GCM", Since: reportFound},
	}
	var buf bytes.Buffer
	printStatus(&buf, mounts, reportFound.Add(time.Minute))
	lines := strings.Split(buf.String(), "\n")
	if len(lines) < 4 || !strings.Contains(lines[1], "/m/lazy") || !strings.Contains(lines[1], "detached: open files served until closed)") ||
		!strings.Contains(lines[2], "at most until 07:09:09 (daemon stopping)") || strings.Contains(lines[3], "detached") {
		t.Fatalf("status table:\n%s", buf.String())
	}
	js := statusJSON(mounts, nil)
	if !js[0].Detached || !js[0].Until.IsZero() || !js[1].Until.Equal(until) || js[2].Detached {
		t.Fatalf("JSON %+v", js)
	}
}

// TestOthersNote: unmount --all names what other mount managers keep mounted one a line, a
// few of them, the latest first, and counts the rest (a test machine had 20, 200 characters
// each, on one line).
func TestOthersNote(t *testing.T) {
	var ms []mountmgr.MountInfo
	if got := othersNote(ms); got != "" {
		t.Errorf("none: %q", got)
	}
	ms = append(ms, mountmgr.MountInfo{MountPoint: "/m/a", CipherDir: "/c/a"})
	if got, want := othersNote(ms), "note: still mounted by another mount manager (another XDG_RUNTIME_DIR): /m/a (vault /c/a)\n"; got != want {
		t.Errorf("one:\n%s\nwant\n%s", got, want)
	}
	for i := range 19 {
		ms = append(ms, mountmgr.MountInfo{MountPoint: fmt.Sprintf("/m/%d", i), CipherDir: fmt.Sprintf("/c/%d", i)})
	}
	got := othersNote(ms)
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 1+othersShown+1 || lines[0] != "note: 20 vaults are still mounted by other mount managers (other XDG_RUNTIME_DIRs):" ||
		lines[1] != "  /m/18 (vault /c/18)" || lines[len(lines)-1] != "  and 15 more (findmnt -t fuse.vaultui lists them all)" {
		t.Errorf("twenty:\n%s", got)
	}
}
