package exclude

import (
	"strings"
	"testing"
)

// check asserts, for each "path" (a trailing "/" marks a directory), whether it is visible.
func check(t *testing.T, rules []string, visible, hidden []string) {
	t.Helper()
	r, err := Compile(rules)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []bool{true, false} {
		list := visible
		if !want {
			list = hidden
		}
		for _, p := range list {
			dir := strings.HasSuffix(p, "/")
			if got := r.Visible(strings.TrimSuffix(p, "/"), dir); got != want {
				t.Errorf("rules %q: Visible(%q) = %v, want %v", rules, p, got, want)
			}
		}
	}
}

func TestGitignoreBasics(t *testing.T) {
	check(t, []string{"*.mp3", "/Music", "build/", "# comment", "", `\#hash`, "a/**/z", "[!x]y"},
		[]string{"song.txt", "x/Music", "build", "b/build.txt", "#x", "a/z2", "xy", "sub/xy"},
		[]string{"song.mp3", "deep/er/song.mp3", "Music/", "Music/a/b", "build/", "x/build/", "x/build/f", "#hash",
			"a/z", "a/b/c/z", "ay", "sub/by"})
}

func TestExcludeIsAnchoredLikeGocryptfsExclude(t *testing.T) {
	// gocryptfs -exclude PATH is the rule "/PATH": only at the root.
	check(t, []string{"/Music", "/a/b"}, []string{"x/Music", "b", "x/a/b"}, []string{"Music", "Music/x", "a/b", "a/b/c"})
}

// TestReincludeBelowExcludedFolder is gocryptfs #927: a dotfiles gitignore that excludes
// everything and re-includes files deep in .config. gocryptfs shows none of .config; git and
// we show exactly the re-included files and the folders on the way to them.
func TestReincludeBelowExcludedFolder(t *testing.T) {
	rules := []string{
		"/*",
		"!/.bashrc",
		"!/.config/",
		"/.config/*",
		"!/.config/mpv/",
		"!/.config/conky/conkyrc",
	}
	check(t, rules,
		[]string{".bashrc", ".config/", ".config/mpv/", ".config/mpv/config", ".config/mpv/scripts/x.lua",
			".config/conky/", ".config/conky/conkyrc"},
		[]string{".profile", "Music/", "Music/a.mp3", ".config/geany/", ".config/geany/x", ".config/conky/other",
			".config/top-level-file"})

	// Without git's step-by-step re-including of each folder: a "!" rule alone reaches below
	// an excluded folder, which stays visible with only that inside.
	check(t, []string{"/private", "!/private/keep/this.txt"},
		[]string{"private/", "private/keep/", "private/keep/this.txt", "other"},
		[]string{"private/secret", "private/keep/that.txt", "private/sub/"})

	// "*" with "!*/" and "!*.lua": every folder, only .lua files.
	check(t, []string{"*", "!*/", "!*.lua"},
		[]string{"a/", "a/b/", "a/b/x.lua", "top.lua"},
		[]string{"a/c.txt", "a/b/c.txt", "top.txt"})
}

// TestRulesApplyInTheOrderGiven is gocryptfs #1000: the last matching rule wins in the order
// the rules were given, whatever flag each came from.
func TestRulesApplyInTheOrderGiven(t *testing.T) {
	check(t, []string{"*.log", "!important.log"}, []string{"important.log", "d/important.log"}, []string{"x.log"})
	check(t, []string{"!important.log", "*.log"}, nil, []string{"important.log", "x.log"})
	// -exclude-wildcard '!/x' then -exclude x: gocryptfs applies every -exclude before every
	// -exclude-wildcard, so x is re-included there; here the later rule wins and x is gone.
	check(t, []string{"!/x", "/x"}, nil, []string{"x", "x/"})
	check(t, []string{"/x", "!/x"}, []string{"x", "x/", "x/y"}, nil)
}

func TestCompileErrors(t *testing.T) {
	if _, err := Compile([]string{"ok", "bad[", "x"}); err == nil || !strings.Contains(err.Error(), "rule 2") {
		t.Errorf("bad pattern: %v", err)
	}
	var none *Rules
	if !none.Empty() || none.Excluded("a", false) {
		t.Error("nil rules exclude something")
	}
	r, _ := Compile([]string{"", "# only comments"})
	if !r.Empty() {
		t.Error("comments count as rules")
	}
}
