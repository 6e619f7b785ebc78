package vault

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vaultui/vaultui/vault/format"
)

// TestCipherFileSwappedForFIFO: a cipher file replaced by a FIFO between the walk's look at
// it and the read (fsck, export and the conflict tools read what the walk found) is refused
// at once, as damage that names the cipher file and says what it is, in both formats: it
// must neither hang the reader nor read as a short or empty file.
func TestCipherFileSwappedForFIFO(t *testing.T) {
	vaults := map[string]func(t *testing.T) (string, Volume){
		"gocryptfs": func(t *testing.T) (string, Volume) {
			f := loadFixture(t, "gcm-default")
			vol, err := UnlockVolume(context.Background(), f.dir, f.password)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(vol.Close)
			return f.dir, vol
		},
		"cryptomator": unlockCryptomatorFixture,
	}
	for name, open := range vaults {
		t.Run(name, func(t *testing.T) {
			dir, vol := open(t)
			// The swap and the read happen while the walk is at the file: its directory is
			// open then.
			var file *Node
			var problems []Problem
			var err error
			werr := WalkVolume(context.Background(), vol, func(n Node) error {
				if file != nil || !n.Info.Mode().IsRegular() || n.Info.Size() == 0 {
					return nil
				}
				file = &n
				p := filepath.Join(dir, n.CipherPath)
				if err := os.Remove(p); err != nil {
					return err
				}
				if err := syscall.Mkfifo(p, 0o644); err != nil {
					return err
				}
				done := make(chan error, 1)
				go func() {
					_, err := decryptVolumeFile(context.Background(), vol, n, nil, func(p Problem) { problems = append(problems, p) }, nil)
					done <- err
				}()
				select {
				case err = <-done:
				case <-time.After(5 * time.Second):
					// Release the reader before failing: a writer ends the hang.
					if fd, err := syscall.Open(p, syscall.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
						syscall.Close(fd)
					}
					t.Fatal("reading a cipher file that is a FIFO hangs")
				}
				return nil
			}, func(Problem) {})
			if werr != nil || file == nil {
				t.Fatalf("no file to swap: %v", werr)
			}
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "a FIFO") {
				t.Errorf("reading a cipher file that is a FIFO: %v; want ErrCorrupt saying it is a FIFO", err)
			}
			if len(problems) != 1 || !problems[0].Damage() || problems[0].Kind != format.KindType || problems[0].CipherPath != file.CipherPath || !strings.Contains(problems[0].Detail, "a FIFO") {
				t.Errorf("problems: %+v; want one naming %s as a FIFO", problems, file.CipherPath)
			}
		})
	}
}
