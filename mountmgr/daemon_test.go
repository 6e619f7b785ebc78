package mountmgr

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault"
)

func TestLifecycle(t *testing.T) {
	base := daemonEnv(t)
	cipherdir, mp, pw := newVault(t, base, crypto.AESGCM)

	c := connect(t)
	info, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: append([]byte(nil), pw...)})
	if err != nil {
		t.Fatalf("Mount: %v", err)
	}
	if info.Cipher != crypto.AESGCM.String() || info.MountPoint != mp || info.CipherDir != cipherdir {
		t.Errorf("mount info %+v", info)
	}
	data := bytes.Repeat([]byte("vaultui "), 100000)
	if err := os.WriteFile(filepath.Join(mp, "f"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	// The client goes away; the mount stays with the daemon. The kernel keeps the pages the
	// write left: drop them, so that the read reaches the daemon and counts in its statistics.
	c.Close()
	dropPages(t, filepath.Join(mp, "f"))
	if got, err := os.ReadFile(filepath.Join(mp, "f")); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("after the client closed: %v", err)
	}

	c = connect(t)
	// Refusals, each with its sentinel.
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw}); !errors.Is(err, ErrAlreadyMounted) {
		t.Errorf("mounting twice: %v", err)
	}
	other := t.TempDir()
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: other, Password: pw}); !errors.Is(err, ErrAlreadyMounted) {
		t.Errorf("same vault elsewhere: %v", err)
	}
	cd2, mp2, pw2 := newVault(t, base, crypto.XChaCha)
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cd2, MountPoint: mp2, Password: []byte("wrong")}); !errors.Is(err, vault.ErrWrongPassword) {
		t.Errorf("wrong password: %v", err)
	}
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cd2, MountPoint: filepath.Join(base, "missing"), Password: pw2}); !errors.Is(err, ErrMountpoint) {
		t.Errorf("missing mount point: %v", err)
	}
	os.WriteFile(filepath.Join(other, "x"), nil, 0o644)
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cd2, MountPoint: other, Password: pw2}); !errors.Is(err, ErrMountpoint) {
		t.Errorf("non-empty mount point: %v", err)
	}
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cd2, MountPoint: mp2, Password: pw2}); err != nil {
		t.Fatalf("second vault: %v", err)
	}

	st, err := c.Status(ctx(t))
	if err != nil || len(st) != 2 {
		t.Fatalf("status: %v %+v", err, st)
	}
	if st[0].MountPoint != mp && st[1].MountPoint != mp {
		t.Fatalf("status lacks %s: %+v", mp, st)
	}
	for _, m := range st {
		if m.MountPoint == mp && (m.Stats.BytesWritten < uint64(len(data)) || m.Stats.BytesRead < uint64(len(data)) || m.Stats.Ops == 0) {
			t.Errorf("stats %+v", m.Stats)
		}
	}

	// Busy: a process with its working directory inside.
	sh := startIn(t, mp, "sleep", "60")
	err = c.Unmount(ctx(t), mp, false)
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "sleep") {
		t.Errorf("busy unmount: %v", err)
	}
	sh.Process.Kill()
	sh.Wait()
	if err := c.Unmount(ctx(t), cipherdir, false); err != nil {
		t.Fatalf("unmount by cipherdir: %v", err)
	}
	if err := c.Unmount(ctx(t), mp, false); !errors.Is(err, ErrNotMounted) {
		t.Errorf("unmounting again: %v", err)
	}
	if err := c.UnmountAll(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if left := mountsUnder(base); len(left) != 0 {
		t.Fatalf("after unmount --all: %v", left)
	}
	if st, _ := c.Status(ctx(t)); len(st) != 0 {
		t.Fatalf("status after unmount all: %+v", st)
	}
}

