package mountmgr

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault"
)

// TestHostileConfigSparesOtherMounts: while and after hostile configs are tried (scrypt
// parameters needing 256 GiB, which used to kill the daemon with a fatal out-of-memory, a
// FIFO that used to hang it, parameters out of range), a mounted good vault keeps serving and
// the daemon is the same process.
func TestHostileConfigSparesOtherMounts(t *testing.T) {
	base := daemonEnv(t)
	good, mp, pw := newVault(t, base, crypto.AESGCM)
	c := connect(t)
	if _, err := c.Mount(ctx(t), MountRequest{CipherDir: good, MountPoint: mp, Password: append([]byte(nil), pw...)}); err != nil {
		t.Fatal(err)
	}
	defer c.Unmount(ctx(t), mp, false)
	data := bytes.Repeat([]byte("still here "), 10000)
	if err := os.WriteFile(filepath.Join(mp, "f"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	pid := daemonPID(t)

	// Reader of the good mount for the whole test.
	stop := make(chan struct{})
	var reads, failures atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			got, err := os.ReadFile(filepath.Join(mp, "f"))
			if err != nil || !bytes.Equal(got, data) {
				failures.Add(1)
			}
			reads.Add(1)
			time.Sleep(5 * time.Millisecond)
		}
	}()

	hostile := func(edit func(m map[string]any)) string {
		cd, _, _ := newVault(t, base, crypto.AESGCM)
		p := filepath.Join(cd, crypto.ConfName)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		json.Unmarshal(b, &m)
		edit(m)
		b, _ = json.Marshal(m)
		os.Chmod(p, 0o600)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return cd
	}
	scryptSet := func(k string, v int) func(m map[string]any) {
		return func(m map[string]any) { m["ScryptObject"].(map[string]any)[k] = v }
	}
	huge := crypto.ScryptKDF{N: 1 << 28, R: 8, P: 1}
	cases := []struct {
		name, dir string
		is        error
		want      string
	}{
		{"R=1024", hostile(scryptSet("R", 1024)), vault.ErrCorrupt, "R=1024"},
		{"P=128", hostile(scryptSet("P", 128)), vault.ErrCorrupt, "P=128"},
	}
	if crypto.CheckScryptMemory(huge) != nil {
		cases = append(cases, struct {
			name, dir string
			is        error
			want      string
		}{"N=2^28", hostile(scryptSet("N", 1<<28)), vault.ErrUnsupported, "needs 256 GiB"})
	} else {
		t.Log("this machine can afford N=2^28: not trying it")
	}
	fifo, err := os.MkdirTemp(base, "fifo")
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(fifo, crypto.ConfName), 0o600); err != nil {
		t.Fatal(err)
	}
	cases = append(cases, struct {
		name, dir string
		is        error
		want      string
	}{"FIFO", fifo, vault.ErrCorrupt, "FIFO"})

	for _, cs := range cases {
		target, err := os.MkdirTemp(base, "hmnt")
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = c.Mount(ctx(t), MountRequest{CipherDir: cs.dir, MountPoint: target, Password: []byte("whatever")})
		if !errors.Is(err, cs.is) || !strings.Contains(err.Error(), cs.want) {
			t.Errorf("%s: %v, want %v saying %q", cs.name, err, cs.is, cs.want)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s: refused only after %v", cs.name, d)
		}
	}
	// The good mount still serves after the last hostile config: a few more reads go through.
	after := reads.Load()
	waitUntil(t, "reads after the hostile configs", func() bool { return reads.Load() >= after+3 })
	close(stop)
	wg.Wait()
	if failures.Load() != 0 || reads.Load() == 0 {
		t.Errorf("good mount: %d of %d reads failed", failures.Load(), reads.Load())
	}
	if got, err := os.ReadFile(filepath.Join(mp, "f")); err != nil || !bytes.Equal(got, data) {
		t.Errorf("good mount after the hostile configs: %v", err)
	}
	if p := daemonPID(t); p != pid {
		t.Errorf("daemon pid %d, was %d: the daemon died", p, pid)
	}
}

// TestPanicAnswersOneRequest: a panic while serving a request becomes an error answer for
// that request; the connection and the daemon go on.
func TestPanicAnswersOneRequest(t *testing.T) {
	a, b := socketPair(t)
	// Unmounting the stale mount /x panics in the mount table.
	d := testDaemon(t)
	d.mtab = fakeMounts{detachFn: func(string) error { panic("boom") }}
	d.stale.mounts = []StaleMount{{MountPoint: "/x", CipherDir: "/c"}}
	serveTest(t, d, b)
	r := bufio.NewReader(a)
	for i, op := range []string{opUnmount, opPing} {
		line, _ := json.Marshal(request{V: ProtocolVersion, ID: uint64(i + 1), Op: op, Target: "/x"})
		a.Write(append(line, '\n'))
		resp, err := readResponse(r)
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		switch op {
		case opUnmount:
			if resp.Error == nil || !strings.Contains(resp.Error.Msg, "internal error") || !strings.Contains(resp.Error.Msg, "boom") {
				t.Errorf("panicking request answered %+v", resp)
			}
		case opPing:
			if resp.Error != nil || resp.PID != os.Getpid() {
				t.Errorf("ping after the panic: %+v", resp)
			}
		}
	}
}
