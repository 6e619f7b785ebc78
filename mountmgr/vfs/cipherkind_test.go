package vfs

import (
	"bytes"
	"errors"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/cryptomator"
)

// Every file of the cipherdir is the attacker's: one replaced by a FIFO must not hang the
// daemon (it once sat 606 s in an open until something opened the FIFO for writing), nor be
// taken for the file it replaced.

// lockedLog is a mount log a test can read while the mount writes to it.
type lockedLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// swapForFIFO replaces the cipher file p by a FIFO, as someone who can write the synced
// folder can.
func swapForFIFO(t *testing.T, p string) {
	t.Helper()
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
}

// promptly runs fn and returns its error. If fn is still running after a few seconds, it
// hangs on the FIFO: the FIFO is opened for writing (that is what ends the hang), and the
// test fails instead of hanging with it.
func promptly(t *testing.T, what, fifo string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		// Without a reader, a non-blocking open for writing fails with ENXIO; with the
		// hanging reader it succeeds and releases it.
		if fd, err := unix.Open(fifo, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0); err == nil {
			unix.Close(fd)
		}
		select {
		case <-done:
			t.Fatalf("%s hung on a FIFO in the cipherdir until the FIFO was opened for writing", what)
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatalf("%s hangs on a FIFO in the cipherdir", what)
	return nil
}

// pinned opens plaintext path p with O_PATH: the kernel keeps the node it looked up, and an
// open through the descriptor's /proc link goes to that node without a new lookup, as an
// open of a path the kernel has cached does.
func pinned(t *testing.T, p string) string {
	t.Helper()
	fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return procFdPath(fd)
}

// cipherFIFOCase is a new vault of one format, with a function giving the cipher path of a
// plaintext name in its root.
type cipherFIFOCase struct {
	name  string
	vault func(t *testing.T) (vol Volume, cipherOf func(name string) string)
}

func cipherFIFOCases() []cipherFIFOCase {
	return []cipherFIFOCase{
		{"gocryptfs", func(t *testing.T) (Volume, func(string) string) {
			v := realVault(t, "", crypto.AESGCM)
			return volumeOf(v), func(name string) string {
				dir, stored := cipherName(t, v, name)
				return filepath.Join(dir, stored)
			}
		}},
		{"cryptomator", func(t *testing.T) (Volume, func(string) string) {
			vol, v := cryptomatorVolume(t)
			return vol, func(name string) string {
				return filepath.Join(vol.CipherDir(), v.Names().DirPath(""), v.Names().Encrypt("", name))
			}
		}},
	}
}

// testLoggerTo is testLogger that also writes to w.
func testLoggerTo(t testing.TB, w io.Writer) *log.Logger {
	return log.New(io.MultiWriter(tWriter{t}, w), "", 0)
}

// TestCipherFileFIFO: a plaintext file whose cipher file was replaced by a FIFO fails to open
// at once with EIO, for reading and for writing, and the log names the cipher file (never the
// plaintext name) and what it is; stat does not hang either.
func TestCipherFileFIFO(t *testing.T) {
	const plain = "plaintext-secret-name.txt"
	for _, c := range cipherFIFOCases() {
		t.Run(c.name, func(t *testing.T) {
			logged := &lockedLog{}
			vol, cipherOf := c.vault(t)
			mp, m := mountTest(t, vol, Options{Logger: testLoggerTo(t, logged)})
			if err := os.WriteFile(filepath.Join(mp, plain), []byte("some content"), 0o644); err != nil {
				t.Fatal(err)
			}
			// The write's handle is released a moment after close; until then an open reuses
			// it (a file still open through the mount is reopened through its handle), which
			// is not what this test is about (seen under the race detector).
			if child := m.root.GetChild(plain); child != nil {
				waitReleased(t, child.Operations().(*node))
			}
			cipher := cipherOf(plain)
			node := pinned(t, filepath.Join(mp, plain))
			swapForFIFO(t, cipher)

			for _, open := range []struct {
				what  string
				flags int
			}{{"open for reading", unix.O_RDONLY}, {"open for writing", unix.O_WRONLY}, {"open for reading and writing", unix.O_RDWR}} {
				err := promptly(t, open.what, cipher, func() error {
					fd, err := unix.Open(node, open.flags|unix.O_CLOEXEC, 0)
					if err != nil {
						return err
					}
					defer unix.Close(fd)
					_, err = unix.Read(fd, make([]byte, 100))
					return err
				})
				if !errors.Is(err, syscall.EIO) {
					t.Errorf("%s of a file whose cipher file is a FIFO: %v, want EIO", open.what, err)
				}
			}
			err := promptly(t, "truncate", cipher, func() error { return unix.Truncate(node, 3) })
			if !errors.Is(err, syscall.EIO) {
				t.Errorf("truncating a file whose cipher file is a FIFO: %v, want EIO", err)
			}
			promptly(t, "stat", cipher, func() error {
				var st unix.Stat_t
				return unix.Stat(node, &st)
			})
			log := logged.String()
			if !strings.Contains(log, filepath.Base(cipher)) || !strings.Contains(log, "FIFO") {
				t.Errorf("the log does not name the cipher file and what it is:\n%s", log)
			}
			if strings.Contains(log, plain) {
				t.Errorf("the log names the plaintext file:\n%s", log)
			}
		})
	}
}

// TestCryptomatorSymlinkFIFO: a Cryptomator symlink keeps its target in a file
// (symlink.c9r); replaced by a FIFO, reading the link fails at once instead of hanging.
func TestCryptomatorSymlinkFIFO(t *testing.T) {
	vol, v := cryptomatorVolume(t)
	mp, _ := mountTest(t, vol, Options{})
	link := filepath.Join(mp, "link")
	if err := os.Symlink("some/target", link); err != nil {
		t.Fatal(err)
	}
	// A second mount, whose kernel has not read the link yet, looks it up (lookup checks
	// what is there) and keeps the node; then the file is swapped.
	mp2, _ := mountTest(t, vol, Options{})
	fd, err := unix.Open(filepath.Join(mp2, "link"), unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	fifo := filepath.Join(vol.CipherDir(), v.Names().DirPath(""), v.Names().Encrypt("", "link"), cryptomator.SymlinkFile)
	swapForFIFO(t, fifo)
	err = promptly(t, "readlink", fifo, func() error {
		_, err := unix.Readlinkat(fd, "", make([]byte, 256))
		return err
	})
	if !errors.Is(err, syscall.EIO) {
		t.Errorf("reading a symlink whose symlink.c9r is a FIFO: %v, want EIO", err)
	}
}

// TestCipherFileShorterThanHeader: a cipher file that is not empty but shorter than the
// format's header is damage: opening the file for reading fails with EIO (with forcedecode
// too: there is nothing to recover) and the log says why, instead of it reading as empty.
// A truncating open still works: it replaces what is there.
func TestCipherFileShorterThanHeader(t *testing.T) {
	for _, c := range cipherFIFOCases() {
		for _, force := range []bool{false, true} {
			name := c.name
			if force {
				name += "/forcedecode"
			}
			t.Run(name, func(t *testing.T) {
				const plain = "short"
				vol, cipherOf := c.vault(t)
				mp, _ := mountTest(t, vol, Options{})
				if err := os.WriteFile(filepath.Join(mp, plain), []byte("some content"), 0o644); err != nil {
					t.Fatal(err)
				}
				cipher := cipherOf(plain)
				if err := os.Truncate(cipher, 5); err != nil {
					t.Fatal(err)
				}
				// A second mount of the vault: the first one's kernel may have the content
				// cached.
				logged := &lockedLog{}
				opts := Options{Logger: testLoggerTo(t, logged), ReadOnly: force, ForceDecode: force}
				mp2, _ := mountTest(t, vol, opts)
				b, err := os.ReadFile(filepath.Join(mp2, plain))
				if !errors.Is(err, syscall.EIO) {
					t.Errorf("reading a file whose cipher file is 5 bytes: %q, %v; want EIO", b, err)
				}
				log := logged.String()
				if !strings.Contains(log, filepath.Base(cipher)) || !strings.Contains(log, "header") {
					t.Errorf("the log does not say which cipher file is short:\n%s", log)
				}
				if force {
					return
				}
				if err := os.WriteFile(filepath.Join(mp2, plain), []byte("new"), 0o644); err != nil {
					t.Fatalf("a truncating open of the short file: %v", err)
				}
				if b, err := os.ReadFile(filepath.Join(mp2, plain)); err != nil || string(b) != "new" {
					t.Errorf("after rewriting it: %q, %v", b, err)
				}
			})
		}
	}
}