func startIn(t *testing.T, dir string, name string, args ...string) *osexecCmd {
	t.Helper()
	cmd := newCmd(name, args...)
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

func TestLazyUnmountWhileBusy(t *testing.T) {
	base := daemonEnv(t)
	cipherdir, mp, pw := newVault(t, base, crypto.AESGCM)
	c := connect(t)
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(mp, "held"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Unmount(ctx(t), mp, false); !errors.Is(err, ErrBusy) {
		t.Fatalf("busy: %v", err)
	}
	if err := c.Unmount(ctx(t), mp, true); err != nil {
		t.Fatalf("lazy: %v", err)
	}
	if len(mountsUnder(base)) != 0 {
		t.Fatal("lazy unmount left the mount visible")
	}
	// The open file keeps working until closed.
	if _, err := f.Write([]byte("still here")); err != nil {
		t.Errorf("write after lazy unmount: %v", err)
	}
	f.Close()
}

func TestKill9LeavesStaleMountThatNextDaemonCleans(t *testing.T) {
	base := daemonEnv(t)
	cipherdir, mp, pw := newVault(t, base, crypto.AESGCM)
	c := connect(t)
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw}); err != nil {
		t.Fatal(err)
	}
	pid := daemonPID(t)
	c.Close()
	syscall.Kill(pid, syscall.SIGKILL)
	waitGone(t, pid)
	var st syscall.Statfs_t
	if err := syscall.Statfs(mp, &st); !errors.Is(err, syscall.ENOTCONN) {
		t.Fatalf("after kill -9, stat %s: %v (want ENOTCONN)", mp, err)
	}
	c = connect(t) // starts a new daemon, which cleans up first
	if left := mountsUnder(base); len(left) != 0 {
		t.Fatalf("stale mount not cleaned: %v", left)
	}
	log, _ := os.ReadFile(filepath.Join(base, "state", "vaultui", "daemon.log"))
	if !bytes.Contains(log, []byte("stale mount "+mp)) {
		t.Errorf("daemon log does not report the stale mount:\n%s", log)
	}
	// The new daemon reports the cleanup to the client: Status neither carries nor consumes
	// the report, the first Stale call gets it, and later ones do not.
	if st, err := c.Status(ctx(t)); err != nil || len(st) != 0 {
		t.Errorf("status after cleanup: %+v, %v", st, err)
	}
	report, err := c.Stale(ctx(t))
	if err != nil {
		t.Fatalf("Stale: %v", err)
	}
	if len(report) != 1 || report[0].MountPoint != mp || report[0].CipherDir != cipherdir ||
		!report[0].Cleaned || report[0].Error != "" || time.Since(report[0].Found) > time.Minute {
		t.Errorf("stale report %+v, want %s (vault %s) cleaned just now", report, mp, cipherdir)
	}
	if again, err := c.Stale(ctx(t)); err != nil || len(again) != 0 {
		t.Errorf("stale report delivered twice: %+v, %v", again, err)
	}
	// And the vault mounts again at the same place.
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw}); err != nil {
		t.Fatalf("remount: %v", err)
	}
}

func TestSIGTERMUnmounts(t *testing.T) {
	base := daemonEnv(t)
	cipherdir, mp, pw := newVault(t, base, crypto.AESGCM)
	c := connect(t)
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mp, "kept"), []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	pid := daemonPID(t)
	syscall.Kill(pid, syscall.SIGTERM)
	waitGone(t, pid)
	if left := mountsUnder(base); len(left) != 0 {
		t.Fatalf("SIGTERM left mounts: %v", left)
	}
	if _, err := os.Stat(filepath.Join(base, "run", "vaultui", "ctl.sock")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left behind: %v", err)
	}
}

