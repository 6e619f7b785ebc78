package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSystemdExecPath: the executable of ExecStart= by systemd's rules (see systemdExecPath).
func TestSystemdExecPath(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{"/usr/bin/vaultui", "/usr/bin/vaultui"},
		{"/opt/my apps/vaultui", `"/opt/my apps/vaultui"`},
		{"/opt/a$b/vaultui", "/opt/a$b/vaultui"},
		{"/opt/100%/vaultui", "/opt/100%%/vaultui"},
		{"/opt/x $HOME 5%/vaultui", `"/opt/x $HOME 5%%/vaultui"`},
		{"/opt/a;b#c/vaultui", "/opt/a;b#c/vaultui"},
	} {
		got, err := systemdExecPath(c.path)
		if err != nil || got != c.want {
			t.Errorf("%q: %s, %v; want %s", c.path, got, err, c.want)
		}
	}
	for _, bad := range []string{`/opt/q"uote/vaultui`, "/opt/o'brien/vaultui", `/opt/back\slash/vaultui`, "/opt/new\nline/vaultui", "/opt/t\tab/vaultui"} {
		if got, err := systemdExecPath(bad); err == nil || !strings.Contains(err.Error(), "--method xdg") {
			t.Errorf("%q: %s, %v; want refused", bad, got, err)
		}
	}
}

// TestSystemdUnitVerifies writes the unit for a program under a path with a space, `$`, `%`,
// `;` and `#`, and has systemd itself parse it: the executable it finds must be that program
// (the old quoter's `\$` was an unknown escape, and the unit did not load).
func TestSystemdUnitVerifies(t *testing.T) {
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("systemd-analyze is not installed")
	}
	dir := filepath.Join(t.TempDir(), "my $HOME 100% ;#x")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "vaultui")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	unit, err := systemdUnit(exe)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "vaultui.service")
	os.WriteFile(file, []byte(unit), 0o644)
	out, _ := exec.Command("systemd-analyze", "verify", file).CombinedOutput()
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "vaultui") && !strings.Contains(l, "cgroup") {
			t.Errorf("systemd-analyze verify:\n%s\nunit:\n%s", out, unit)
			break
		}
	}
}

// desktopExecProgram undoes what the Desktop Entry Specification says an Exec= value goes
// through, in its order, and returns the program: the string value's escapes (`\\` is `\`;
// `\s`, `\n`, `\t`, `\r` too), then the quoting of the first argument (inside double quotes,
// a backslash takes the next character as is), then the field code `%%`. It is written from
// the spec, apart from the quoter under test.
func desktopExecProgram(t *testing.T, value string) string {
	t.Helper()
	var s strings.Builder
	for i := 0; i < len(value); i++ {
		if value[i] == '\\' && i+1 < len(value) {
			i++
			s.WriteByte(map[byte]byte{'\\': '\\', 's': ' ', 'n': '\n', 't': '\t', 'r': '\r'}[value[i]])
			continue
		}
		s.WriteByte(value[i])
	}
	v := s.String()
	var prog strings.Builder
	i := 0
	if strings.HasPrefix(v, `"`) {
		for i = 1; i < len(v) && v[i] != '"'; i++ {
			if v[i] == '\\' {
				i++
				if !strings.ContainsRune("\"`$\\", rune(v[i])) {
					t.Fatalf("%s: escape of %q inside quotes, which the spec does not allow", value, v[i])
				}
			}
			prog.WriteByte(v[i])
		}
		if i == len(v) {
			t.Fatalf("%s: unterminated quote", value)
		}
		i++
	} else {
		for ; i < len(v) && v[i] != ' '; i++ {
			if strings.ContainsRune(" \t\n\"'\\><~|&;$*?#()`", rune(v[i])) {
				t.Fatalf("%s: reserved character %q outside quotes", value, v[i])
			}
			prog.WriteByte(v[i])
		}
	}
	if i < len(v) && v[i] != ' ' {
		t.Fatalf("%s: the program's quotes do not end the word", value)
	}
	got := prog.String()
	if strings.Contains(strings.ReplaceAll(got, "%%", ""), "%") {
		t.Fatalf("%s: a %% that is a field code", value)
	}
	return strings.ReplaceAll(got, "%%", "%")
}

// TestDesktopExecArg: the program of a desktop entry's Exec= key by the Desktop Entry
// Specification's rules (see desktopExecArg), checked by value and by undoing them.
func TestDesktopExecArg(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{"/usr/bin/vaultui", "/usr/bin/vaultui"},
		{"/opt/my apps/vaultui", `"/opt/my apps/vaultui"`},
		{"/opt/a$b/vaultui", `"/opt/a\\$b/vaultui"`},
		{`/opt/back\slash/vaultui`, `"/opt/back\\\\slash/vaultui"`},
		{`/opt/q"uote/vaultui`, `"/opt/q\\"uote/vaultui"`},
		{"/opt/tick`/vaultui", "\"/opt/tick\\\\`/vaultui\""},
		{"/opt/100%/vaultui", "/opt/100%%/vaultui"},
		{"/opt/o'brien 5%/vaultui", `"/opt/o'brien 5%%/vaultui"`},
	} {
		got, err := desktopExecArg(c.path)
		if err != nil || got != c.want {
			t.Errorf("%q: %s, %v; want %s", c.path, got, err, c.want)
			continue
		}
		entry, _ := desktopEntry(c.path)
		for _, l := range strings.Split(entry, "\n") {
			if v, ok := strings.CutPrefix(l, "Exec="); ok {
				if prog := desktopExecProgram(t, v); prog != c.path {
					t.Errorf("%q: Exec=%s runs %q", c.path, v, prog)
				}
			}
		}
	}
	for _, bad := range []string{"/opt/a=b/vaultui", "/opt/new\nline/vaultui"} {
		if got, err := desktopExecArg(bad); err == nil || !strings.Contains(err.Error(), "--method systemd") {
			t.Errorf("%q: %s, %v; want refused", bad, got, err)
		}
	}
}
