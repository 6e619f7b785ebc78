package app

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestSpeedCacheFIFO: a speed cache that is a FIFO reads as nothing cached, at once (it used
// to hang the app's start).
func TestSpeedCacheFIFO(t *testing.T) {
	s := &Speed{CachePath: filepath.Join(t.TempDir(), "speed.json"), cpu: "amd64 Test CPU", build: "v1"}
	if err := syscall.Mkfifo(s.CachePath, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan bool, 1)
	go func() { _, ok := s.load(); done <- ok }()
	select {
	case ok := <-done:
		if ok {
			t.Error("a FIFO read as a cached test")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("loading a speed cache that is a FIFO hangs")
	}
}
