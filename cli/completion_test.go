package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/registry"
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

// TestUnquote: the words bash and zsh pass are as typed; their quoting is undone before they
// are matched ("cm\ v" and "'cm v" are the start of the vault name "cm vault").
func TestUnquote(t *testing.T) {
	for in, want := range map[string]string{
		``:            ``,
		`cm`:          `cm`,
		`cm\ v`:       `cm v`,
		`'cm v`:       `cm v`,
		`'cm v'`:      `cm v`,
		`"cm v`:       `cm v`,
		`"a\"b\$c\d"`: `a"b$c\d`,
		`'a\b'`:       `a\b`,
		`'it'\''s'`:   `it's`,
		`x"y z"'w'`:   `xy zw`,
		`trailing\`:   `trailing`,
		`$HOME/v`:     `$HOME/v`,
		`--passfile`:  `--passfile`,
		`日本\ 語`:       `日本 語`,
	} {
		if got := unquote(in); got != want {
			t.Errorf("unquote(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCompleteRaw: with --raw, __complete matches the name typed with quoting, and every word
// before it is unquoted too.
func TestCompleteRaw(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	if _, err := registry.Update(filepath.Join(dir, "vaultui", "vaults.json"), func(r *registry.Registry) error {
		return r.Add(registry.Entry{Name: "cm vault", CipherDir: filepath.Join(dir, "cm.enc")})
	}); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	for _, typed := range []string{`cm\ v`, `'cm v`, `"cm`, `c`} {
		out.Reset()
		if code := Main([]string{"__complete", "--raw", "--", "edit", typed}, strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		if !strings.Contains(out.String(), "\ncm vault\t") {
			t.Errorf("edit %s completes to\n%s", typed, out.String())
		}
	}
}
