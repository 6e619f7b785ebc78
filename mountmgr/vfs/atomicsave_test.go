package vfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

// The atomic-save stress: one file that a "renamer" keeps replacing the way editors, office
// suites and Go's and Python's atomic-write helpers save (write a temporary file, fsync it,
// rename it over the original), while two readers read it and a writer writes into it in
// place. On a local file system none of them ever sees an error: every open gets the old file
// or the new one, and a handle keeps reading and writing the file it opened.
//
// VAULTUI_ATOMICSAVE=60s runs it for that long instead of the short fixed number of saves;
// VAULTUI_ATOMICSAVE_DIR=/some/mount runs it on a mount made elsewhere (gocryptfs, for the
// reference numbers) instead of one of ours.
const (
	atomicSaveEnv    = "VAULTUI_ATOMICSAVE"
	atomicSaveDirEnv = "VAULTUI_ATOMICSAVE_DIR"
)

// atomicSaveSize is the size of the largest version of the file: 16 blocks and a partial
// one, so that writes merge into partial blocks and reads cross block boundaries. Versions
// differ in size (atomicSaveVersionSize), so that a size given to the wrong file shows as
// bytes no one wrote, or as a short file.
const atomicSaveSize = 16*crypto.BlockSize + 1000

func atomicSaveVersionSize(v int) int { return atomicSaveSize - v%3*1500 }

// Versions are filled with one byte each; in-place writes write atomicSaveWritten. A reader
// must see nothing else.
const atomicSaveWritten = 'w'

func atomicSaveVersionByte(v int) byte { return byte('A' + v%26) }

// atomicSaveCounts are the stress's results.
type atomicSaveCounts struct {
	saves, opens, reads, writes atomic.Int64
	mu                          sync.Mutex
	errs                        map[string]int // "op: errno" -> count
	foreign                     int            // reads that returned bytes no one wrote
}

func (c *atomicSaveCounts) fail(op string, err error) {
	var errno syscall.Errno
	key := op + ": " + err.Error()
	if errors.As(err, &errno) {
		key = op + ": " + errno.Error()
	}
	c.mu.Lock()
	if c.errs == nil {
		c.errs = map[string]int{}
	}
	c.errs[key]++
	c.mu.Unlock()
}

// count counts the failures with errno e; e == 0 counts all.
func (c *atomicSaveCounts) count(e syscall.Errno) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for k, v := range c.errs {
		if e == 0 || strings.HasSuffix(k, ": "+e.Error()) {
			n += v
		}
	}
	return n
}

func (c *atomicSaveCounts) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var keys []string
	for k := range c.errs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%d saves, %d opens, %d reads, %d writes; %d reads with foreign bytes",
		c.saves.Load(), c.opens.Load(), c.reads.Load(), c.writes.Load(), c.foreign)
	for _, k := range keys {
		fmt.Fprintf(&b, "; %s: %d", k, c.errs[k])
	}
	return b.String()
}

