package vfs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vaultui/vaultui/crypto"
)

// testSeed returns the seed for randomized tests: VAULTUI_SEED or the clock, logged so a
// failure reproduces.
func testSeed(t *testing.T) uint64 {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("VAULTUI_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (set VAULTUI_SEED to reproduce)", seed)
	return seed
}

// errClass reduces an error to what must agree between the vault and the reference.
func errClass(err error) string {
	if err == nil {
		return "ok"
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	return "error"
}

// randomOps applies the same random operations to the mount and to a reference directory.
type randomOps struct {
	t        *testing.T
	rng      *rand.Rand
	mnt, ref string
}

var (
	opDirs  = []string{"", "d0", "d0/sub", "d1"}
	opNames = []string{"a", "b", "c", "hard", strings.Repeat("long-name-", 20) + "x", strings.Repeat("Ü", 100)}
)

func (o *randomOps) path() string {
	return filepath.Join(opDirs[o.rng.IntN(len(opDirs))], opNames[o.rng.IntN(len(opNames))])
}

func (o *randomOps) both(what string, f func(root string) error) {
	e1, e2 := f(o.mnt), f(o.ref)
	if errClass(e1) != errClass(e2) {
		o.t.Fatalf("%s: vault says %v, reference says %v", what, e1, e2)
	}
}

func writeAt(p string, data []byte, off int64) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.WriteAt(data, off)
	cerr := f.Close()
	if werr != nil {
		return werr
	}
	return cerr
}

func (o *randomOps) step() {
	switch r := o.rng.IntN(100); {
	case r < 45:
		p := o.path()
		off := o.rng.Int64N(300 << 10)
		if o.rng.IntN(4) == 0 {
			off = o.rng.Int64N(4) * crypto.BlockSize // aligned
		}
		data := make([]byte, 1+o.rng.IntN(70<<10))
		for i := range data {
			data[i] = byte(o.rng.Uint32())
		}
		o.both(fmt.Sprintf("write %s %d+%d", p, off, len(data)), func(root string) error {
			return writeAt(filepath.Join(root, p), data, off)
		})
	case r < 60:
		p := o.path()
		size := o.rng.Int64N(300 << 10)
		if o.rng.IntN(3) == 0 {
			size = o.rng.Int64N(80) * crypto.BlockSize
		}
		o.both(fmt.Sprintf("truncate %s %d", p, size), func(root string) error {
			return os.Truncate(filepath.Join(root, p), size)
		})
	case r < 70:
		a, b := o.path(), o.path()
		o.both("rename "+a+" "+b, func(root string) error {
			return os.Rename(filepath.Join(root, a), filepath.Join(root, b))
		})
	case r < 77:
		p := o.path()
		o.both("unlink "+p, func(root string) error { return syscall.Unlink(filepath.Join(root, p)) })
	case r < 84:
		a, b := o.path(), o.path()
		o.both("link "+a+" "+b, func(root string) error {
			return os.Link(filepath.Join(root, a), filepath.Join(root, b))
		})
	case r < 92:
		d := opDirs[1+o.rng.IntN(len(opDirs)-1)]
		o.both("mkdir "+d, func(root string) error { return syscall.Mkdir(filepath.Join(root, d), 0o755) })
	default:
		d := opDirs[1+o.rng.IntN(len(opDirs)-1)]
		o.both("rmdir "+d, func(root string) error { return syscall.Rmdir(filepath.Join(root, d)) })
	}
}

// snapshot describes a tree: for each path, type, size, content and link count.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		st := info.Sys().(*syscall.Stat_t)
		switch {
		case d.IsDir():
			out[rel] = fmt.Sprintf("dir %o", info.Mode().Perm())
		case info.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
			if int64(len(data)) != info.Size() {
				return fmt.Errorf("%s: stat size %d, read %d bytes", rel, info.Size(), len(data))
			}
			out[rel] = fmt.Sprintf("file %o nlink=%d %x", info.Mode().Perm(), st.Nlink, crypto256(data))
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "symlink " + target
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking %s: %v", root, err)
	}
	return out
}

