package testdeps

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestParseRequire(t *testing.T) {
	for _, c := range []struct {
		value string
		dep   Dep
		want  bool
	}{
		{"", FUSE, false},
		{"fuse", FUSE, true},
		{"fuse", Tmux, false},
		{"fuse,gocryptfs,tmux,dbus,qemu", Qemu, true},
		{"fuse,gocryptfs,tmux,dbus,qemu", Strace, false},
		{" tmux , qemu ,", Tmux, true},
		{"all", Strace, true},
		{"all", SecretTool, true},
	} {
		got, err := parseRequire(c.value, c.dep)
		if err != nil || got != c.want {
			t.Errorf("parseRequire(%q, %s) = %v, %v; want %v", c.value, c.dep, got, err, c.want)
		}
	}
	for _, bad := range []string{"fuse,tmuks", "ALL", "yes"} {
		if _, err := parseRequire(bad, FUSE); err == nil || !strings.Contains(err.Error(), "unknown dependency") {
			t.Errorf("parseRequire(%q) = %v; want an error naming the unknown dependency", bad, err)
		}
	}
}

// recorder is a testing.TB that records how a test would have ended.
type recorder struct {
	testing.TB
	skipped, failed string
}

// The methods Unusable calls; it must call no other (the embedded nil TB would panic).
func (r *recorder) Helper()                           {}
func (r *recorder) Skipf(format string, args ...any)  { r.skipped = fmt.Sprintf(format, args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func TestUnusableSkipsUnlessRequired(t *testing.T) {
	for _, c := range []struct {
		require     string
		wantSkipped bool
		want        string
	}{
		{"", true, "tmux: tmux not on PATH (set VAULTUI_REQUIRE=tmux to make this a failure)"},
		{"fuse", true, "tmux: tmux not on PATH (set VAULTUI_REQUIRE=tmux to make this a failure)"},
		{"tmux", false, "tmux: tmux not on PATH, and VAULTUI_REQUIRE=tmux requires it"},
		{"fuse,tmux", false, "tmux: tmux not on PATH, and VAULTUI_REQUIRE=fuse,tmux requires it"},
		{"all", false, "tmux: tmux not on PATH, and VAULTUI_REQUIRE=all requires it"},
		{"tmx", false, `VAULTUI_REQUIRE="tmx": unknown dependency "tmx"`},
	} {
		t.Setenv(RequireEnv, c.require)
		r := &recorder{}
		Unusable(r, Tmux, "tmux not on PATH")
		got, other := r.failed, r.skipped
		if c.wantSkipped {
			got, other = other, got
		}
		if !strings.HasPrefix(got, c.want) || other != "" {
			t.Errorf("%s=%q: skipped %q, failed %q; want %s %q", RequireEnv, c.require, r.skipped, r.failed,
				map[bool]string{true: "skipped", false: "failed"}[c.wantSkipped], c.want)
		}
	}
}

// TestSwitchInATestBinary runs TestNeedsTmuxChild in a child without tmux on its PATH: it
// skips, naming tmux, unless VAULTUI_REQUIRE names tmux, and then it fails.
func TestSwitchInATestBinary(t *testing.T) {
	if os.Getenv("TESTDEPS_CHILD") != "" {
		t.Skip("the child runs TestNeedsTmuxChild only")
	}
	for _, c := range []struct {
		require string
		fails   bool
		want    string
	}{
		{"", false, "--- SKIP: TestNeedsTmuxChild"},
		{"fuse", false, "--- SKIP: TestNeedsTmuxChild"},
		{"tmux", true, "--- FAIL: TestNeedsTmuxChild"},
		{"all", true, "--- FAIL: TestNeedsTmuxChild"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestNeedsTmuxChild$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTDEPS_CHILD=1", "PATH="+t.TempDir(), RequireEnv+"="+c.require)
		out, err := cmd.CombinedOutput()
		if (err != nil) != c.fails || !strings.Contains(string(out), c.want) || !strings.Contains(string(out), "tmux not on PATH") {
			t.Errorf("%s=%q: %v; want %s and a message naming tmux:\n%s", RequireEnv, c.require, err, c.want, out)
		}
	}
}

func TestNeedsTmuxChild(t *testing.T) {
	if os.Getenv("TESTDEPS_CHILD") == "" {
		t.Skip("run by TestSwitchInATestBinary")
	}
	Need(t, Tmux)
	t.Log("tmux found")
}

// TestProbesNameWhatIsMissing: with an empty PATH every program-based probe says which
// program it did not find.
func TestProbesNameWhatIsMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for dep, want := range map[Dep]string{
		Gocryptfs:  "gocryptfs and gocryptfs-xray not on PATH",
		Tmux:       "tmux not on PATH",
		DBus:       "dbus-daemon and gnome-keyring-daemon not on PATH",
		SecretTool: "secret-tool not on PATH",
		Qemu:       "qemu-aarch64-static not on PATH",
		Strace:     "strace not on PATH",
	} {
		if got := probes[dep](); got != want {
			t.Errorf("%s without PATH: %q, want %q", dep, got, want)
		}
	}
}

// TestProbesHere runs every probe on this machine; the FUSE probe must leave no mount behind.
func TestProbesHere(t *testing.T) {
	for _, dep := range All {
		t.Logf("%-11s %q", dep, Missing(dep))
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(mounts), "testdeps-fuse") {
		t.Errorf("the FUSE probe left its mount:\n%s", mounts)
	}
}
