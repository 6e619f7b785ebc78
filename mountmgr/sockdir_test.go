package mountmgr

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	osexec "os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// runFakeDaemon is the impostor of testFakeDaemonEnv: it listens on sock (world-writable),
// answers each request line as a daemon would, and on SIGTERM prints "received N bytes: ...".
func runFakeDaemon(sock string) int {
	ln, err := net.Listen("unix", sock)
	if err != nil {
		fmt.Println("listen:", err)
		return 1
	}
	os.Chmod(sock, 0o666)
	var mu sync.Mutex
	var got []byte
	var conns sync.WaitGroup
	accepting := make(chan struct{})
	go func() {
		defer close(accepting)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer conns.Done()
				defer conn.Close()
				r := bufio.NewReader(conn)
				for {
					line, err := r.ReadBytes('\n')
					mu.Lock()
					got = append(got, line...)
					mu.Unlock()
					if err != nil {
						return
					}
					var req struct{ ID uint64 }
					json.Unmarshal(line, &req)
					fmt.Fprintf(conn, `{"v":%d,"id":%d,"ok":true,"pid":1,"info":{}}`+"\n", ProtocolVersion, req.ID)
				}
			}()
		}
	}()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	fmt.Println("ready")
	<-sig
	// The clients have returned (closed their connections) when the test stops us: read what
	// any connection still carries, to its end. Bounded, so a client left open cannot hang us.
	ln.Close()
	<-accepting
	read := make(chan struct{})
	go func() { conns.Wait(); close(read) }()
	select {
	case <-read:
	case <-time.After(10 * time.Second):
		fmt.Println("a connection stayed open for 10 s after SIGTERM")
		return 1
	}
	mu.Lock()
	fmt.Printf("received %d bytes: %q\n", len(got), got)
	mu.Unlock()
	return 0
}

// startImpostor runs the test binary as uid/gid 65534 listening on sock; stop returns what it
// received.
func startImpostor(t *testing.T, base, sock string) (stop func() string) {
	t.Helper()
	bin := copyTestBinary(t, base, "impostor.test")
	cmd := osexec.Command(bin)
	cmd.Env = append(os.Environ(), testFakeDaemonEnv+"="+sock)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	if line, err := r.ReadString('\n'); err != nil || line != "ready\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("impostor did not start: %q %v", line, err)
	}
	return func() string {
		cmd.Process.Signal(syscall.SIGTERM)
		rest, _ := r.ReadString('\n')
		cmd.Wait()
		return rest
	}
}

// attackerEnv: no XDG_RUNTIME_DIR, so the socket directory is $TMPDIR/vaultui-UID, with
// TMPDIR a fresh directory others can enter (like /tmp).
func attackerEnv(t *testing.T) (base, sockDir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the impostor as another user")
	}
	base, err := os.MkdirTemp("", "vmma")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("TMPDIR", base)
	t.Setenv("XDG_STATE_HOME", filepath.Join(base, "state"))
	return base, SocketDir()
}

// tryMount does what "vaultui mount" does: connect, then send the password.
func tryMount(t *testing.T) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Mount(ctx, MountRequest{CipherDir: "/v", MountPoint: "/m", Password: []byte("hunter2-secret")})
	return err
}

// TestImpostorDirGetsNothing: another user pre-creates the socket directory (world-writable)
// and listens in it. The client refuses the directory and sends it nothing, not even a ping.
func TestImpostorDirGetsNothing(t *testing.T) {
	base, dir := attackerEnv(t)
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o777)
	os.Chown(dir, 65534, 65534)
	stop := startImpostor(t, base, filepath.Join(dir, "ctl.sock"))
	err := tryMount(t)
	got := stop()
	if !strings.HasPrefix(got, "received 0 bytes") {
		t.Errorf("the impostor %s", got)
	}
	var unsafe *unsafeSocketError
	if !errors.As(err, &unsafe) || !errors.Is(err, ErrDaemon) {
		t.Fatalf("want a refusal wrapping ErrDaemon, got %v", err)
	}
	for _, want := range []string{dir, "uid 65534", "XDG_RUNTIME_DIR"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "start.lock")); err == nil {
		t.Error("the client went on to start a daemon in the refused directory")
	}
}

// TestImpostorServerGetsNothing: the directory is right (ours, 0700) but the socket in it
// belongs to another user's process: SO_PEERCRED refuses it before any byte is sent.
func TestImpostorServerGetsNothing(t *testing.T) {
	base, dir := attackerEnv(t)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	att := filepath.Join(base, "attacker")
	os.Mkdir(att, 0o755)
	os.Chown(att, 65534, 65534)
	stop := startImpostor(t, base, filepath.Join(att, "ctl.sock"))
	if err := os.Rename(filepath.Join(att, "ctl.sock"), filepath.Join(dir, "ctl.sock")); err != nil {
		stop()
		t.Fatal(err)
	}
	err := tryMount(t)
	got := stop()
	if !strings.HasPrefix(got, "received 0 bytes") {
		t.Errorf("the impostor %s", got)
	}
	if !errors.Is(err, ErrDaemon) || !strings.Contains(err.Error(), "runs as uid 65534") {
		t.Fatalf("want a refusal naming uid 65534, got %v", err)
	}
}

// TestSocketDirRule: what the client and the daemon refuse, without repairing anything.
func TestSocketDirRule(t *testing.T) {
	base := t.TempDir()
	loose := filepath.Join(base, "loose")
	os.Mkdir(loose, 0o755)
	os.Chmod(loose, 0o755)
	real := filepath.Join(base, "real")
	os.Mkdir(real, 0o700)
	link := filepath.Join(base, "link")
	os.Symlink(real, link)
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o600)
	for _, c := range []struct{ dir, want string }{
		{loose, "mode 0755"},
		{link, "symbolic link"},
		{file, "not a directory"},
	} {
		_, err := dialSocket(context.Background(), filepath.Join(c.dir, "ctl.sock"))
		var unsafe *unsafeSocketError
		if !errors.As(err, &unsafe) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.dir) {
			t.Errorf("dial in %s: %v, want a refusal saying %q", c.dir, err, c.want)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err = Serve(ctx, ServeOptions{SocketPath: filepath.Join(c.dir, "ctl.sock"), Logger: testLogger(t)})
		if !errors.As(err, &unsafe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("daemon in %s: %v, want a refusal saying %q", c.dir, err, c.want)
		}
	}
	if fi, _ := os.Stat(loose); fi.Mode().Perm() != 0o755 {
		t.Errorf("the daemon changed the loose directory's mode to %v", fi.Mode().Perm())
	}
	// A missing directory is created 0700 whatever the umask.
	os.Mkdir(filepath.Join(base, "sub"), 0o700)
	old := syscall.Umask(0o277)
	defer syscall.Umask(old)
	fresh := filepath.Join(base, "sub", "fresh")
	if err := ensureSocketDir(fresh); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(fresh); fi.Mode().Perm() != 0o700 {
		t.Errorf("fresh socket dir mode %v", fi.Mode().Perm())
	}
}
