package cli

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/testdeps"
	"github.com/vaultui/vaultui/vault/cryptomator/cmfixture"
	"golang.org/x/sys/unix"
)

// fixturesDir holds the gocryptfs fixtures (one directory per vault with
// cipher.tar and password), kept by the vault package's tests. Scripts use
// them as $FIXTURES and fail if they are missing.
const fixturesDir = "../vault/testdata/fixtures"

// TestMain lets testscript run "vaultui" in a child process of the test
// binary, through the real Main, with no terminal to ask passwords on: the
// child leaves the test's session, and with it its controlling terminal, so
// opening /dev/tty fails as it does under cron or systemd.
func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == crypto.KDFHelperArg {
		// A costly key derivation re-executes the running binary, this one (see crypto.KDFHelperArg);
		// in a script's "vaultui" it is the hidden command.
		if err := crypto.ServeKDFHelper(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	testscript.Main(m, map[string]func(){
		"vaultui": func() {
			// A daemon the command starts is already a session leader of its own.
			if sid, _ := unix.Getsid(0); sid != os.Getpid() {
				if _, err := unix.Setsid(); err != nil {
					fmt.Fprintf(os.Stderr, "test setup: leaving the terminal's session: %v\n", err)
					os.Exit(99)
				}
			}
			// The command's work keeps to one thread: strace counts the calls at which the
			// crash tests kill per thread, and the Go scheduler would otherwise move the
			// work to another thread after a slow call such as fsync (internal/crashtest).
			runtime.LockOSThread()
			os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
	})
}

// TestScripts runs testdata/script/*.txtar. Each script gets its own
// $WORK, with HOME and XDG_CONFIG_HOME inside it, so the registry is fresh.
func TestScripts(t *testing.T) {
	fixtures, err := filepath.Abs(fixturesDir)
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("HOME", env.WorkDir+"/home")
			env.Setenv("XDG_CONFIG_HOME", env.WorkDir+"/config")
			env.Setenv("FIXTURES", fixtures)
			env.Setenv("CRYPTOMATOR", cmfixture.Dir())
			// No system bus, so no logind: lock policies cannot work, on every machine alike.
			env.Setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path="+env.WorkDir+"/no-system-bus")
			return os.MkdirAll(env.WorkDir+"/home", 0o700)
		},
		Condition: depCondition,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"untar":       cmdUntar,
			"flipbyte":    cmdFlipByte,
			"sparse":      cmdSparse,
			"exits":       cmdExits,
			"masterkey":   cmdMasterKey,
			"sha256":      cmdSHA256,
			"importtree":  cmdImportTree,
			"splitfolder": cmdSplitFolder,
			"badcopy":     cmdBadCopy,
			"cmcheck":     cmdCryptomatorCheck,
			"cmflip":      cmdCryptomatorFlip,
		},
	})
}

// untar TARFILE DIR: extract a fixture's cipher.tar into DIR, keeping
// all-zero 4 KiB runs as holes.
// depCondition answers a script's [dep:NAME] condition: whether the test dependency NAME
// (testdeps) works here. A missing one that VAULTUI_REQUIRE names is an error, which fails
// the script instead of letting it skip.
func depCondition(cond string) (bool, error) {
	name, ok := strings.CutPrefix(cond, "dep:")
	if !ok {
		return false, errors.New("unknown condition " + cond)
	}
	msg, fail := testdeps.Verdict(testdeps.Dep(name))
	if fail {
		return false, errors.New(msg)
	}
	return msg == "", nil
}

func cmdUntar(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: untar TARFILE DIR")
	}
	ts.Check(untar(ts.MkAbs(args[0]), ts.MkAbs(args[1])))
}

