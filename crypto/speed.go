package crypto

import (
	"context"
	"time"
)

// speedBlocks is the shape the speed test encrypts: what a mounted vault does with a large
// write, 32 blocks of 4 KiB per EncryptBlocks call.
const speedBlocks = 32

// SpeedRun encrypts, again and again, what a mounted vault encrypts for a large write: the
// measuring primitive of the speed test. Timing it (wall clock, CPU clock), repeating it and
// comparing ciphers is the caller's job (Measure here, the speed test in package app).
type SpeedRun struct {
	e          *ContentEnc
	plain, buf []byte
	id         [FileIDLen]byte
	n          uint64
}

// NewSpeedRun prepares runs of cipher c under a fixed key (throughput does not depend on
// the key) and encrypts one, to warm up caches and pools.
func NewSpeedRun(c CipherID) (*SpeedRun, error) {
	key := make([]byte, MasterKeyLen)
	for i := range key {
		key[i] = byte(i)
	}
	e, err := NewContentEnc(c, key, true)
	if err != nil {
		return nil, err
	}
	r := &SpeedRun{e: e, plain: make([]byte, speedBlocks*BlockSize)}
	r.buf = make([]byte, 0, e.CipherSize(uint64(len(r.plain))))
	r.id[0] = 1
	r.Encrypt()
	return r, nil
}

// Encrypt encrypts one run and returns how many plaintext bytes it encrypted.
func (r *SpeedRun) Encrypt() int {
	r.buf = r.e.EncryptBlocks(r.buf[:0], r.plain, r.n*speedBlocks, r.id[:])
	r.n++
	return len(r.plain)
}

// Close wipes the run's key.
func (r *SpeedRun) Close() { r.e.Wipe() }

// Measure returns cipher c's encryption throughput on this CPU in MB/s (10^6 bytes of
// plaintext per wall-clock second), encrypting runs of 32 blocks of 4 KiB for about d. A
// cancelled ctx ends it early with ctx's error.
func Measure(ctx context.Context, c CipherID, d time.Duration) (float64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	r, err := NewSpeedRun(c)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	var bytes int64
	start := time.Now()
	deadline := start.Add(d)
	for i := 0; ; i++ {
		bytes += int64(r.Encrypt())
		if i%4 == 3 {
			if time.Now().After(deadline) {
				break
			}
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
	}
	return float64(bytes) / time.Since(start).Seconds() / 1e6, nil
}
