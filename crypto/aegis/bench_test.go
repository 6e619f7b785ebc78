package aegis

import (
	"crypto/aes"
	"crypto/cipher"
	"fmt"
	"math"
	"testing"
	"time"
)

// The benchmarks put every AEGIS variant next to the standard library's
// AES-256-GCM with a 16-byte nonce (what gocryptfs vaults use), so that one
// run gives comparable numbers; bench.sh turns them into ratios.

var benchSizes = []struct {
	name string
	n    int
}{{"64B", 64}, {"4KiB", 4096}, {"1MiB", 1 << 20}}

func benchAEADs(b *testing.B) []struct {
	name string
	a    cipher.AEAD
} {
	key := make([]byte, 32)
	block, err := aes.NewCipher(key)
	if err != nil {
		b.Fatal(err)
	}
	gcm, err := cipher.NewGCMWithNonceSize(block, 16)
	if err != nil {
		b.Fatal(err)
	}
	list := []struct {
		name string
		a    cipher.AEAD
	}{{"AES-256-GCM", gcm}}
	for _, c := range constructors {
		a, err := c.new(key[:c.v.keySize()], 16)
		if err != nil {
			b.Fatal(err)
		}
		list = append(list, struct {
			name string
			a    cipher.AEAD
		}{c.v.name, a})
	}
	return list
}

func BenchmarkSeal(b *testing.B) {
	for _, c := range benchAEADs(b) {
		for _, size := range benchSizes {
			b.Run(fmt.Sprintf("%s/%s", c.name, size.name), func(b *testing.B) {
				nonce := make([]byte, c.a.NonceSize())
				msg := make([]byte, size.n)
				ad := make([]byte, 24)
				dst := make([]byte, 0, size.n+c.a.Overhead())
				b.SetBytes(int64(size.n))
				b.ReportAllocs()
				for b.Loop() {
					c.a.Seal(dst, nonce, msg, ad)
				}
			})
		}
	}
}