func compareTrees(t *testing.T, mnt, ref, when string) {
	t.Helper()
	a, b := snapshot(t, mnt), snapshot(t, ref)
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if a[k] != b[k] {
			t.Fatalf("%s: %s differs: vault %q, reference %q", when, k, a[k], b[k])
		}
	}
}

func TestRandomOps(t *testing.T) {
	v := testVolume(t, crypto.AESGCM, true)
	mp, m := mountTest(t, v, Options{})
	ref := t.TempDir()
	o := &randomOps{t: t, rng: rand.New(rand.NewPCG(testSeed(t), 1)), mnt: mp, ref: ref}
	for _, d := range []string{"d0", "d0/sub", "d1"} {
		o.both("mkdir "+d, func(root string) error { return os.Mkdir(filepath.Join(root, d), 0o755) })
	}
	const batches, perBatch = 25, 100
	for b := 0; b < batches; b++ {
		for i := 0; i < perBatch; i++ {
			o.step()
		}
		compareTrees(t, mp, ref, fmt.Sprintf("after batch %d", b))
	}
	// Remount: what is on disk, not what the kernel cached, must match.
	if err := unmount(m); err != nil {
		t.Fatal(err)
	}
	var reportMu sync.Mutex
	reported := map[string][]uint64{}
	m2, err := Mount(mp, v, Options{Logger: testLogger(t), AuthFailed: func(cipherPath string, block uint64) {
		reportMu.Lock()
		defer reportMu.Unlock()
		reported[cipherPath] = append(reported[cipherPath], block)
	}})
	if err != nil {
		t.Fatal(err)
	}
	*m = *m2 // the cleanup unmounts the new server
	compareTrees(t, mp, ref, "after remount")
	checkLongNames(t, v.Dir)
	final := snapshot(t, ref)
	if len(final) < 5 {
		t.Fatalf("the random operations left only %d entries; the test exercises too little", len(final))
	}
	t.Logf("%d entries compared", len(final))
}