func TestIdleUnmount(t *testing.T) {
	base := daemonEnv(t)
	cipherdir, mp, pw := newVault(t, base, crypto.AESGCM)
	c := connect(t)
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw, Idle: 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	// Idle after 2 s; the deadline leaves room for a loaded machine (CI previews with other
	// jobs beside them missed 10 s).
	deadline := time.Now().Add(30 * time.Second)
	for len(mountsUnder(base)) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("idle mount still mounted after 30 s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The event log says why it went (recorded just after the unmount finished).
	for {
		evs, err := c.Events(ctx(t), 0)
		if err == nil && len(evs) > 0 && evs[len(evs)-1].Kind == EventUnmounted && evs[len(evs)-1].Reason == ReasonIdle {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("events after an idle unmount: %+v, %v", evs, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestWatchStreams(t *testing.T) {
	base := daemonEnv(t)
	cipherdir, mp, pw := newVault(t, base, crypto.AESGCM)
	c := connect(t)
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: cipherdir, MountPoint: mp, Password: pw}); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := contextWithTimeout(15 * time.Second)
	defer cancel()
	// The rate is over the last second: the write shows in a snapshot after it, and a later
	// one is back to 0.
	n, rated, idle := 0, false, false
	err := c.Watch(wctx, func(m []MountInfo) {
		n++
		if len(m) != 1 || m[0].MountPoint != mp {
			t.Errorf("snapshot %+v", m)
			return
		}
		switch {
		case n == 1:
			os.WriteFile(filepath.Join(mp, "w"), make([]byte, 1<<20), 0o600)
		case m[0].Stats.WriteBps > 0:
			rated = true
		case rated:
			idle = true
			cancel()
		}
	})
	if !rated || !idle {
		t.Fatalf("watch: %v after %d snapshots; a write rate seen %v, then 0 %v", err, n, rated, idle)
	}
}

func TestOneDaemonPerUser(t *testing.T) {
	daemonEnv(t)
	connect(t)
	cmd, _ := DaemonCommand()
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "another daemon is running") {
		t.Fatalf("second daemon: %v: %s", err, out)
	}
}

func TestPeerCheck(t *testing.T) {
	if err := checkPeer(1000, 0); err == nil {
		t.Error("uid 1000 accepted by a root daemon")
	}
	if err := checkPeer(1000, 1000); err != nil {
		t.Error(err)
	}
	// A daemon that believes it runs as another uid refuses this process.
	a, b := socketPair(t)
	d := testDaemon(t)
	d.uid = os.Getuid() + 1
	serveTest(t, d, b)
	line, _ := json.Marshal(request{V: ProtocolVersion, ID: 1, Op: opStatus})
	a.Write(append(line, '\n'))
	resp, err := readResponse(bufio.NewReader(a))
	if err != nil || resp.Error == nil || !strings.Contains(resp.Error.Msg, "refusing connection from uid") {
		t.Fatalf("got %+v, %v; want a refusal", resp, err)
	}
}

func TestProtocolVersionMismatch(t *testing.T) {
	// A newer daemon refuses an old client's request ...
	a, b := socketPair(t)
	d := testDaemon(t)
	serveTest(t, d, b)
	a.Write([]byte(`{"v":0,"id":7,"op":"status"}` + "\n"))
	resp, err := readResponse(bufio.NewReader(a))
	if err != nil || resp.Error == nil || !errors.Is(fromWire(resp.Error), ErrDaemon) {
		t.Fatalf("old request: %+v %v", resp, err)
	}
	// ... and a client refuses a daemon speaking another version.
	dir, _ := os.MkdirTemp("", "vmmv")
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		bufio.NewReader(conn).ReadBytes('\n')
		conn.Write([]byte(`{"v":99,"id":1,"ok":true}` + "\n"))
	}()
	if _, err := dial(ctx(t), sock); !errors.Is(err, ErrDaemon) || !strings.Contains(err.Error(), "version 99") {
		t.Fatalf("newer daemon: %v", err)
	}
}

// TestStaleReportOnce: the stale mount report goes to the first status request that asks for it
// and only to that one; requests that do not ask (older clients, Status, Watch) leave it alone.
func TestStaleReportOnce(t *testing.T) {
	found := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	d := testDaemon(t)
	d.stale.mounts = []StaleMount{{MountPoint: "/m/b", CipherDir: "/c/b", Found: found, Error: "EBUSY"}}
	d.stale.unreported = []StaleMount{{MountPoint: "/m/a", CipherDir: "/c/a", Found: found, Cleaned: true}, d.stale.mounts[0]}
	a, b := socketPair(t)
	serveTest(t, d, b)
	r := bufio.NewReader(a)
	ask := func(line string) *response {
		t.Helper()
		a.Write([]byte(line + "\n"))
		resp, err := readResponse(r)
		if err != nil || resp.Error != nil {
			t.Fatalf("%s: %+v %v", line, resp, err)
		}
		return resp
	}
	// A status request from a client that predates the report.
	resp := ask(`{"v":2,"id":1,"op":"status"}`)
	if len(resp.Stale) != 0 || len(resp.Mounts) != 1 || !resp.Mounts[0].Stale || resp.Mounts[0].MountPoint != "/m/b" {
		t.Fatalf("plain status: %+v", resp)
	}
	resp = ask(`{"v":2,"id":2,"op":"status","stale_report":true}`)
	if len(resp.Stale) != 2 || resp.Stale[0].MountPoint != "/m/a" || !resp.Stale[0].Cleaned ||
		resp.Stale[1].Error != "EBUSY" || !resp.Stale[1].Found.Equal(found) {
		t.Fatalf("report: %+v", resp.Stale)
	}
	// The mount whose cleanup failed stays listed as stale until it is gone; the report is not
	// given again.
	resp = ask(`{"v":2,"id":3,"op":"status","stale_report":true}`)
	if len(resp.Stale) != 0 || len(resp.Mounts) != 1 || !resp.Mounts[0].Stale {
		t.Fatalf("after the report: %+v", resp)
	}
}

// TestStaleCleanupRetries: a stale mount whose cleanup fails is reported once as failed, listed
// as stale, retried quietly, and reported again once a retry cleans it; one that goes away by
// other means (unmount, by hand) before that report was delivered is not reported as still
// there.
func TestStaleCleanupRetries(t *testing.T) {
	stale := map[string]bool{"/m/a": true, "/m/b": true}
	fail := map[string]bool{"/m/a": true, "/m/b": true}
	d := testDaemon(t)
	d.owned = map[string]mountID{"/m/a": {}, "/m/b": {}}
	find := func(uid int, skip func(mountEntry) bool) ([]mountEntry, error) {
		var out []mountEntry
		for _, mp := range []string{"/m/a", "/m/b"} {
			e := mountEntry{MountPoint: mp, FSType: FSType, Source: "/c" + mp[2:]}
			if stale[mp] && !skip(e) {
				out = append(out, e)
			}
		}
		return out, nil
	}
	d.mtab = fakeMounts{find: find, detachFn: func(mp string) error {
		if fail[mp] {
			return syscall.EBUSY
		}
		stale[mp] = false
		return nil
	}}
	d.cleanStale()
	if st := d.status(); len(st) != 2 || !st[0].Stale || st[0].MountPoint != "/m/a" || st[1].CipherDir != "/c/b" {
		t.Fatalf("status after failed cleanups: %+v", st)
	}
	first := d.takeReport()
	if len(first) != 2 || first[0].Cleaned || first[0].Error != syscall.EBUSY.Error() || first[0].Found.IsZero() {
		t.Fatalf("first report: %+v", first)
	}
	d.cleanStale() // a retry that fails again is not news
	if r := d.takeReport(); len(r) != 0 {
		t.Fatalf("failure reported twice: %+v", r)
	}
	// /m/a: a retry succeeds, which is news; /m/b: the user unmounts it, which is not.
	fail["/m/a"] = false
	d.cleanStale()
	if st := d.status(); len(st) != 1 || st[0].MountPoint != "/m/b" {
		t.Fatalf("status after one retry succeeded: %+v", st)
	}
	fail["/m/b"] = false
	if err := d.unmountTarget("/c/b", false); err != nil {
		t.Fatalf("unmount of the stale mount: %v", err)
	}
	if st := d.status(); len(st) != 0 {
		t.Fatalf("status after both are gone: %+v", st)
	}
	second := d.takeReport()
	if len(second) != 1 || second[0].MountPoint != "/m/a" || !second[0].Cleaned ||
		!second[0].Found.Equal(first[0].Found) {
		t.Fatalf("second report: %+v", second)
	}
	// Undelivered news of a failure is corrected, not duplicated, when the mount goes away.
	d.owned["/m/a"] = mountID{} // mounted again (Mount adds it to the ledger), then stale again
	stale["/m/a"], fail["/m/a"] = true, true
	d.cleanStale()
	stale["/m/a"] = false
	d.cleanStale()
	if r := d.takeReport(); len(r) != 1 || !r[0].Cleaned || r[0].Error != "" {
		t.Fatalf("corrected report: %+v", r)
	}
}

// TestStaleFromOldDaemon: a daemon that answers a report request without the report (the field
// is optional, as it was for daemons that predate it) gives the client nothing to report, not an
// error.
func TestStaleFromOldDaemon(t *testing.T) {
	dir, _ := os.MkdirTemp("", "vmmo")
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		r := bufio.NewReader(conn)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return
			}
			var req struct{ ID uint64 }
			json.Unmarshal(line, &req)
			fmt.Fprintf(conn, `{"v":2,"id":%d,"ok":true,"mounts":[{"MountPoint":"/m"}]}`+"\n", req.ID)
		}
	}()
	c, err := dial(ctx(t), sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if report, err := c.Stale(ctx(t)); err != nil || len(report) != 0 {
		t.Fatalf("Stale from an old daemon: %+v, %v", report, err)
	}
}

