package vfs

import (
	"log"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
)

// BenchmarkSequential writes and reads a file through an in-process mount with 1 MiB requests
// (the FUSE server runs in the benchmark's process, so -cpuprofile shows its side).
func BenchmarkSequential(b *testing.B) {
	for _, c := range []crypto.CipherID{crypto.AEGIS, crypto.AESGCM} {
		b.Run(string(c)+"/write", func(b *testing.B) {
			v := testVolume(b, c, true)
			mp, _ := mountTest(b, v, Options{})
			f, err := os.Create(filepath.Join(mp, "f"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			buf := make([]byte, RequestMax)
			b.SetBytes(RequestMax)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := f.WriteAt(buf, int64(i%256)*RequestMax); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(string(c)+"/read", func(b *testing.B) {
			v := testVolume(b, c, true)
			mp, _ := mountTest(b, v, Options{})
			f, err := os.Create(filepath.Join(mp, "f"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			buf := make([]byte, RequestMax)
			for i := 0; i < 64; i++ {
				f.Write(buf)
			}
			b.SetBytes(RequestMax)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i%64 == 0 {
					unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
				}
				if _, err := f.ReadAt(buf, int64(i%64)*RequestMax); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCreate creates empty files through an in-process mount.
func BenchmarkCreate(b *testing.B) {
	v := testVolume(b, crypto.AESGCM, true)
	mp, _ := mountTest(b, v, Options{})
	dir := filepath.Join(mp, "d")
	os.Mkdir(dir, 0o755)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		fd, err := unix.Open(filepath.Join(dir, "file-"+strconv.Itoa(i)), unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
		if err != nil {
			b.Fatal(err)
		}
		unix.Close(fd)
	}
}

// BenchmarkListLong lists a directory of 2000 files with their attributes ("ls -l") after the
// kernel's caches expired.
func BenchmarkListLong(b *testing.B) {
	v := testVolume(b, crypto.AESGCM, true)
	mp, _ := mountTest(b, v, Options{})
	dir := filepath.Join(mp, "d")
	os.Mkdir(dir, 0o755)
	for i := 0; i < 2000; i++ {
		os.WriteFile(filepath.Join(dir, "file-"+strconv.Itoa(i)), nil, 0o600)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		time.Sleep(cacheTimeout + 50*time.Millisecond)
		b.StartTimer()
		ents, err := os.ReadDir(dir)
		if err != nil || len(ents) != 2000 {
			b.Fatal(err, len(ents))
		}
		for _, e := range ents {
			var st unix.Stat_t
			if err := unix.Lstat(filepath.Join(dir, e.Name()), &st); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkSmallFiles times the workloads whose requests TestRequestBudget counts, with the
// mount's real cache timeout as "vaultui bench" meets it: creating 200 files, ls -l of them
// after the kernel's entries expired, and removing them. It reports each one's time and
// round trips per file; on a machine too slow to list before the entries the listing brought
// in expire again, the kernel looks names up anew, which shows here as more round trips. The
// times include go-fuse's formatting of its debug lines, by which the requests are counted.
func BenchmarkSmallFiles(b *testing.B) {
	reqs := &requestLog{}
	mp, _ := mountTest(b, volumeOf(realVault(b, "", crypto.AESGCM)), Options{Debug: true, Logger: log.New(reqs, "", 0)})
	dir := filepath.Join(mp, "d")
	if err := os.Mkdir(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	const n = 200
	var spent [3]time.Duration
	var trips [3]int
	phase := func(i int, do func()) {
		reqs.count()
		start := time.Now()
		do()
		spent[i] += time.Since(start)
		for op, k := range reqs.count() {
			if op != "FORGET" && op != "BATCH_FORGET" && op != "INTERRUPT" { // no reply
				trips[i] += k
			}
		}
	}
	name := func(i int) string { return filepath.Join(dir, "file-"+strconv.Itoa(i)) }
	buf := make([]byte, 256)
	b.ResetTimer()
	for range b.N {
		phase(0, func() {
			for i := range n {
				fd, err := unix.Open(name(i), unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
				if err != nil {
					b.Fatal(err)
				}
				unix.Close(fd)
			}
		})
		b.StopTimer()
		time.Sleep(cacheTimeout + 50*time.Millisecond) // the kernel's entries expire: no event says so
		b.StartTimer()
		phase(1, func() {
			ents, err := os.ReadDir(dir)
			if err != nil || len(ents) != n {
				b.Fatal(err, len(ents))
			}
			for _, e := range ents {
				var st unix.Stat_t
				p := filepath.Join(dir, e.Name())
				if err := unix.Lstat(p, &st); err != nil {
					b.Fatal(err)
				}
				unix.Lgetxattr(p, "security.selinux", buf)
				unix.Lgetxattr(p, "system.posix_acl_access", buf)
			}
		})
		phase(2, func() {
			for i := range n {
				if err := unix.Unlink(name(i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for i, what := range []string{"create", "ls-l", "rm"} {
		b.ReportMetric(float64(spent[i].Microseconds())/float64(b.N*n), what+"-µs/file")
		b.ReportMetric(float64(trips[i])/float64(b.N*n), what+"-trips/file")
	}
}

// BenchmarkRandomRead4K reads random 4 KiB blocks with the page cache dropped and readahead
// off: one FUSE round trip each.
func BenchmarkRandomRead4K(b *testing.B) {
	for _, c := range []crypto.CipherID{crypto.AESGCM, crypto.AEGIS} {
		b.Run(c.String(), func(b *testing.B) { benchRandomRead4K(b, c) })
	}
}

func benchRandomRead4K(b *testing.B, c crypto.CipherID) {
	v := testVolume(b, c, true)
	mp, _ := mountTest(b, v, Options{})
	f, err := os.Create(filepath.Join(mp, "f"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, RequestMax)
	const size = 64 << 20
	for i := 0; i < size/RequestMax; i++ {
		f.Write(buf)
	}
	unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_RANDOM)
	page := buf[:4096]
	b.SetBytes(4096)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		off := int64((i*7919)%(size/4096)) * 4096
		if _, err := f.ReadAt(page, off); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNodeMemory measures the live heap the mount keeps per file the kernel holds:
// 20,000 files in directories of 100, created through the mount and kept in the kernel's
// caches (the entries of "du" or "find" over a big tree). Issue 25's memory target is
// per node, so this is its quick check: the server runs in the benchmark's process, and
// its live heap after a collection, less the heap before the files, is what their nodes cost.
func BenchmarkNodeMemory(b *testing.B) {
	const dirs, perDir = 200, 100
	for range b.N {
		b.StopTimer()
		v := testVolume(b, crypto.AESGCM, true)
		mp, _ := mountTest(b, v, Options{})
		before := liveHeap()
		b.StartTimer()
		for d := range dirs {
			dir := filepath.Join(mp, "d"+strconv.Itoa(d))
			if err := os.Mkdir(dir, 0o700); err != nil {
				b.Fatal(err)
			}
			for i := range perDir {
				fd, err := unix.Open(filepath.Join(dir, "file-"+strconv.Itoa(i)), unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
				if err != nil {
					b.Fatal(err)
				}
				unix.Close(fd)
			}
		}
		b.StopTimer()
		after := liveHeap()
		b.ReportMetric(float64(after-before)/(dirs*(perDir+1)), "B/node")
	}
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
