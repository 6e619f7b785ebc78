package crypto

import (
	"context"
	"fmt"
	"time"
)

// SpeedResult is the measured encryption throughput of one content cipher.
type SpeedResult struct {
	Cipher CipherID
	MBps   float64 // 10^6 bytes of plaintext per second
	// Implementation names the code that ran, where it varies (AEGIS: "VAES-512", "ARMv8
	// AES", "portable, constant time").
	Implementation string
	Err            error // set when the cipher could not be measured
}

// Recommendation is the cipher SpeedTest suggests for new vaults.
type Recommendation struct {
	Cipher CipherID
	Reason string
	Ratio  float64 // throughput relative to AES-256-GCM (0 when unknown)
}

// Speed test shape: what a mounted vault does with a large write, 32 blocks
// of 4 KiB per EncryptBlocks call.
const (
	speedBlocks = 32
	// speedBudget is the total measuring time; with setup it stays well
	// under 3 s.
	speedBudget = 2 * time.Second
)

// SpeedTest measures every content cipher (see Ciphers) encrypting runs of
// 32 blocks of 4 KiB, calls report (if not nil) with each result as soon as
// it is known, and returns all results and the recommendation for this
// machine. It takes under 3 s; a cancelled ctx ends it early, the remaining
// ciphers reporting ctx's error.
func SpeedTest(ctx context.Context, report func(SpeedResult)) ([]SpeedResult, Recommendation) {
	per := speedBudget / time.Duration(len(Ciphers))
	results := make([]SpeedResult, 0, len(Ciphers))
	for _, c := range Ciphers {
		r := SpeedResult{Cipher: c}
		r.Implementation, _ = Implementation(c)
		if err := ctx.Err(); err != nil {
			r.Err = err
		} else {
			r.MBps, r.Err = Measure(ctx, c, per)
		}
		results = append(results, r)
		if report != nil {
			report(r)
		}
	}
	return results, Recommend(results, HasAESInstructions())
}

// Measure returns cipher c's encryption throughput on this CPU in MB/s, measured for about d.
func Measure(ctx context.Context, c CipherID, d time.Duration) (float64, error) {
	key := make([]byte, MasterKeyLen)
	for i := range key {
		key[i] = byte(i) // throughput does not depend on the key
	}
	e, err := NewContentEnc(c, key, true)
	if err != nil {
		return 0, err
	}
	defer e.Wipe()
	plain := make([]byte, speedBlocks*BlockSize)
	buf := make([]byte, 0, e.CipherSize(uint64(len(plain))))
	var id [FileIDLen]byte
	id[0] = 1
	buf = e.EncryptBlocks(buf[:0], plain, 0, id[:]) // warm up caches and pools
	var bytes int64
	start := time.Now()
	deadline := start.Add(d)
	for i := 0; ; i++ {
		buf = e.EncryptBlocks(buf[:0], plain, uint64(i), id[:])
		bytes += int64(len(plain))
		if i%4 == 3 {
			if time.Now().After(deadline) {
				break
			}
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
	}
	elapsed := time.Since(start).Seconds()
	return float64(bytes) / elapsed / 1e6, nil
}

// Recommend picks the cipher for new vaults from speed results: AEGIS-256X2
// when the CPU has AES instructions and AEGIS is faster than AES-256-GCM;
// AES-256-GCM when the CPU has AES instructions otherwise; XChaCha20-Poly1305
// when it has none (software AES is slow and leaks timing).
func Recommend(results []SpeedResult, hasAES bool) Recommendation {
	speed := map[CipherID]float64{}
	for _, r := range results {
		if r.Err == nil && r.MBps > 0 {
			speed[r.Cipher] = r.MBps
		}
	}
	gcm := speed[AESGCM]
	ratio := func(c CipherID) float64 {
		if gcm == 0 {
			return 0
		}
		return speed[c] / gcm
	}
	if !hasAES {
		return Recommendation{Cipher: XChaCha, Ratio: ratio(XChaCha),
			Reason: "this CPU has no AES instructions: XChaCha20-Poly1305 is fast and constant-time in software"}
	}
	aegis, haveAEGIS := speed[AEGIS]
	switch {
	case haveAEGIS && gcm == 0:
		return Recommendation{Cipher: AEGIS, Reason: "AEGIS-256X2 works on this CPU and AES-256-GCM could not be measured"}
	case haveAEGIS && aegis > gcm:
		return Recommendation{Cipher: AEGIS, Ratio: ratio(AEGIS),
			Reason: fmt.Sprintf("AEGIS-256X2 is %.1fx faster than AES-256-GCM on this CPU", ratio(AEGIS))}
	case haveAEGIS:
		return Recommendation{Cipher: AESGCM, Ratio: 1,
			Reason: fmt.Sprintf("AEGIS-256X2 is not faster than AES-256-GCM on this CPU (%.2fx)", ratio(AEGIS))}
	}
	return Recommendation{Cipher: AESGCM, Ratio: 1,
		Reason: "this CPU has AES instructions and AEGIS-256X2 could not be measured"}
}
