package app

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/crypto"
)

// TestVersion: what a bug report needs, each part from where it is known: Go's from the
// runtime, and the AEGIS code crypto runs. (A test binary records no modules: go-fuse's
// version is checked from the build info below, and in the real binary by the root package.)
func TestVersion(t *testing.T) {
	v := Version()
	if v.Go != runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("Go = %q", v.Go)
	}
	name, hw := crypto.Implementation(crypto.AEGIS)
	if !strings.HasSuffix(v.AEGIS, name) || hw != strings.HasPrefix(v.AEGIS, "assembly: ") {
		t.Errorf("AEGIS = %q; crypto says %q, hardware %v", v.AEGIS, name, hw)
	}
	if v.Vaultui == "" || v.GoFuse == "" {
		t.Errorf("%+v: a part says nothing", v)
	}
}

// TestVersionOf: the stamped version wins; without one, what Go recorded ("go install
// ...@v1.2.3", a commit), else a word that none was stamped. go-fuse's comes from the modules.
func TestVersionOf(t *testing.T) {
	deps := []*debug.Module{{Path: "github.com/charmbracelet/bubbletea", Version: "v1.3.10"}, {Path: "github.com/hanwen/go-fuse/v2", Version: "v2.12.1"}}
	devel := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Deps: deps}
	for _, c := range []struct {
		stamped string
		bi      *debug.BuildInfo
		want    string
	}{
		{"v0.4.0", devel, "v0.4.0"},
		{"", devel, "devel (no version stamped)"},
		{"", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Deps: deps}, "v1.2.3"},
		{"", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Deps: deps,
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abc"}, {Key: "vcs.modified", Value: "true"}}}, "devel, commit 0123abc-dirty"},
	} {
		v := versionOf(c.stamped, c.bi)
		if v.Vaultui != c.want || v.GoFuse != "v2.12.1" {
			t.Errorf("versionOf(%q, %+v) = %+v, want %q and go-fuse v2.12.1", c.stamped, c.bi.Main, v, c.want)
		}
	}
	if v := versionOf("", nil); v.Vaultui != "devel (no version stamped)" || !strings.HasPrefix(v.GoFuse, "unknown") {
		t.Errorf("no build info: %+v", v)
	}
}
