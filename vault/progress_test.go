package vault

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/vaultui/vaultui/internal/vaulttest"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

// TestFsckProgressInBytes: the first report comes before any work (while counting), a big
// file reports as it is read rather than once at its end, and the figures are bytes of
// content: the issue saw "17% 1/6" for minutes on a 3 GB file, and "0% 0/0" with no text
// for the first seconds.
func TestFsckProgressInBytes(t *testing.T) {
	dir, _ := createTest(t, CreateOptions{})
	v, err := gocryptfs.Unlock(context.Background(), dir, testPassword)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	src := t.TempDir()
	// Zeros are stored as holes: a big file that costs little disk and time.
	if err := os.WriteFile(filepath.Join(src, "a-big"), make([]byte, 3*progressStep), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "b-small"), []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := vaulttest.Import(context.Background(), v, src); err != nil {
		t.Fatal(err)
	}
	var reps []FsckProgress
	for _, run := range []struct {
		name string
		walk func(func(FsckProgress)) error
	}{
		{"fsck", func(p func(FsckProgress)) error {
			_, err := FsckVolume(context.Background(), v.Volume(), p)
			return err
		}},
		{"export", func(p func(FsckProgress)) error {
			return ExportVolume(context.Background(), v.Volume(), filepath.Join(t.TempDir(), "out"), ExportOptions{Progress: p})
		}},
	} {
		reps = reps[:0]
		if err := run.walk(func(p FsckProgress) { reps = append(reps, p) }); err != nil {
			t.Fatal(err)
		}
		if len(reps) == 0 || !reps[0].Counting || reps[0].Done != 0 {
			t.Fatalf("%s: first report %+v, want one at once while counting", run.name, reps)
		}
		last := reps[len(reps)-1]
		if last.Done != 2 || last.Total != 2 || last.Bytes != last.TotalBytes || last.Bytes < 3*progressStep {
			t.Errorf("%s: last report %+v, want 2 of 2 entries and all bytes of the cipher files", run.name, last)
		}
		inBig := 0
		for i, p := range reps {
			if p.Path == "a-big" && p.Done == 0 && p.Bytes > 0 && p.Bytes < last.TotalBytes {
				inBig++
			}
			if i > 0 && p.Bytes < reps[i-1].Bytes {
				t.Errorf("%s: bytes went back from %d to %d", run.name, reps[i-1].Bytes, p.Bytes)
			}
			if !p.Counting && p.TotalBytes != last.TotalBytes {
				t.Errorf("%s: report %d has TotalBytes %d, want %d from the count", run.name, i, p.TotalBytes, last.TotalBytes)
			}
		}
		if inBig < 3 {
			t.Errorf("%s: %d reports while reading the big file, want one every %d bytes: %+v", run.name, inBig, progressStep, reps)
		}
	}
}
