package keyring_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/vaultui/vaultui/keyring"
	"github.com/vaultui/vaultui/keyring/keyringtest"
)

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// TestRealKeyring stores, reads, replaces and forgets a password in a real gnome-keyring over
// the encrypted transfer.
func TestRealKeyring(t *testing.T) {
	keyringtest.StartService(t)
	k, err := keyring.Open(ctx(t), keyring.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer k.Close()
	const dir = "/data/work.crypt"
	if _, err := k.Get(ctx(t), dir); !errors.Is(err, keyring.ErrNotFound) {
		t.Fatalf("Get before Set: %v, want ErrNotFound", err)
	}
	if has, err := k.Has(ctx(t), dir); err != nil || has {
		t.Fatalf("Has before Set: %v, %v", has, err)
	}
	// Lengths around the AES block size, and bytes that are not text.
	for _, pw := range [][]byte{[]byte("correct horse battery staple"), bytes.Repeat([]byte{'x'}, 16), {0, 0xff, '\n', 'a'}, []byte("é")} {
		if err := k.Set(ctx(t), dir, "vaultui: work ("+dir+")", pw); err != nil {
			t.Fatalf("Set: %v", err)
		}
		got, err := k.Get(ctx(t), dir)
		if err != nil || !bytes.Equal(got, pw) {
			t.Fatalf("Get: %q, %v; want %q", got, err, pw)
		}
	}
	// Another vault is another item.
	if err := k.Set(ctx(t), "/data/other.crypt", "vaultui: other", []byte("other")); err != nil {
		t.Fatal(err)
	}
	if has, err := k.Has(ctx(t), dir); err != nil || !has {
		t.Fatalf("Has after Set: %v, %v", has, err)
	}
	// A second session (another process, in real use) reads what the first stored.
	k2, err := keyring.Open(ctx(t), keyring.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := k2.Get(ctx(t), "/data/other.crypt"); err != nil || string(got) != "other" {
		t.Fatalf("second session: %q, %v", got, err)
	}
	k2.Close()
	if err := k.Delete(ctx(t), dir); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := k.Get(ctx(t), dir); !errors.Is(err, keyring.ErrNotFound) {
		t.Fatalf("Get after Delete: %v", err)
	}
	if err := k.Delete(ctx(t), dir); !errors.Is(err, keyring.ErrNotFound) {
		t.Fatalf("Delete twice: %v", err)
	}
	if got, err := k.Get(ctx(t), "/data/other.crypt"); err != nil || string(got) != "other" {
		t.Fatalf("the other vault's password after deleting this one: %q, %v", got, err)
	}
}

// TestNoBus: no session bus is ErrUnavailable at once.
func TestNoBus(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+filepath.Join(t.TempDir(), "missing"))
	start := time.Now()
	_, err := keyring.Open(ctx(t), keyring.Options{})
	if !errors.Is(err, keyring.ErrUnavailable) || errors.Is(err, keyring.ErrNoAnswer) {
		t.Fatalf("Open without a bus: %v, want ErrUnavailable and not ErrNoAnswer", err)
	}
	if got := keyring.Reason(err); got != "no D-Bus session bus" {
		t.Errorf("Reason(%v) = %q", err, got)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}

// TestSilentBus: a bus that accepts the connection and never answers is ErrUnavailable after
// the call timeout, not a hang.
func TestSilentBus(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", keyringtest.SilentBus(t))
	start := time.Now()
	_, err := keyring.Open(ctx(t), keyring.Options{CallTimeout: 300 * time.Millisecond})
	// Unavailable, and news: the bus is there but did not answer.
	if !errors.Is(err, keyring.ErrUnavailable) || !errors.Is(err, keyring.ErrNoAnswer) {
		t.Fatalf("Open on a silent bus: %v, want ErrUnavailable and ErrNoAnswer", err)
	}
	if got := keyring.Reason(err); got != "D-Bus session bus timed out" {
		t.Errorf("Reason(%v) = %q", err, got)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v with a 300 ms timeout", d)
	}
}

// TestBusWithoutService: a bus with no Secret Service on it is ErrUnavailable.
func TestBusWithoutService(t *testing.T) {
	addr := keyringtest.StartBus(t)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	_, err := keyring.Open(ctx(t), keyring.Options{})
	if !errors.Is(err, keyring.ErrUnavailable) || !errors.Is(err, keyring.ErrNoService) || errors.Is(err, keyring.ErrNoAnswer) {
		t.Fatalf("Open: %v, want ErrUnavailable and ErrNoService, not ErrNoAnswer", err)
	}
	if got := keyring.Reason(err); got != "no Secret Service" {
		t.Errorf("Reason(%v) = %q", err, got)
	}
}
