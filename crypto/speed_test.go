package crypto

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestMeasureEveryCipher(t *testing.T) {
	for _, c := range Ciphers {
		mbps, err := Measure(context.Background(), c, 5*time.Millisecond)
		if err != nil || mbps <= 0 {
			t.Errorf("%s: %v MB/s, %v", c, mbps, err)
		}
	}
}

func TestMeasureCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range Ciphers {
		if _, err := Measure(ctx, c, time.Second); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v, want context.Canceled", c, err)
		}
	}
}

func TestMeasureUnknownCipher(t *testing.T) {
	if _, err := Measure(context.Background(), CipherID("rot13"), time.Millisecond); err == nil {
		t.Error("an unknown cipher was measured")
	}
}

// TestSpeedRunEncryptsDistinctBlocks: each run encrypts the next blocks (fresh nonces and block
// numbers), as a file being written, so nothing can be cached between runs.
func TestSpeedRunEncryptsDistinctBlocks(t *testing.T) {
	r, err := NewSpeedRun(AESGCM)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if n := r.Encrypt(); n != speedBlocks*BlockSize {
		t.Fatalf("a run encrypted %d bytes", n)
	}
	first := string(r.buf)
	r.Encrypt()
	if string(r.buf) == first {
		t.Fatal("two runs gave the same ciphertext")
	}
}