func TestErrorsCrossTheSocket(t *testing.T) {
	for _, s := range kinds {
		err := fromWire(toWire(errWrap(s.err)))
		if !errors.Is(err, s.err) {
			t.Errorf("%v does not survive the wire: %v", s.err, err)
		}
	}
	// Not enough memory for the KDF: unsupported here (exit 10), and why (the hint).
	err := fromWire(toWire(fmt.Errorf("/v: %w: %w", vault.ErrUnsupported, crypto.ErrKDFMemory)))
	if !errors.Is(err, vault.ErrUnsupported) || !errors.Is(err, crypto.ErrKDFMemory) {
		t.Errorf("KDF memory error across the wire: %v", err)
	}
}

func errWrap(err error) error { return &wrapped{err} }

type wrapped struct{ err error }

func (w *wrapped) Error() string { return "context: " + w.err.Error() }
func (w *wrapped) Unwrap() error { return w.err }

func TestParseMountInfo(t *testing.T) {
	in := `36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw,errors=continue
100 36 0:52 / /tmp/with\040space rw,nosuid,nodev,relatime shared:5 - fuse.vaultui /data/my\040vault rw,user_id=1000,group_id=1000,default_permissions
`
	got, err := parseMountInfo(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1].MountPoint != "/tmp/with space" || got[1].FSType != FSType ||
		got[1].Source != "/data/my vault" || got[1].UserID != 1000 || got[0].UserID != -1 {
		t.Fatalf("%+v", got)
	}
	if _, err := parseMountInfo(strings.NewReader("garbage\n")); err == nil {
		t.Error("garbage accepted")
	}
}