func untar(tarPath, dest string) error {
	f, err := os.Open(tarPath)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		target := filepath.Join(dest, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(target, filepath.Clean(dest)+string(filepath.Separator)) && target != filepath.Clean(dest) {
			return fmt.Errorf("tar entry %q leaves the destination", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
			defer os.Chmod(target, os.FileMode(h.Mode).Perm()) // after its contents are written
		case tar.TypeSymlink:
			if err := os.Symlink(h.Linkname, target); err != nil {
				return err
			}
		case tar.TypeReg, tar.TypeGNUSparse: // the reader fills holes with zeros
			if err := writeSparse(target, tr, h.Size, os.FileMode(h.Mode).Perm()); err != nil {
				return err
			}
		default:
			return fmt.Errorf("tar entry %q: unsupported type %c", h.Name, h.Typeflag)
		}
	}
}

func writeSparse(path string, r io.Reader, size int64, mode os.FileMode) error {
	out, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	buf := make([]byte, 4096)
	zero := make([]byte, 4096)
	var off int64
	for off < size {
		n, err := io.ReadFull(r, buf[:min(int64(len(buf)), size-off)])
		if err != nil {
			out.Close()
			return err
		}
		if !bytes.Equal(buf[:n], zero[:n]) {
			if _, err := out.WriteAt(buf[:n], off); err != nil {
				out.Close()
				return err
			}
		}
		off += int64(n)
	}
	if err := out.Truncate(size); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(path, mode)
}

// flipbyte FILE OFFSET: invert one byte of FILE (made writable if needed).
func cmdFlipByte(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: flipbyte [DIR/]FILE|[DIR/]@LIST OFFSET")
	}
	// DIR/@LIST: the file is the one LIST names on its first line (a cipher path a command
	// printed), in DIR.
	path := args[0]
	if dir, list, ok := strings.Cut(path, "@"); ok && (dir == "" || strings.HasSuffix(dir, "/")) {
		b, err := os.ReadFile(ts.MkAbs(list))
		ts.Check(err)
		name, _, _ := strings.Cut(string(b), "\n")
		path = dir + name
	}
	path = ts.MkAbs(path)
	off, err := strconv.ParseInt(args[1], 0, 64)
	ts.Check(err)
	st, err := os.Stat(path)
	ts.Check(err)
	ts.Check(os.Chmod(path, 0o600))
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	ts.Check(err)
	defer f.Close()
	b := make([]byte, 1)
	_, err = f.ReadAt(b, off)
	ts.Check(err)
	b[0] ^= 0xff
	_, err = f.WriteAt(b, off)
	ts.Check(err)
	ts.Check(os.Chmod(path, st.Mode().Perm()))
	// As bit rot would: the modification time stays (an export copies it).
	ts.Check(os.Chtimes(path, st.ModTime(), st.ModTime()))
}

// sparse FILE: succeeds when FILE uses fewer disk blocks than its size.
func cmdSparse(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: sparse FILE")
	}
	allocated, size, err := diskUsage(ts.MkAbs(args[0]))
	ts.Check(err)
	isSparse := allocated < size
	if isSparse == neg {
		ts.Fatalf("%s: %d bytes allocated for %d bytes of size; sparse=%v", args[0], allocated, size, isSparse)
	}
}

// exits CODE PROGRAM ARGS...: run PROGRAM and require exit code CODE; its
// stdout and stderr are kept for the stdout/stderr commands that follow.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("running %s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with %d, want %d", args[1], got, want)
	}
}

// masterkey FILE VAR: set VAR to the master key printed in FILE (init's
// output), as the user would type it back: the indented lines, joined.
func cmdMasterKey(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: masterkey FILE VAR")
	}
	var key strings.Builder
	lines := strings.Split(ts.ReadFile(args[0]), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "Your master key is:") {
			for _, k := range lines[i+1:] {
				if k = strings.TrimSpace(k); k != "" {
					key.WriteString(k)
				} else if key.Len() > 0 {
					break
				}
			}
			break
		}
	}
	if key.Len() == 0 {
		ts.Fatalf("no master key in %s", args[0])
	}
	ts.Setenv(args[1], key.String())
}

// sha256 FILE HEX: FILE's SHA-256 must be HEX.
// cmcheck DIR: DIR holds exactly the Cryptomator fixture's plaintext (cmfixture.CheckTree).
func cmdCryptomatorCheck(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: cmcheck DIR")
	}
	ts.Check(cmfixture.CheckTree(ts.MkAbs(args[0])))
}

// cmflip VAULT SIZE CHUNK: flip a byte in chunk CHUNK of the Cryptomator fixture's only file
// of SIZE bytes (cmfixture.FlipInChunk).
func cmdCryptomatorFlip(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: cmflip VAULT SIZE CHUNK")
	}
	size, err := strconv.ParseInt(args[1], 10, 64)
	ts.Check(err)
	chunk, err := strconv.ParseInt(args[2], 10, 64)
	ts.Check(err)
	_, err = cmfixture.FlipInChunk(ts.MkAbs(args[0]), size, chunk)
	ts.Check(err)
}

