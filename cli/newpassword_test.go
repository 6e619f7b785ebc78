package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal: the master the test types into and reads from, and the
// path of the terminal the code under test asks on.
func openPTY(t *testing.T) (master *os.File, tty string) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	return m, fmt.Sprintf("/dev/pts/%d", n)
}

// A new password typed on the terminal is rated as the TUI rates it (app.RatePassword),
// between the two prompts, so a weak one can still be given up.
func TestNewPasswordIsRated(t *testing.T) {
	for _, c := range []struct{ pw, want string }{
		{"password123", "strength: weak, a common password"},
		{"stump tidal cradle lurk", "strength: strong (an estimate)"},
	} {
		m, tty := openPTY(t)
		e := &env{stdin: strings.NewReader(""), stderr: io.Discard, tty: tty}
		var out bytes.Buffer
		done := make(chan struct{})
		go func() { io.Copy(&out, m); close(done) }()
		fmt.Fprintf(m, "%s\n%s\n", c.pw, c.pw)
		pw, err := e.readNewPassword(&passSource{}, "Password for the new vault: ")
		if err != nil || string(pw) != c.pw {
			t.Fatalf("readNewPassword = %q, %v", pw, err)
		}
		m.Close()
		<-done
		got := out.String()
		if i, j := strings.Index(got, c.want), strings.Index(got, "Repeat"); i < 0 || j < i {
			t.Errorf("the terminal shows %q, want %q before the second prompt", got, c.want)
		}
	}
}