// TestClientRecovers: a cancelled call or a daemon restart does not leave the client broken.
func TestClientRecovers(t *testing.T) {
	daemonEnv(t)
	c := connect(t)
	cancelled, cancel := contextWithTimeout(time.Hour)
	cancel()
	if _, err := c.Status(cancelled); err == nil {
		t.Fatal("status with a cancelled context succeeded")
	}
	if _, err := c.Status(ctx(t)); err != nil {
		t.Fatalf("after a cancelled call: %v", err)
	}
	stopDaemon(t)
	if _, err := c.Status(ctx(t)); !errors.Is(err, ErrDaemon) {
		t.Fatalf("daemon gone: %v", err)
	}
	connect(t) // starts a new daemon
	if _, err := c.Status(ctx(t)); err != nil {
		t.Fatalf("after the daemon restarted: %v", err)
	}
	c.Close()
	if _, err := c.Status(ctx(t)); !errors.Is(err, ErrDaemon) {
		t.Fatalf("closed client: %v", err)
	}
}

// TestDaemonLeavesClientDirAlone: a daemon started from inside a mount must not keep it busy.
func TestDaemonLeavesClientDirAlone(t *testing.T) {
	daemonEnv(t)
	dir := t.TempDir()
	old, _ := os.Getwd()
	os.Chdir(dir)
	defer os.Chdir(old)
	connect(t)
	pid := daemonPID(t)
	cwd, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "cwd"))
	if err != nil || cwd != "/" {
		t.Fatalf("daemon cwd %q (%v), want /", cwd, err)
	}
}

