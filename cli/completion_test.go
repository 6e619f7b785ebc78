package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestGeneratedFromTheTable keeps help, the man page and completion in step with the
// command table: every visible command and every one of its flags appears in each, and
// hidden commands in none.
func TestGeneratedFromTheTable(t *testing.T) {
	var overview, man bytes.Buffer
	printOverview(&overview, commands)
	writeMan(&man, commands)
	completeOut := func(words ...string) string {
		var out bytes.Buffer
		complete(&env{stdout: &out, commands: commands}, words)
		return out.String()
	}
	topLevel := completeOut("")
	for _, c := range commands {
		inHelp := strings.Contains(overview.String(), "\n  "+c.name+" ")
		inMan := strings.Contains(man.String(), "\n.SS "+c.name+"\n")
		inCompletion := strings.Contains(topLevel, "\n"+c.name+"\t")
		if inHelp == c.hidden || inMan == c.hidden || inCompletion == c.hidden {
			t.Errorf("%s (hidden %v): in help %v, man %v, completion %v", c.name, c.hidden, inHelp, inMan, inCompletion)
		}
		if c.hidden {
			continue
		}
		var help bytes.Buffer
		printCommandHelp(&help, c)
		flagWords := completeOut(c.name, "-")
		for _, f := range c.flags() {
			if !strings.Contains(help.String(), "  "+f.synopsis()+" ") {
				t.Errorf("%s --help lacks %s", c.name, f.synopsis())
			}
			if !strings.Contains(man.String(), roffEscape(f.spelling())+`\fR`) {
				t.Errorf("man page lacks %s %s", c.name, f.spelling())
			}
			if !strings.Contains(flagWords, "\n"+f.spelling()+"\t") {
				t.Errorf("completion of %s lacks %s", c.name, f.spelling())
			}
		}
		for _, op := range c.operands {
			if !strings.Contains(c.args, strings.TrimSuffix(op, "...")) {
				t.Errorf("%s: operand %s is not in its usage %q", c.name, op, c.args)
			}
		}
	}
}