// atomicSaveStress runs the stress in dir until the renamer has made saves saves, or for d
// when d > 0.
func atomicSaveStress(t testing.TB, dir string, saves int, d time.Duration) *atomicSaveCounts {
	t.Helper()
	p := filepath.Join(dir, "doc")
	tmp := filepath.Join(dir, ".doc.tmp")
	c := &atomicSaveCounts{}
	if err := os.WriteFile(p, bytes.Repeat([]byte{atomicSaveVersionByte(0)}, atomicSaveSize), 0o644); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the renamer
		defer wg.Done()
		defer stop.Store(true)
		deadline := time.Now().Add(d)
		for v := 1; ; v++ {
			if d > 0 && time.Now().After(deadline) || d <= 0 && v > saves {
				return
			}
			content := make([]byte, atomicSaveVersionSize(v))
			for i := range content {
				content[i] = atomicSaveVersionByte(v)
			}
			if err := atomicSave(p, tmp, content); err != nil {
				c.fail("save", err)
				continue
			}
			c.saves.Add(1)
		}
	}()
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() { // a reader: reads the file twice per open, so a save often falls between
			defer wg.Done()
			buf := make([]byte, atomicSaveSize+1)
			for !stop.Load() {
				f, err := os.Open(p)
				if err != nil {
					c.fail("open for reading", err)
					continue
				}
				c.opens.Add(1)
				for range 2 {
					n, err := f.ReadAt(buf, 0)
					if err != nil && err != io.EOF {
						c.fail("read", err)
						break
					}
					c.reads.Add(1)
					bad := bytes.IndexFunc(buf[:n], func(r rune) bool {
						return r != atomicSaveWritten && (r < 'A' || r > 'Z')
					})
					if bad >= 0 || n < atomicSaveVersionSize(2) {
						c.mu.Lock()
						if c.foreign < 5 {
							// What the kernel thinks of the file now, and what the read held
							// around the first foreign byte: zeros point at a size taken from
							// another version, letters at bytes from another file.
							var size int64 = -1
							if st, err := f.Stat(); err == nil {
								size = st.Size()
							}
							from := max(bad-4, 0)
							t.Logf("read of %d bytes (the handle's size now %d); first foreign byte at %d: %q",
								n, size, bad, buf[from:min(max(bad, 0)+8, n)])
						}
						c.foreign++
						c.mu.Unlock()
					}
				}
				f.Close()
			}
		}()
	}
	wg.Add(1)
	go func() { // the writer: small writes in place, most inside a block (they merge old
		// content, which must decrypt), some of whole blocks
		defer wg.Done()
		rng := rand.New(rand.NewPCG(1, 2))
		small := bytes.Repeat([]byte{atomicSaveWritten}, 100)
		whole := bytes.Repeat([]byte{atomicSaveWritten}, crypto.BlockSize)
		for !stop.Load() {
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				c.fail("open for writing", err)
				continue
			}
			c.opens.Add(1)
			for i := range 4 {
				data, off := small, rng.Int64N(int64(atomicSaveVersionSize(2)-len(small)))
				if i == 3 {
					data, off = whole, rng.Int64N(16)*crypto.BlockSize
				}
				if _, err := f.WriteAt(data, off); err != nil {
					c.fail("write", err)
					break
				}
				c.writes.Add(1)
			}
			f.Close()
		}
	}()
	wg.Wait()
	return c
}

// atomicSave writes content to tmp, syncs it and renames it over p.
func atomicSave(p, tmp string, content []byte) error {
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(content); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// TestAtomicSaves: under the atomic-save stress no read or write fails, no read returns bytes
// no one wrote, no block is reported as failing authentication, and fsck finds the vault
// clean. Opens do not fail
// either, but for a rare ESTALE: an open of a node whose file was renamed over while no one
// had it open gets ESTALE, and the kernel looks the name up again and retries once; only
// when that retry races with the next save too does the caller see it (1 open in 100,000 in
// a 60 s run).
func TestAtomicSaves(t *testing.T) {
	saves, d := 300, time.Duration(0)
	if s := os.Getenv(atomicSaveEnv); s != "" {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			t.Fatalf("%s=%q: %v", atomicSaveEnv, s, err)
		}
	}
	var authFailures atomic.Int64
	dir := os.Getenv(atomicSaveDirEnv)
	if dir == "" {
		vlt := realVault(t, "", crypto.AESGCM)
		dir, _ = mountTest(t, volumeOf(vlt), Options{AuthFailed: func(string, uint64) { authFailures.Add(1) }})
		// No block was sealed under another file's ID, even in files no one read again.
		defer fsckClean(t, vlt)
	}
	c := atomicSaveStress(t, dir, saves, d)
	t.Logf("%s; %d authentication failures reported", c, authFailures.Load())
	eio, estale, all := c.count(syscall.EIO), c.count(syscall.ESTALE), c.count(0)
	if eio > 0 || authFailures.Load() > 0 || c.foreign > 0 || all > estale || int64(estale)*1000 > c.opens.Load() {
		t.Errorf("atomic saves: %d EIO, %d authentication failures reported, %d reads with foreign bytes, %d other errors, %d ESTALE in %d opens",
			eio, authFailures.Load(), c.foreign, all-estale, estale, c.opens.Load())
	}
}

// openNode opens the node the mount shows under name in its root, as the kernel does with a
// node it looked up before: no lookup in between.
func openNode(t *testing.T, m *Mounted, name string, flags uint32) (*file, syscall.Errno) {
	t.Helper()
	ch := m.root.GetChild(name)
	if ch == nil {
		t.Fatalf("%s has not been looked up", name)
	}
	fh, _, errno := ch.Operations().(*node).Open(context.Background(), flags)
	if errno != 0 {
		return nil, errno
	}
	return fh.(*file), 0
}

func openHandles(n *node) int {
	x := n.ext()
	x.filesMu.Lock()
	defer x.filesMu.Unlock()
	return len(x.files)
}