func cmdSHA256(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: sha256 FILE HEX")
	}
	sum := sha256.Sum256([]byte(ts.ReadFile(args[0])))
	if (hex.EncodeToString(sum[:]) == args[1]) == neg {
		ts.Fatalf("%s: sha256 %x, want %s%s", args[0], sum, map[bool]string{true: "not ", false: ""}[neg], args[1])
	}
}

func TestParseInterspersed(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		positional []string
		json       bool
		name       string
	}{
		{[]string{"a", "--json", "b"}, []string{"a", "b"}, true, ""},
		{[]string{"--name", "x", "dir"}, []string{"dir"}, false, "x"},
		{[]string{"dir", "--name=x", "--json"}, []string{"dir"}, true, "x"},
		{[]string{"--", "--json", "-x"}, []string{"--json", "-x"}, false, ""},
		{[]string{"a", "--", "--name"}, []string{"a", "--name"}, false, ""},
		{[]string{"-"}, []string{"-"}, false, ""},
		{nil, nil, false, ""},
	} {
		fs := newFlagSet("t")
		j := fs.Bool("json", false, "")
		n := fs.String("name", "", "")
		got, err := parseInterspersed(fs, tc.args)
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.positional) || *j != tc.json || *n != tc.name {
			t.Errorf("%q: got %q json=%v name=%q", tc.args, got, *j, *n)
		}
	}
	fs := newFlagSet("t")
	if _, err := parseInterspersed(fs, []string{"a", "--nope"}); err == nil {
		t.Error("unknown flag after a positional argument was accepted")
	}
}

func TestReadPassfile(t *testing.T) {
	dir := t.TempDir()
	e := &env{stdin: strings.NewReader("from stdin\nsecond line\n")}
	for _, tc := range []struct{ content, want string }{
		{"pw\n", "pw"},
		{"pw", "pw"},
		{"two words \nsecond line\n", "two words "},
		{"crlf\r\n", "crlf\r"}, // like gocryptfs: only the newline goes
	} {
		p := filepath.Join(dir, "pw")
		os.WriteFile(p, []byte(tc.content), 0o600)
		got, err := e.readPassfile(p)
		if err != nil || string(got) != tc.want {
			t.Errorf("%q: got %q, %v; want %q", tc.content, got, err, tc.want)
		}
	}
	for _, content := range []string{"", "\n", "\nsecond\n", strings.Repeat("x", maxPasswordLen+1)} {
		p := filepath.Join(dir, "pw")
		os.WriteFile(p, []byte(content), 0o600)
		if _, err := e.readPassfile(p); err == nil {
			t.Errorf("%.20q: accepted", content)
		}
	}
	if _, err := e.readPassfile(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	got, err := e.readPassfile("-")
	if err != nil || string(got) != "from stdin" {
		t.Errorf("stdin: %q, %v", got, err)
	}
}

func TestNoTerminalAsksForPassfile(t *testing.T) {
	e := &env{stdin: strings.NewReader(""), stderr: io.Discard, tty: filepath.Join(t.TempDir(), "no-tty")}
	_, err := e.readPassword(&passSource{}, "Password: ", false)
	if !errors.Is(err, errNoTerminal) {
		t.Fatalf("got %v", err)
	}
	if h := hints(err); len(h) != 1 || !strings.Contains(h[0], "--passfile") {
		t.Errorf("hints %q do not mention --passfile", h)
	}
}

func TestEveryCommandHasHelp(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range commands {
		if seen[c.name] {
			t.Errorf("command %q registered twice", c.name)
		}
		seen[c.name] = true
		if c.summary == "" || c.args == "" && c.name != "daemon" && c.name != "status" && c.name != "bench" && c.name != "man" && c.name != "version" {
			t.Errorf("command %q lacks a summary or usage", c.name)
		}
		var out, errb bytes.Buffer
		if code := Main([]string{c.name, "--help"}, strings.NewReader(""), &out, &errb); code != 0 {
			t.Errorf("%s --help: exit %d, stderr %q", c.name, code, errb.String())
		}
		if !strings.HasPrefix(out.String(), usageLine(c)+"\n") {
			t.Errorf("%s --help does not start with its usage:\n%s", c.name, out.String())
		}
	}
}

// diskUsage returns the bytes allocated on disk for path and its size.
func diskUsage(path string) (allocated, size int64, err error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0, 0, err
	}
	return st.Blocks * 512, st.Size, nil
}
