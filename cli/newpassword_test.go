package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/vault"
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
		var mu sync.Mutex
		var out bytes.Buffer
		go func() {
			b := make([]byte, 256)
			for {
				n, err := m.Read(b)
				mu.Lock()
				out.Write(b[:n])
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
		fmt.Fprintf(m, "%s\n%s\n", c.pw, c.pw)
		pw, err := e.readPassword(&passSource{}, "Password for the new vault: ", true)
		if err != nil || string(pw) != c.pw {
			t.Fatalf("readPassword(isNew) = %q, %v", pw, err)
		}
		// What was written to the terminal may still be on its way to the master.
		var got string
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			mu.Lock()
			got = out.String()
			mu.Unlock()
			if i := strings.Index(got, "Repeat"); i >= 0 && strings.Contains(got[i:], "\n") {
				break
			}
		}
		if i, j := strings.Index(got, c.want), strings.Index(got, "Repeat"); i < 0 || j < i {
			t.Errorf("the terminal shows %q, want %q before the second prompt", got, c.want)
		}
	}
}

// A wrong password's hint names where the password came from: a passfile, a program, or
// the terminal (where no --passfile was given, it is not the thing to check).
func TestWrongPasswordHintNamesTheSource(t *testing.T) {
	wrong := fmt.Errorf("v: %w", vault.ErrWrongPassword)
	m, tty := openPTY(t)
	e := &env{stdin: strings.NewReader(""), stderr: io.Discard, tty: tty}
	go io.Copy(io.Discard, m)
	fmt.Fprintf(m, "typed\n")
	if _, err := e.readPassword(&passSource{}, "Password: ", false); err != nil {
		t.Fatal(err)
	}
	h := hints(e.explain(wrong))
	if len(h) != 1 || strings.Contains(h[0], "passfile") || !strings.Contains(h[0], "typed") {
		t.Errorf("typed on the terminal: hints %q", h)
	}
	if h := hints((&env{}).explain(wrong)); len(h) != 1 || strings.Contains(h[0], "passfile") {
		t.Errorf("from the keyring: hints %q", h)
	}
	if h := hints((&env{}).explain(withHint(wrong, "own hint"))); len(h) != 1 || h[0] != "own hint" {
		t.Errorf("a hint of its own is kept alone: %q", h)
	}
}