// readNode reads up to n bytes at 0 through handle f, as the kernel would.
func readNode(f *file, n int) ([]byte, syscall.Errno) {
	buf := make([]byte, n)
	res, errno := f.Read(context.Background(), buf, 0)
	if errno != 0 {
		return nil, errno
	}
	b, _ := res.Bytes(buf)
	return b, 0
}

// saveBehind writes old as "doc" and saved (mode 0600) as ".doc.tmp" through mount mp of
// vault vlt, opens and reads doc (the returned holder keeps the old file open), then renames
// the cipher file of .doc.tmp over doc's in the cipherdir: a save by rename that has reached
// the cipherdir but not go-fuse's tree, the window the kernel may still reach the old node in.
func saveBehind(t *testing.T, vlt *gocryptfs.Vault, mp string, old, saved []byte) (holder *os.File) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(mp, "doc"), old, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mp, ".doc.tmp"), saved, 0o600); err != nil {
		t.Fatal(err)
	}
	holder, err := os.Open(filepath.Join(mp, "doc"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Close() })
	if _, err := io.ReadAll(holder); err != nil {
		t.Fatal(err)
	}
	dir, storedDoc := cipherName(t, vlt, "doc")
	_, storedTmp := cipherName(t, vlt, ".doc.tmp")
	if err := os.Rename(filepath.Join(dir, storedTmp), filepath.Join(dir, storedDoc)); err != nil {
		t.Fatal(err)
	}
	return holder
}

