package vfs

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// TestLargeRequests: the kernel sends 1 MiB writes and, with the readahead raised (root),
// reads of ReadMax; each request is a round trip, so this is what sequential speed hangs on.
func TestLargeRequests(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("raising the readahead needs root")
	}
	v := testVolume(t, crypto.AESGCM, true)
	var buf lockedBuffer
	mp, _ := mountTest(t, v, Options{Debug: true, Logger: log.New(&buf, "", 0)})
	f, err := os.Create(filepath.Join(mp, "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, RequestMax)
	for i := 0; i < 4; i++ {
		if _, err := f.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	if _, err := f.ReadAt(chunk, RequestMax); err != nil {
		t.Fatal(err)
	}
	buf.mu.Lock()
	out := buf.b.String()
	buf.mu.Unlock()
	for op, size := range map[string]int{"WRITE": RequestMax, "READ": ReadMax} {
		found := false
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, op+" ") && strings.Contains(line, fmt.Sprintf("+%d)", size)) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("no %d-byte %s request reached the file system", size, op)
		}
	}
}
