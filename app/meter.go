package app

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/mountmgr/vfs"
)

// realMeter measures on this machine. It times with the thread's own clocks, not the wall
// clock: on a machine shared with other work, a thread waiting for a CPU would otherwise
// count that wait against whichever cipher it happened to hit, and the figures would wander
// with the load (they did: 2.2x, 1.7x and 3.1x in three runs).
type realMeter struct{}

// Cipher measures MB/s per second of CPU time: what one core does.
func (realMeter) Cipher(ctx context.Context, c crypto.CipherID, d time.Duration) (float64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	r, err := crypto.NewSpeedRun(c)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// On a very busy machine the CPU time may come slowly: give up after 4d of wall time.
	wallEnd := time.Now().Add(4 * d)
	cpu0 := threadCPU()
	var bytes int64
	for i := 0; ; i++ {
		bytes += int64(r.Encrypt())
		if i%4 != 3 {
			continue
		}
		if cpu := threadCPU() - cpu0; cpu >= d || time.Now().After(wallEnd) {
			if cpu <= 0 {
				return 0, fmt.Errorf("speed test: no CPU time measured for %s", c)
			}
			return float64(bytes) / cpu.Seconds() / 1e6, nil
		}
		if err := ctx.Err(); err != nil {
			return 0, err
		}
	}
}

// Write writes size bytes of a new file as a mount does for a large sequential write: the
// header, then for each request of vfs.RequestMax bytes the space reserved (fallocate, as the
// mount does before a write that extends a file) and vfs.WriteBlocks, the mount's own last
// step; then fdatasync, so the disk's part counts (on tmpfs it costs nothing). The temporary
// file is removed. It needs four times size free, so a nearly full disk is left alone.
func (realMeter) Write(ctx context.Context, dir string, c crypto.CipherID, size int64) (WriteSample, error) {
	var sf unix.Statfs_t
	if err := unix.Statfs(dir, &sf); err != nil {
		return WriteSample{}, fmt.Errorf("speed test: %s: %w", dir, err)
	}
	if free := int64(sf.Bavail) * int64(sf.Bsize); free < 4*size {
		return WriteSample{}, fmt.Errorf("speed test: %s has %d MiB free, too little to measure a write of %d MiB", dir, free>>20, size>>20)
	}
	key := make([]byte, crypto.MasterKeyLen)
	for i := range key {
		key[i] = byte(i) // throughput does not depend on the key
	}
	enc, err := crypto.NewContentEnc(c, key, true)
	if err != nil {
		return WriteSample{}, err
	}
	defer enc.Wipe()
	hdr, err := crypto.NewFileHeader()
	if err != nil {
		return WriteSample{}, err
	}
	f, err := os.CreateTemp(dir, ".vaultui-speedtest-*")
	if err != nil {
		return WriteSample{}, fmt.Errorf("speed test: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	fd := int(f.Fd())

	plain := make([]byte, vfs.RequestMax)
	for i := range plain {
		plain[i] = byte(i * 7) // not all zero: nothing may take a shortcut for zeros
	}
	cb := make([]byte, 0, int(enc.CipherSize(vfs.RequestMax))+4096) // a page to spare, as the mount's buffers
	// The thread's CPU time is the write's: keep the goroutine on it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0, wait0 := threadCPU(), runQueueWait()
	start := time.Now()
	if _, err := f.WriteAt(hdr.Bytes(), 0); err != nil {
		return WriteSample{}, fmt.Errorf("speed test: %w", err)
	}
	for off := int64(0); off < size; off += vfs.RequestMax {
		if err := ctx.Err(); err != nil {
			return WriteSample{}, err
		}
		first := uint64(off) / crypto.BlockSize
		cOff := int64(enc.BlockCipherOffset(first))
		if err := unix.Fallocate(fd, unix.FALLOC_FL_KEEP_SIZE, cOff, int64(enc.CipherSize(vfs.RequestMax))-crypto.HeaderLen); err != nil && err != unix.EOPNOTSUPP {
			return WriteSample{}, fmt.Errorf("speed test: %w", err)
		}
		if err := vfs.WriteBlocks(enc, fd, cb, plain, first, hdr.ID[:]); err != nil {
			return WriteSample{}, fmt.Errorf("speed test: %w", err)
		}
	}
	if err := unix.Fdatasync(fd); err != nil {
		return WriteSample{}, fmt.Errorf("speed test: %w", err)
	}
	// The time the thread spent runnable but waiting for a CPU is the load's, not the
	// write's: what is left is what an idle machine would take, disk waits included.
	wall := time.Since(start) - (runQueueWait() - wait0)
	return WriteSample{Wall: wall, CPU: threadCPU() - cpu0}, nil
}

// threadCPU is the calling thread's CPU time, user and system.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// runQueueWait is how long the calling thread has waited for a CPU while runnable, from
// /proc/thread-self/schedstat ("time on CPU, time waiting, timeslices" in ns); 0 where the
// kernel does not keep it, so the wall clock is used as it is.
func runQueueWait() time.Duration {
	b, err := os.ReadFile("/proc/thread-self/schedstat")
	if err != nil {
		return 0
	}
	var onCPU, waiting int64
	if _, err := fmt.Sscan(string(b), &onCPU, &waiting); err != nil {
		return 0
	}
	return time.Duration(waiting)
}