func BenchmarkOpen(b *testing.B) {
	for _, c := range benchAEADs(b) {
		b.Run(c.name+"/4KiB", func(b *testing.B) {
			nonce := make([]byte, c.a.NonceSize())
			msg := make([]byte, 4096)
			ad := make([]byte, 24)
			ct := c.a.Seal(nil, nonce, msg, ad)
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.a.Open(msg[:0], nonce, ct, ad); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSealBatch seals 32 independent 4 KiB blocks (one FUSE write of
// 128 KiB) per operation: through SealBatch for AEGIS, in a loop for GCM.
func BenchmarkSealBatch(b *testing.B) {
	const k = 32
	for _, c := range benchAEADs(b) {
		b.Run(c.name+"/32x4KiB", func(b *testing.B) {
			dsts, nonces, msgs, ads := make([][]byte, k), make([][]byte, k), make([][]byte, k), make([][]byte, k)
			for i := range k {
				nonces[i] = make([]byte, c.a.NonceSize())
				nonces[i][0] = byte(i)
				msgs[i] = make([]byte, 4096)
				ads[i] = make([]byte, 24)
				dsts[i] = make([]byte, 0, 4096+c.a.Overhead())
			}
			b.SetBytes(k * 4096)
			b.ReportAllocs()
			batcher, _ := c.a.(Batcher)
			for b.Loop() {
				if batcher != nil {
					batcher.SealBatch(dsts, nonces, msgs, ads)
					continue
				}
				for i := range k {
					c.a.Seal(dsts[i], nonces[i], msgs[i], ads[i])
				}
			}
		})
	}
}

// BenchmarkOpenBatch is BenchmarkSealBatch for OpenBatch.
func BenchmarkOpenBatch(b *testing.B) {
	const k = 32
	for _, c := range benchAEADs(b) {
		b.Run(c.name+"/32x4KiB", func(b *testing.B) {
			dsts, nonces, cts, ads := make([][]byte, k), make([][]byte, k), make([][]byte, k), make([][]byte, k)
			for i := range k {
				nonces[i] = make([]byte, c.a.NonceSize())
				nonces[i][0] = byte(i)
				ads[i] = make([]byte, 24)
				cts[i] = c.a.Seal(nil, nonces[i], make([]byte, 4096), ads[i])
				dsts[i] = make([]byte, 0, 4096)
			}
			b.SetBytes(k * 4096)
			b.ReportAllocs()
			batcher, _ := c.a.(Batcher)
			for b.Loop() {
				if batcher != nil {
					if bad, err := batcher.OpenBatch(dsts, nonces, cts, ads); err != nil {
						b.Fatal(bad, err)
					}
					continue
				}
				for i := range k {
					if _, err := c.a.Open(dsts[i], nonces[i], cts[i], ads[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkRatio measures each variant against AES-256-GCM in alternating
// short rounds (GCM, then AEGIS, each on the same data), sealing and opening
// one 4 KiB message or 32 of them (a batch call for AEGIS, a loop for GCM),
// and reports the ratio
// of their fastest rounds as "x-GCM". Whole-benchmark averages swing with the
// load of a shared machine; the fastest of thousands of 10-30 µs rounds is the
// undisturbed speed, and alternating keeps both ciphers under the same clock.
// bench.sh prints these ratios.
func BenchmarkRatio(b *testing.B) {
	list := benchAEADs(b)
	gcm := list[0].a
	for _, c := range list[1:] {
		b.Run(c.name+"/4KiB", func(b *testing.B) {
			g := newSealJob(gcm, 1)
			a := newSealJob(c.a, 1)
			ratioRounds(b, 16, 16*4096, g.single, a.single)
		})
		b.Run(c.name+"/32x4KiB", func(b *testing.B) {
			g := newSealJob(gcm, 32)
			a := newSealJob(c.a, 32)
			ratioRounds(b, 1, 32*4096, g.loop, a.batch)
		})
		b.Run(c.name+"/open-4KiB", func(b *testing.B) {
			g := newSealJob(gcm, 1).sealed()
			a := newSealJob(c.a, 1).sealed()
			ratioRounds(b, 16, 16*4096, g.openSingle, a.openSingle)
		})
		b.Run(c.name+"/open-32x4KiB", func(b *testing.B) {
			g := newSealJob(gcm, 32).sealed()
			a := newSealJob(c.a, 32).sealed()
			ratioRounds(b, 1, 32*4096, g.openLoop, a.openBatch)
		})
	}
}

// sealed seals the job's messages and keeps the ciphertexts for opening.
func (j *sealJob) sealed() *sealJob {
	j.cts = make([][]byte, len(j.msgs))
	for i := range j.msgs {
		j.cts[i] = j.a.Seal(nil, j.nonces[i], j.msgs[i], j.ads[i])
	}
	return j
}

func (j *sealJob) openSingle() {
	if _, err := j.a.Open(j.dsts[0], j.nonces[0], j.cts[0], j.ads[0]); err != nil {
		panic(err)
	}
}

func (j *sealJob) openLoop() {
	for i := range j.cts {
		if _, err := j.a.Open(j.dsts[i], j.nonces[i], j.cts[i], j.ads[i]); err != nil {
			panic(err)
		}
	}
}

func (j *sealJob) openBatch() {
	if bad, err := j.a.(Batcher).OpenBatch(j.dsts, j.nonces, j.cts, j.ads); err != nil {
		panic(fmt.Sprint(bad, err))
	}
}

// sealJob is k messages of 4 KiB with 24 bytes of AD, as vaultui seals them.
type sealJob struct {
	a                            cipher.AEAD
	dsts, nonces, msgs, ads, cts [][]byte
}

func newSealJob(a cipher.AEAD, k int) *sealJob {
	j := &sealJob{a: a, dsts: make([][]byte, k), nonces: make([][]byte, k), msgs: make([][]byte, k), ads: make([][]byte, k)}
	for i := range k {
		j.nonces[i] = make([]byte, a.NonceSize())
		j.nonces[i][0] = byte(i)
		j.msgs[i] = make([]byte, 4096)
		j.ads[i] = make([]byte, 24)
		j.dsts[i] = make([]byte, 0, 4096+a.Overhead())
	}
	return j
}

func (j *sealJob) single() { j.a.Seal(j.dsts[0], j.nonces[0], j.msgs[0], j.ads[0]) }

func (j *sealJob) loop() {
	for i := range j.msgs {
		j.a.Seal(j.dsts[i], j.nonces[i], j.msgs[i], j.ads[i])
	}
}

func (j *sealJob) batch() { j.a.(Batcher).SealBatch(j.dsts, j.nonces, j.msgs, j.ads) }

// ratioRounds runs reps calls of base and of f per round and reports the
// ratio of the fastest rounds and f's throughput in its fastest round (bytes
// is what one round of f processes).
func ratioRounds(b *testing.B, reps, bytes int, base, f func()) {
	bestBase, bestF := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
	for b.Loop() {
		t0 := time.Now()
		for range reps {
			base()
		}
		t1 := time.Now()
		for range reps {
			f()
		}
		t2 := time.Now()
		bestBase, bestF = min(bestBase, t1.Sub(t0)), min(bestF, t2.Sub(t1))
	}
	b.ReportMetric(float64(bestBase)/float64(bestF), "x-GCM")
	b.ReportMetric(float64(bytes)/bestF.Seconds()/1e6, "best-MB/s")
	b.ReportMetric(0, "ns/op") // a round is not an operation
}