// TestFlippedByte: one corrupt block reads as EIO for its 4 KiB only.
func TestFlippedByte(t *testing.T) {
	v := testVolume(t, crypto.AESGCM, true)
	mp, m := mountTest(t, v, Options{})
	data := bytes.Repeat([]byte("0123456789abcdef"), 5*crypto.BlockSize/16)
	if err := os.WriteFile(filepath.Join(mp, "f"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unmount(m); err != nil {
		t.Fatal(err)
	}
	var cipherFile string
	ents, _ := os.ReadDir(v.Dir)
	for _, e := range ents {
		if e.Name() != crypto.DirIVName {
			cipherFile = filepath.Join(v.Dir, e.Name())
		}
	}
	raw, err := os.ReadFile(cipherFile)
	if err != nil {
		t.Fatal(err)
	}
	raw[crypto.HeaderLen+2*v.Content.CipherBlockSize()+100] ^= 0x01
	if err := os.WriteFile(cipherFile, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	var reportMu sync.Mutex
	reported := map[string][]uint64{}
	m2, err := Mount(mp, v, Options{Logger: testLogger(t), AuthFailed: func(cipherPath string, block uint64) {
		reportMu.Lock()
		defer reportMu.Unlock()
		reported[cipherPath] = append(reported[cipherPath], block)
	}})
	if err != nil {
		t.Fatal(err)
	}
	*m = *m2
	f, err := os.Open(filepath.Join(mp, "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for b := 4; b >= 0; b-- { // backwards, so readahead does not hide the per-block answer
		buf := make([]byte, crypto.BlockSize)
		n, err := f.ReadAt(buf, int64(b)*crypto.BlockSize)
		if b == 2 {
			if !errors.Is(err, syscall.EIO) {
				t.Fatalf("block 2: got %d bytes, err %v; want EIO", n, err)
			}
			continue
		}
		if err != nil || !bytes.Equal(buf, data[b*crypto.BlockSize:(b+1)*crypto.BlockSize]) {
			t.Fatalf("block %d: err %v, equal %v", b, err, bytes.Equal(buf, data[b*crypto.BlockSize:(b+1)*crypto.BlockSize]))
		}
	}
	if _, err := os.ReadFile(filepath.Join(mp, "f")); !errors.Is(err, syscall.EIO) {
		t.Fatalf("whole file: %v, want EIO", err)
	}
	if m.Counters.Errors.Load() == 0 {
		t.Error("EIO not counted as an error")
	}
	// Options.AuthFailed heard of block 2, under the file's name in the cipherdir.
	reportMu.Lock()
	defer reportMu.Unlock()
	blocks := reported["/"+filepath.Base(cipherFile)]
	if len(reported) != 1 || len(blocks) == 0 {
		t.Fatalf("AuthFailed reports %v, want block 2 of %q", reported, "/"+filepath.Base(cipherFile))
	}
	for _, b := range blocks {
		if b != 2 {
			t.Errorf("AuthFailed reported block %d, only 2 is corrupt", b)
		}
	}
}

// TestConcurrentWriters: goroutines write interleaved unaligned chunks of one file (sharing
// blocks, so read-modify-write must be serialised) and whole files of their own, with readers
// running alongside.
func TestConcurrentWriters(t *testing.T) {
	v := testVolume(t, crypto.AESGCM, true)
	mp, _ := mountTest(t, v, Options{})
	const writers, chunk, chunks = 4, 1000, 200
	shared := filepath.Join(mp, "shared")
	if err := os.WriteFile(shared, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	want := make([]byte, chunk*chunks)
	var wg sync.WaitGroup
	errs := make(chan error, 2*writers+2)
	stop := make(chan struct{})
	for g := 0; g < writers; g++ {
		for c := g; c < chunks; c += writers {
			for i := 0; i < chunk; i++ {
				want[c*chunk+i] = byte(g*31 + c + i)
			}
		}
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			f, err := os.OpenFile(shared, os.O_WRONLY, 0)
			if err != nil {
				errs <- err
				return
			}
			defer f.Close()
			own := make([]byte, 0, 50<<10)
			for c := g; c < chunks; c += writers {
				if _, err := f.WriteAt(want[c*chunk:(c+1)*chunk], int64(c*chunk)); err != nil {
					errs <- err
					return
				}
				own = append(own, want[c*chunk:(c+1)*chunk]...)
			}
			name := filepath.Join(mp, fmt.Sprintf("own%d", g))
			if err := os.WriteFile(name, own, 0o644); err != nil {
				errs <- err
				return
			}
			if got, err := os.ReadFile(name); err != nil || !bytes.Equal(got, own) {
				errs <- fmt.Errorf("%s: read back differs (%v)", name, err)
			}
		}(g)
	}
	var rg sync.WaitGroup
	for r := 0; r < 2; r++ {
		rg.Add(1)
		go func() {
			defer rg.Done()
			buf := make([]byte, 64<<10)
			for {
				select {
				case <-stop:
					return
				default:
				}
				f, err := os.Open(shared)
				if err != nil {
					errs <- err
					return
				}
				if _, err := f.ReadAt(buf, 0); err != nil && err.Error() != "EOF" {
					f.Close()
					errs <- fmt.Errorf("reader: %w", err)
					return
				}
				f.Close()
			}
		}()
	}
	wg.Wait()
	close(stop)
	rg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, err := os.ReadFile(shared)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("shared file differs from the reference (len %d vs %d)", len(got), len(want))
	}
}

// checkLongNames: every long-name entry has its .name file and no .name file is orphaned.
func checkLongNames(t *testing.T, cipherdir string) {
	t.Helper()
	n := 0
	filepath.WalkDir(cipherdir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		ents, _ := os.ReadDir(p)
		names := map[string]bool{}
		for _, e := range ents {
			names[e.Name()] = true
		}
		for name := range names {
			switch {
			case crypto.IsLongNameFile(name):
				if !names[strings.TrimSuffix(name, crypto.LongNameSuffix)] {
					t.Errorf("orphaned %s in %s", name, p)
				}
			case crypto.IsLongName(name):
				n++
				if !names[name+crypto.LongNameSuffix] {
					t.Errorf("%s in %s has no .name file", name, p)
				}
			}
		}
		return nil
	})
	t.Logf("%d long names checked", n)
}
