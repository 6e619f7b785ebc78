package mountmgr

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// returnsSoon fails the test when f does not return in time: a plain open of a FIFO hung.
func returnsSoon(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s hangs", what)
	}
}

// TestStateFilesThatAreFIFOs: an event log or a ledger that is a FIFO (or anything but a
// regular file the user owns) is refused at once, not opened and waited on: the daemon
// starts with an empty log and reports the ledger.
func TestStateFilesThatAreFIFOs(t *testing.T) {
	dir := t.TempDir()
	events, ledger := filepath.Join(dir, "events.jsonl"), ledgerPath(dir)
	for _, p := range []string{events, ledger} {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	returnsSoon(t, "loading an event log that is a FIFO", func() {
		if l := openEventLog(events, 10, testLogger(t)); len(l.events) != 0 {
			t.Errorf("events read from a FIFO: %v", l.events)
		}
	})
	returnsSoon(t, "reading a ledger that is a FIFO", func() {
		if _, err := readLedger(ledger); err == nil || !strings.Contains(err.Error(), "FIFO") {
			t.Errorf("ledger that is a FIFO: %v", err)
		}
	})
}