// TestOtherUIDRefused connects as nobody to a socket opened up on purpose (mode 0666 in 0755
// directories): the daemon's peer check must still refuse it. The client is this test binary,
// copied where nobody can run it.
func TestOtherUIDRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a client as another user")
	}
	base := daemonEnv(t)
	connect(t)
	sock := SocketPath()
	for _, p := range []string{base, filepath.Dir(filepath.Dir(sock)), filepath.Dir(sock)} {
		os.Chmod(p, 0o755)
	}
	// Clients (the cleanup's stopDaemon) refuse a socket directory others can enter.
	t.Cleanup(func() { os.Chmod(filepath.Dir(sock), 0o700) })
	os.Chmod(sock, 0o666)
	bin := copyTestBinary(t, base, "client.test")
	cmd := osexec.Command(bin)
	cmd.Env = append(os.Environ(), testForeignClientEnv+"="+sock)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("foreign client: %v: %s", err, out)
	}
	if !strings.Contains(string(out), "refusing connection from uid 65534") || strings.Contains(string(out), `"ok":true`) {
		t.Fatalf("uid 65534 got: %s", out)
	}
}

// TestStaleOnlyFromOwnLedger: a daemon cleans up only the stale mounts its own socket
// directory's ledger names, so daemons of other runtime dirs (tests side by side) keep theirs
// to clean and report; the ledger then keeps only what is still to clean.
func TestStaleOnlyFromOwnLedger(t *testing.T) {
	ledger := filepath.Join(t.TempDir(), "mounts")
	if err := writeLedger(ledger, map[string]mountID{"/m/a": {}, "/m/gone": {}}); err != nil {
		t.Fatal(err)
	}
	owned, err := readLedger(ledger)
	_, a := owned["/m/a"]
	_, gone := owned["/m/gone"]
	if err != nil || !a || !gone || len(owned) != 2 {
		t.Fatalf("readLedger = %v, %v", owned, err)
	}
	d := testDaemon(t)
	d.ledger, d.owned = ledger, owned
	var detached []string
	find := func(uid int, skip func(mountEntry) bool) ([]mountEntry, error) {
		var out []mountEntry
		for _, mp := range []string{"/m/a", "/m/b"} { // /m/b: another daemon's
			e := mountEntry{MountPoint: mp, FSType: FSType, Source: "/c" + mp[2:]}
			if !skip(e) {
				out = append(out, e)
			}
		}
		return out, nil
	}
	d.mtab = fakeMounts{find: find, detachFn: func(mp string) error { detached = append(detached, mp); return nil }}
	d.cleanStale()
	if !slices.Equal(detached, []string{"/m/a"}) {
		t.Errorf("detached %v, want only /m/a (the ledger's)", detached)
	}
	if r := d.takeReport(); len(r) != 1 || r[0].MountPoint != "/m/a" || !r[0].Cleaned {
		t.Errorf("report %+v, want /m/a cleaned", r)
	}
	if owned, _ := readLedger(ledger); len(owned) != 0 {
		t.Errorf("ledger after cleanup = %v, want empty", owned)
	}
}

// TestDialStartsNoDaemon: Dial is for callers that run their own daemon; with nothing on the
// socket it fails with ErrDaemon instead of starting one.
func TestDialStartsNoDaemon(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o700)
	sock := filepath.Join(dir, "ctl.sock")
	if _, err := Dial(context.Background(), sock); !errors.Is(err, ErrDaemon) {
		t.Fatalf("Dial with no daemon: %v, want ErrDaemon", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("Dial left %v behind", ents)
	}
}

// dropPages drops the kernel's cached pages of file p.
func dropPages(t *testing.T, p string) {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
}