// waitReleased waits until n has no handle left: the kernel sends RELEASE after close returns,
// and there is no event to wait on.
func waitReleased(t *testing.T, n *node) {
	t.Helper()
	for i := 0; openHandles(n) > 0; i++ {
		if i == 500 {
			t.Fatal("the kernel never released the old file's handle")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestOpenAfterRenameOver: the kernel opens a node it looked up before a rename put another
// file under its name (here the rename has reached the cipherdir, not yet go-fuse's tree: the
// window a save by rename leaves). The open gets the file the node stands for, read and
// written with that file's ID, never the newcomer under the old file's ID; with no handle on
// the old file left to reopen it through, it fails with ESTALE, on which the kernel looks
// the name up again.
func TestOpenAfterRenameOver(t *testing.T) {
	vlt := realVault(t, "", crypto.AESGCM)
	var reported atomic.Int64
	mp, m := mountTest(t, volumeOf(vlt), Options{AuthFailed: func(string, uint64) { reported.Add(1) }})
	old := bytes.Repeat([]byte("old "), 2500)
	saved := bytes.Repeat([]byte("new "), 2500)
	holder := saveBehind(t, vlt, mp, old, saved) // a reader keeping the old file open

	f, errno := openNode(t, m, "doc", syscall.O_RDWR)
	if errno != 0 {
		t.Fatalf("opening the renamed-over node with a handle still on it: %v", errno)
	}
	got, errno := readNode(f, len(old)+1)
	if errno != 0 || !bytes.Equal(got, old) {
		t.Errorf("reading through it: %v, %d bytes, old content %v", errno, len(got), bytes.Equal(got, old))
	}
	if _, errno := f.Write(context.Background(), []byte("OLD"), 100); errno != 0 {
		t.Errorf("writing inside a block through it: %v", errno)
	}
	if errno := f.Release(context.Background()); errno != 0 {
		t.Fatal(errno)
	}
	holder.Close()
	waitReleased(t, m.root.GetChild("doc").Operations().(*node))
	if f, errno := openNode(t, m, "doc", syscall.O_RDONLY); errno != syscall.ESTALE {
		if f != nil {
			f.Release(context.Background())
		}
		t.Errorf("opening the renamed-over node with no handle on its file left: %v, want ESTALE", errno)
	}
	// Through the kernel, the name now leads to the saved file.
	if got, err := os.ReadFile(filepath.Join(mp, "doc")); err != nil || !bytes.Equal(got, saved) {
		t.Errorf("reading doc through the mount: %v, saved content %v", err, bytes.Equal(got, saved))
	}
	if n := reported.Load(); n != 0 {
		t.Errorf("%d authentication failures reported; none happened", n)
	}
}

// TestFileIDNotKeptPastLastClose: once the last handle on a file is closed, its inode number
// may go to a new file (tmpfs and ext4 hand it out again at once) that the kernel reaches
// through the same node: a new handle reads the file ID from its own file. And a block that
// really fails authentication is still refused and reported.
func TestFileIDNotKeptPastLastClose(t *testing.T) {
	vlt := realVault(t, "", crypto.AESGCM)
	var reported atomic.Int64
	mp, m := mountTest(t, volumeOf(vlt), Options{AuthFailed: func(string, uint64) { reported.Add(1) }})
	first := bytes.Repeat([]byte("first "), 1000)
	second := bytes.Repeat([]byte("second "), 1000)
	if err := os.WriteFile(filepath.Join(mp, "f"), first, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mp, "g"), second, 0o644); err != nil {
		t.Fatal(err)
	}
	f, errno := openNode(t, m, "f", syscall.O_RDONLY)
	if errno != 0 {
		t.Fatal(errno)
	}
	if got, errno := readNode(f, len(first)); errno != 0 || !bytes.Equal(got, first) {
		t.Fatalf("first read: %v", errno)
	}
	f.Release(context.Background())

	// The same inode, now holding another file (another file ID): g's ciphertext.
	dir, storedF := cipherName(t, vlt, "f")
	_, storedG := cipherName(t, vlt, "g")
	raw, err := os.ReadFile(filepath.Join(dir, storedG))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, storedF), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	f, errno = openNode(t, m, "f", syscall.O_RDONLY)
	if errno != 0 {
		t.Fatal(errno)
	}
	defer f.Release(context.Background())
	if got, errno := readNode(f, len(second)+1); errno != 0 || !bytes.Equal(got, second) {
		t.Errorf("reading the new file through the old node: %v, %d bytes, its content %v", errno, len(got), bytes.Equal(got, second))
	}
	if n := reported.Load(); n != 0 {
		t.Errorf("%d authentication failures reported; none happened", n)
	}

	raw[crypto.HeaderLen+10] ^= 1 // genuine corruption of block 0
	if err := os.WriteFile(filepath.Join(dir, storedF), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errno := readNode(f, 100); errno != syscall.EIO {
		t.Errorf("reading a corrupt block: %v, want EIO", errno)
	}
	if n := reported.Load(); n != 1 {
		t.Errorf("%d authentication failures reported, want 1", n)
	}
}

// TestGetattrAfterRenameOver: the kernel asks for the attributes of a node it looked up
// before a rename put another file under its name (a permission check during a path walk
// does, without a handle). The answer is the node's own file's, through a handle still open
// on it, never the newcomer's: the kernel would take the newcomer's size for the old file
// and fill a read of it up to that size with zeros (TestAtomicSaves saw such reads). With no
// handle on the old file left, it is ESTALE, on which the kernel looks the name up again.
func TestGetattrAfterRenameOver(t *testing.T) {
	vlt := realVault(t, "", crypto.AESGCM)
	mp, m := mountTest(t, volumeOf(vlt), Options{watchOwn: true})
	old := bytes.Repeat([]byte("old "), 2500)
	saved := bytes.Repeat([]byte("new "), 2600)
	holder := saveBehind(t, vlt, mp, old, saved)

	docNode := m.root.GetChild("doc").Operations().(*node)
	var out fuse.AttrOut
	if errno := docNode.Getattr(context.Background(), nil, &out); errno != 0 {
		t.Fatalf("attributes of the renamed-over node with a handle still on it: %v", errno)
	}
	if out.Size != uint64(len(old)) || out.Mode&0o777 != 0o644 {
		t.Errorf("attributes of the renamed-over node: size %d mode %o, want its own file's %d and 644 (the newcomer has %d and 600)",
			out.Size, out.Mode&0o777, len(old), len(saved))
	}
	holder.Close()
	waitReleased(t, docNode)
	if errno := docNode.Getattr(context.Background(), nil, &out); errno != syscall.ESTALE {
		t.Errorf("attributes of the renamed-over node with no handle on its file left: %v (size %d), want ESTALE", errno, out.Size)
	}
	// Through the kernel, the name leads to the saved file once the watch has told it of the
	// rename behind the mount, within the second every change behind it gets.
	showsWithin(t, "the saved file's size through the mount", func() (string, bool) {
		st, err := os.Stat(filepath.Join(mp, "doc"))
		if err != nil || st.Size() != int64(len(saved)) {
			return fmt.Sprintf("stat of doc: %v, %v; want size %d", st, err, len(saved)), false
		}
		return "", false
	})
}
