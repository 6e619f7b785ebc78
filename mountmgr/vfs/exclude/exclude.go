// Package exclude decides which entries of a plaintext folder a reverse-mode view leaves out,
// from rules in gitignore(5) syntax: gocryptfs's -exclude, -exclude-wildcard and -exclude-from.
//
// # Rules
//
// Each rule is one gitignore line: a pattern of path components ("*", "?", "[a-z]" and "[!a]"
// within a component, "**" for any number of components), anchored at the root when it
// contains a "/" other than a trailing one (else it matches a name at any depth), for
// directories only when it ends in "/", and negated (a re-include) when it starts with "!".
// Blank lines and lines starting with "#" are skipped; "\#" and "\!" escape the first
// character. gocryptfs's -exclude PATH is the rule "/PATH".
//
// # Order and re-including below an excluded folder
//
// Rules apply in the order given, across every source (gocryptfs groups them by flag instead;
// gocryptfs #1000). A path is decided level by level from the root: the last rule that matches
// the path itself decides; when none does, the path inherits its parent's decision. So a later
// "!" rule re-includes a path below an excluded folder (which git, and gocryptfs's gitignore
// library, cannot: gocryptfs #927). An excluded folder stays visible, listing only what is
// re-included in it, when a "!" rule could match something below it; otherwise it is gone,
// with everything in it.
//
// It imports nothing of vaultui; mountmgr/vfs, mountmgr and cli import it.
package exclude

import (
	"fmt"
	"path"
	"strings"
)

// Rules is a compiled, ordered list of rules. The zero value (and nil) excludes nothing.
type Rules struct {
	rules []rule
	// negations are the "!" rules, for Visible's look below an excluded folder.
	negations []rule
}

type rule struct {
	negate  bool
	dirOnly bool
	segs    []string // path components; "**" matches any number of them
	text    string
}

// Compile parses gitignore lines in order. A pattern path.Match cannot parse is an error
// naming the line.
func Compile(lines []string) (*Rules, error) {
	r := &Rules{}
	for i, line := range lines {
		ru, ok, err := parse(line)
		if err != nil {
			return nil, fmt.Errorf("exclude rule %d %q: %w", i+1, line, err)
		}
		if !ok {
			continue
		}
		r.rules = append(r.rules, ru)
		if ru.negate {
			r.negations = append(r.negations, ru)
		}
	}
	return r, nil
}

// Empty reports whether no rule was given.
func (r *Rules) Empty() bool { return r == nil || len(r.rules) == 0 }

func parse(line string) (ru rule, ok bool, err error) {
	ru.text = line
	line = strings.TrimSuffix(line, "\r")
	// Trailing spaces go unless escaped with a backslash.
	for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, "\\ ") {
		line = line[:len(line)-1]
	}
	if line == "" || strings.HasPrefix(line, "#") {
		return ru, false, nil
	}
	if strings.HasPrefix(line, "!") {
		ru.negate = true
		line = line[1:]
	} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		ru.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return ru, false, nil
	}
	anchored := strings.Contains(line, "/")
	line = strings.TrimPrefix(line, "/")
	for _, s := range strings.Split(line, "/") {
		if s == "" {
			continue // "a//b" is "a/b"
		}
		if s != "**" {
			// gitignore negates a class with "[!...]", path.Match with "[^...]".
			s = strings.ReplaceAll(s, "[!", "[^")
			if _, err := path.Match(s, ""); err != nil {
				return ru, false, err
			}
		}
		ru.segs = append(ru.segs, s)
	}
	if !anchored {
		ru.segs = append([]string{"**"}, ru.segs...)
	}
	return ru, true, nil
}

// match reports whether the pattern segments match the path components exactly.
func match(segs, comps []string) bool {
	for len(segs) > 0 {
		if segs[0] == "**" {
			for k := 0; k <= len(comps); k++ {
				if match(segs[1:], comps[k:]) {
					return true
				}
			}
			return false
		}
		if len(comps) == 0 {
			return false
		}
		if ok, _ := path.Match(segs[0], comps[0]); !ok {
			return false
		}
		segs, comps = segs[1:], comps[1:]
	}
	return len(comps) == 0
}

// matchBelow reports whether the pattern could match some path strictly below comps.
func matchBelow(segs, comps []string) bool {
	if len(comps) == 0 {
		return len(segs) > 0
	}
	if len(segs) == 0 {
		return false
	}
	if segs[0] == "**" {
		return matchBelow(segs[1:], comps) || matchBelow(segs, comps[1:])
	}
	if ok, _ := path.Match(segs[0], comps[0]); !ok {
		return false
	}
	return matchBelow(segs[1:], comps[1:])
}

// decide returns the decision of the last rule that matches comps itself (dir: it is a
// directory), and whether one did.
func (r *Rules) decide(comps []string, dir bool) (excluded, decided bool) {
	for i := len(r.rules) - 1; i >= 0; i-- {
		ru := r.rules[i]
		if ru.dirOnly && !dir {
			continue
		}
		if match(ru.segs, comps) {
			return !ru.negate, true
		}
	}
	return false, false
}

// Excluded reports whether the rules exclude the path p (relative to the root, components
// separated by "/"; isDir: p is a directory), deciding level by level (see the package doc).
func (r *Rules) Excluded(p string, isDir bool) bool {
	if r.Empty() || p == "" || p == "." {
		return false
	}
	comps := strings.Split(p, "/")
	excluded := false
	for k := 1; k <= len(comps); k++ {
		if e, ok := r.decide(comps[:k], k < len(comps) || isDir); ok {
			excluded = e
		}
	}
	return excluded
}

// Visible reports whether the view shows p: it is not excluded, or it is an excluded
// directory below which a "!" rule could re-include something.
func (r *Rules) Visible(p string, isDir bool) bool {
	if !r.Excluded(p, isDir) {
		return true
	}
	if !isDir {
		return false
	}
	comps := strings.Split(p, "/")
	for _, ru := range r.negations {
		if matchBelow(ru.segs, comps) {
			return true
		}
	}
	return false
}
