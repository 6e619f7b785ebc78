package crypto

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/scrypt"
)

// TestMain makes the test binary a key derivation helper when it is run as one (see
// deriveInHelper: the running binary re-executed with KDFHelperArg), as vaultui is.
func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == KDFHelperArg {
		if err := ServeKDFHelper(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// helperChildren lists this process's children that run the key derivation helper.
func helperChildren(t *testing.T) []int {
	t.Helper()
	tasks, _ := os.ReadDir("/proc/self/task")
	var out []int
	for _, task := range tasks {
		b, _ := os.ReadFile("/proc/self/task/" + task.Name() + "/children")
		for _, f := range strings.Fields(string(b)) {
			pid, _ := strconv.Atoi(f)
			cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			if strings.Contains(string(cmd), KDFHelperArg) {
				out = append(out, pid)
			}
		}
	}
	return out
}

// rssOf is the resident memory of pid in bytes (0 once it is gone).
func rssOf(pid int) uint64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// A costly derivation runs in a helper process, and cancelling its context ends it within a
// second: the helper is killed and reaped, its memory back with the system. scrypt itself
// cannot be interrupted, so in-process this call would run to its end (seconds at 2^19).
func TestDeriveKeyCancel(t *testing.T) {
	s, _ := NewScryptKDF(19) // 512 MiB, a few seconds
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := s.DeriveKey(ctx, []byte("pw"))
		done <- err
	}()
	var pid int
	for deadline := time.Now().Add(5 * time.Second); pid == 0; {
		if kids := helperChildren(t); len(kids) > 0 {
			pid = kids[0]
		} else if time.Now().After(deadline) {
			t.Fatal("no helper process started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	rss := rssOf(pid)
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled derivation: %v, want context.Canceled", err)
		}
	case <-time.After(time.Second):
		t.Fatal("DeriveKey still runs a second after its context was cancelled")
	}
	took := time.Since(start)
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("helper %d still exists after DeriveKey returned: %v", pid, err)
	}
	t.Logf("helper held %s when cancelled; gone %v after the cancel", FormatBytes(rss), took)
}

// The helper derives the same key scrypt does in-process, and a context cancelled before the
// derivation starts stops a cheap (in-process) one as well.
func TestDeriveKeyHelper(t *testing.T) {
	s, _ := NewScryptKDF(17) // 128 MiB: above inProcessCost, so in the helper
	if s.Cost() <= inProcessCost {
		t.Fatalf("2^17 costs %d, not above the in-process bound %d", s.Cost(), inProcessCost)
	}
	got, err := s.DeriveKey(context.Background(), []byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := scrypt.Key([]byte("pw"), s.Salt, s.N, s.R, s.P, s.KeyLen)
	if !bytes.Equal(got, want) {
		t.Fatalf("helper key %x, want %x", got, want)
	}
	if kids := helperChildren(t); len(kids) != 0 {
		t.Errorf("helpers left behind: %v", kids)
	}
	cheap, _ := NewScryptKDF(MinScryptLogN)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := cheap.DeriveKey(ctx, []byte("pw")); !errors.Is(err, context.Canceled) {
		t.Errorf("cheap derivation with a cancelled context: %v", err)
	}
}

// A cost above the bound is refused before anything is derived, naming the memory and an
// estimated time; the same parameters pass with a bound that allows them.
func TestDeriveKeyCostBound(t *testing.T) {
	huge := ScryptKDF{Salt: make([]byte, 32), N: 1 << 24, R: 8, P: 1, KeyLen: 32} // 16 GiB
	start := time.Now()
	_, err := huge.DeriveKey(context.Background(), []byte("pw"))
	if !errors.Is(err, ErrKDFCostly) || !strings.Contains(err.Error(), "16 GiB") || !strings.Contains(err.Error(), "about ") {
		t.Fatalf("2^24 with the default bound: %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Errorf("the refusal took %v", time.Since(start))
	}
	t.Logf("refusal: %v", err)
	if err := CheckScryptCost(ScryptKDF{N: 1 << 20, R: 8}, 0); err != nil {
		t.Errorf("2^20 (1 GiB) is within the default bound: %v", err)
	}
	if err := CheckScryptCost(ScryptKDF{N: 1 << 21, R: 8}, 0); !errors.Is(err, ErrKDFCostly) {
		t.Errorf("2^21 (2 GiB) with the default bound: %v", err)
	}

	s, _ := NewScryptKDF(12) // 4 MiB
	if _, err := s.DeriveKey(WithCostBound(context.Background(), 2<<20), []byte("pw")); !errors.Is(err, ErrKDFCostly) || !strings.Contains(err.Error(), "4 MiB") {
		t.Errorf("4 MiB under a 2 MiB bound: %v", err)
	}
	if _, err := s.DeriveKey(WithCostBound(context.Background(), 4<<20), []byte("pw")); err != nil {
		t.Errorf("4 MiB under a 4 MiB bound: %v", err)
	}
	if _, err := s.DeriveKey(WithCostBound(context.Background(), AnyCost), []byte("pw")); err != nil {
		t.Errorf("4 MiB with any cost allowed: %v", err)
	}
}
