package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/vaultui/vaultui/vault/cryptomator/cmfixture"
)

// TestMountScripts runs testdata/mount/*.txtar: the mount commands end to end, through the
// real daemon (this test binary started as "vaultui daemon"). Each script gets its own
// runtime dir, so its own daemon, which is stopped when the script ends.
func TestMountScripts(t *testing.T) {
	testscript.Run(t, mountScriptParams(t, "testdata/mount", nil))
}

// mountScriptParams runs the scripts in dir with their own daemon each; extra, if set, adds
// to each script's environment.
func mountScriptParams(t *testing.T, dir string, extra func(env *testscript.Env)) testscript.Params {
	return testscript.Params{
		Dir: dir,
		Setup: func(env *testscript.Env) error {
			if extra != nil {
				extra(env)
			}
			// A unix socket path must fit in 108 bytes; $WORK can be long.
			run, err := os.MkdirTemp("", "vcli")
			if err != nil {
				return err
			}
			env.Setenv("CRYPTOMATOR", cmfixture.Dir())
			env.Setenv("HOME", env.WorkDir+"/home")
			env.Setenv("XDG_CONFIG_HOME", env.WorkDir+"/config")
			env.Setenv("XDG_STATE_HOME", env.WorkDir+"/state")
			// A second runtime dir, so a second daemon, for scripts that need one ($RUN2;
			// $RUN is the first).
			run2, err := os.MkdirTemp("", "vcli")
			if err != nil {
				return err
			}
			env.Setenv("XDG_RUNTIME_DIR", run)
			env.Setenv("RUN", run)
			env.Setenv("RUN2", run2)
			env.Defer(func() {
				stopTestDaemon(t, run)
				stopTestDaemon(t, run2)
				os.RemoveAll(run)
				os.RemoveAll(run2)
				if mounts, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(mounts), env.WorkDir) {
					t.Errorf("mounts left under %s", env.WorkDir)
				}
			})
			return os.MkdirAll(env.WorkDir+"/home", 0o700)
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "fuse": // this user can mount (as root directly, else through fusermount3)
				return depCondition("dep:fuse")
			case "root": // what only root may do: mount(8), namespaces, another user's files
				return os.Geteuid() == 0, nil
			}
			return depCondition(cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":      cmdExits,
			"flipbyte":   cmdFlipByte,
			"killdaemon": cmdKillDaemon,
			"masterkey":  cmdMasterKey,
			"sametree":   cmdSameTree,
			"untar":      cmdUntar,
			"cmcheck":    cmdCryptomatorCheck,
		},
	}
}

// stopTestDaemon sends SIGTERM to the daemon of runtime dir run (its pid is in the lock file)
// and waits until it has unmounted everything and exited.
func stopTestDaemon(t *testing.T, run string) {
	b, err := os.ReadFile(filepath.Join(run, "vaultui", "daemon.lock"))
	if err != nil {
		return
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return
	}
	syscall.Kill(pid, syscall.SIGTERM)
	for i := 0; i < 500; i++ {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		var ws syscall.WaitStatus
		syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("daemon %d did not exit on SIGTERM", pid)
	syscall.Kill(pid, syscall.SIGKILL)
}

// killdaemon: kill -9 the script's mount daemon, as a crash would, and wait until it is dead:
// its mounts are then stale ("transport endpoint is not connected").
func cmdKillDaemon(ts *testscript.TestScript, neg bool, args []string) {
	sig := syscall.SIGKILL
	if len(args) == 1 && args[0] == "-TERM" {
		sig, args = syscall.SIGTERM, nil // a clean stop: the daemon unmounts first
	}
	if neg || len(args) != 0 {
		ts.Fatalf("usage: killdaemon [-TERM]")
	}
	b, err := os.ReadFile(filepath.Join(ts.Getenv("XDG_RUNTIME_DIR"), "vaultui", "daemon.lock"))
	ts.Check(err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	ts.Check(err)
	ts.Check(syscall.Kill(pid, sig))
	// The daemon is not our child (it was started by a "vaultui" command), so it may linger as
	// a zombie; by then its files, /dev/fuse among them, are closed.
	for i := 0; i < 500; i++ {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return
		}
		if _, after, ok := strings.Cut(string(stat), ") "); ok && strings.HasPrefix(after, "Z") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	ts.Fatalf("daemon %d still alive after %v", pid, sig)
}

// TestReadmeDocumentsMountCommands keeps docs/reference.md's Mounting section true to the commands.
func TestReadmeDocumentsMountCommands(t *testing.T) {
	data, err := os.ReadFile("../docs/reference.md")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range commands {
		if c.group != groupMounts {
			continue
		}
		n++
		usage := strings.TrimSpace("usage: vaultui " + c.name + " " + c.args)
		if !strings.Contains(string(data), usage+"\n") {
			t.Errorf("docs/reference.md lacks %q", usage)
		}
	}
	if n != 8 {
		t.Errorf("%d mount commands registered, want mount, unmount, status, events, forget-password, autostart, daemon, bench", n)
	}
}

// sametree A B: the trees at A and B hold the same names, types, permission bits (with
// setuid, setgid, sticky), modification times, file contents and symlink targets.
func cmdSameTree(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: sametree A B")
	}
	a, b := ts.MkAbs(args[0]), ts.MkAbs(args[1])
	seen := 0
	ts.Check(filepath.WalkDir(a, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(a, p)
		ia, err := os.Lstat(p)
		if err != nil {
			return err
		}
		ib, err := os.Lstat(filepath.Join(b, rel))
		if err != nil {
			return fmt.Errorf("%s: in %s only", rel, args[0])
		}
		if ia.Mode() != ib.Mode() {
			return fmt.Errorf("%s: mode %v and %v", rel, ia.Mode(), ib.Mode())
		}
		if rel != "." && !ia.ModTime().Equal(ib.ModTime()) {
			return fmt.Errorf("%s: modified %v and %v", rel, ia.ModTime(), ib.ModTime())
		}
		switch {
		case ia.Mode().IsRegular():
			ca, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			cb, err := os.ReadFile(filepath.Join(b, rel))
			if err != nil {
				return err
			}
			if !bytes.Equal(ca, cb) {
				return fmt.Errorf("%s: contents differ", rel)
			}
		case ia.Mode()&fs.ModeSymlink != 0:
			la, _ := os.Readlink(p)
			lb, _ := os.Readlink(filepath.Join(b, rel))
			if la != lb {
				return fmt.Errorf("%s: symlink to %q and %q", rel, la, lb)
			}
		}
		seen++
		return nil
	}))
	ts.Check(filepath.WalkDir(b, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		seen--
		return nil
	}))
	if seen != 0 {
		ts.Fatalf("%s holds entries that %s does not", args[1], args[0])
	}
}
