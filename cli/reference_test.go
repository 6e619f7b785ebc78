package cli

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReferenceMatchesTable keeps docs/reference.md in step with the command table, as help,
// the man page and completion are: every visible command has its usage line there, every flag
// of it is named in the section that holds that line, and every command the reference shows
// is one the table has and does not hide.
func TestReferenceMatchesTable(t *testing.T) {
	data, err := os.ReadFile("../docs/reference.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	for _, c := range visibleCommands(commands) {
		at := -1
		for i, l := range lines {
			if l == usageLine(c) {
				at = i
				break
			}
		}
		if at < 0 {
			t.Errorf("docs/reference.md lacks the line %q", usageLine(c))
			continue
		}
		section := sectionAround(lines, at)
		for _, f := range c.flags() {
			if !mentionsFlag(section, f.spelling()) {
				t.Errorf("docs/reference.md: the section with %q never names %s", usageLine(c), f.spelling())
			}
		}
	}
	checkNamedCommands(t, "docs/reference.md", string(data))
}

// TestDocsNameOnlyCommandsThatExist: the README and the other documents show no command the
// table lacks (a renamed or removed command left behind in an example).
func TestDocsNameOnlyCommandsThatExist(t *testing.T) {
	for _, name := range []string{"README.md", "docs/FORMAT.md", "docs/threat-model.md", "docs/performance.md"} {
		data, err := os.ReadFile("../" + name)
		if err != nil {
			t.Fatal(err)
		}
		checkNamedCommands(t, name, string(data))
	}
}

// sectionAround returns the lines of the Markdown section holding line at: from its heading
// to the next heading of the same or a higher level, its subsections included.
func sectionAround(lines []string, at int) string {
	start, level := 0, 0
	for i := at; i >= 0; i-- {
		if l := headingLevel(lines[i]); l > 0 {
			start, level = i, l
			break
		}
	}
	end := len(lines)
	for i := at + 1; i < len(lines); i++ {
		if l := headingLevel(lines[i]); l > 0 && (level == 0 || l <= level) {
			end = i
			break
		}
	}
	return strings.Join(lines[start:end], "\n")
}

// headingLevel is the number of #s of a Markdown heading line, 0 for other lines.
func headingLevel(line string) int {
	n := len(line) - len(strings.TrimLeft(line, "#"))
	if n == 0 || !strings.HasPrefix(line[n:], " ") {
		return 0
	}
	return n
}

// mentionsFlag reports whether text names the flag spelled so as a word of its own: --ro, not
// --root.
func mentionsFlag(text, spelling string) bool {
	return regexp.MustCompile(`(^|[^\w-])` + regexp.QuoteMeta(spelling) + `($|[^\w-])`).MatchString(text)
}

// shownCommand finds "vaultui NAME" where code runs vaultui: at the start of a code span or a
// line of a code block, or after a prompt, sudo, a pipe or "usage:". Words after vaultui
// elsewhere in code ("secret-tool lookup vaultui work") are not commands.
var shownCommand = regexp.MustCompile(`(?m)(?:^|\$ |sudo |\| |usage: |&& |; )vaultui ([a-z_][a-z0-9_-]*)`)

// checkNamedCommands fails t for every command doc shows in code, or names in a heading of
// its "Commands" section ("### list, add, edit, forget"), that the table lacks or hides.
func checkNamedCommands(t *testing.T, name, doc string) {
	t.Helper()
	var code []string
	fenced, inCommands := false, false
	for _, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			code = append(code, strings.TrimSpace(l))
			continue
		}
		switch headingLevel(l) {
		case 0:
		case 1, 2:
			inCommands = l == "## Commands"
		default:
			if inCommands {
				title := strings.TrimLeft(l, "# ")
				if regexp.MustCompile(`^[a-z-]+(, [a-z-]+)*$`).MatchString(title) {
					for _, n := range strings.Split(title, ", ") {
						code = append(code, "vaultui "+n)
					}
				}
			}
		}
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(l, -1) {
			code = append(code, m[1])
		}
	}
	for _, m := range shownCommand.FindAllStringSubmatch(strings.Join(code, "\n"), -1) {
		switch c := lookup(commands, m[1]); {
		case c == nil:
			t.Errorf("%s shows %q, which is no command", name, m[0])
		case c.hidden:
			t.Errorf("%s shows %q, a hidden command", name, m[0])
		}
	}
}
