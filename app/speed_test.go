package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vaultui/vaultui/crypto"
)

// fixedMeter gives each cipher its MB/s, and the write a time per MB/s of cipher speed.
type fixedMeter struct {
	mu     sync.Mutex
	mbps   map[crypto.CipherID][]float64 // cycled round by round
	fail   map[crypto.CipherID]error
	write  map[crypto.CipherID]WriteSample
	calls  map[crypto.CipherID]int
	writes int
}

func (m *fixedMeter) Cipher(ctx context.Context, c crypto.CipherID, d time.Duration) (float64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.calls == nil {
		m.calls = map[crypto.CipherID]int{}
	}
	n := m.calls[c]
	m.calls[c]++
	if err := m.fail[c]; err != nil {
		return 0, err
	}
	s := m.mbps[c]
	return s[n%len(s)], nil
}

func (m *fixedMeter) Write(ctx context.Context, dir string, c crypto.CipherID, size int64) (WriteSample, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.writes++
	return m.write[c], nil
}

// failMeter fails the test when anything is measured.
type failMeter struct{ t *testing.T }

func (m failMeter) Cipher(context.Context, crypto.CipherID, time.Duration) (float64, error) {
	m.t.Error("a cipher was measured")
	return 0, errors.New("measured")
}

func (m failMeter) Write(context.Context, string, crypto.CipherID, int64) (WriteSample, error) {
	m.t.Error("a write was measured")
	return WriteSample{}, errors.New("measured")
}

func steadyMeter() *fixedMeter {
	ms := time.Millisecond
	return &fixedMeter{
		mbps: map[crypto.CipherID][]float64{crypto.AEGIS: {7400}, crypto.AESGCM: {2400}, crypto.XChaCha: {960}, crypto.AESSIV: {310}},
		write: map[crypto.CipherID]WriteSample{
			crypto.AEGIS:  {Wall: 100 * ms, CPU: 6 * ms},
			crypto.AESGCM: {Wall: 110 * ms, CPU: 16 * ms},
		},
	}
}

func testSpeed(t *testing.T, m Meter) *Speed {
	dir := t.TempDir()
	return &Speed{CachePath: filepath.Join(dir, "cache", "speed.json"), DefaultDir: dir, Meter: m,
		cpu: "amd64 Test CPU", build: "v1", now: func() time.Time { return time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC) }}
}

// TestRunStopsWhenStable: steady figures need only minRounds rounds; the write compares the
// recommended cipher with AES-256-GCM.
func TestRunStopsWhenStable(t *testing.T) {
	m := steadyMeter()
	s := testSpeed(t, m)
	var reports int
	r, err := s.Run(t.Context(), "", func(SpeedReport) { reports++ })
	if err != nil {
		t.Fatal(err)
	}
	if m.calls[crypto.AEGIS] != minRounds || m.calls[crypto.AESSIV] != minRounds {
		t.Errorf("measured %v rounds, want %d each", m.calls, minRounds)
	}
	if reports < len(crypto.Ciphers)*minRounds {
		t.Errorf("%d progress reports", reports)
	}
	if r.Write == nil || r.Write.Cipher != crypto.AEGIS || r.Write.Baseline != crypto.AESGCM || len(r.Write.Rounds) != minRounds {
		t.Fatalf("write %+v", r.Write)
	}
	if got := r.Write.Ratio().Median; !near(got, 1.1) {
		t.Errorf("write ratio %v, want 1.1", got)
	}
	if got := r.Write.CPUSavedPerGiB().Median; !near(got, 0.01*32) {
		t.Errorf("CPU saved per GiB %v s, want 0.32", got)
	}
}

// TestRunRepeatsUntilStable: a noisy ratio makes it measure more rounds than the minimum,
// and the report keeps every round's sample.
func TestRunRepeatsUntilStable(t *testing.T) {
	m := steadyMeter()
	m.mbps[crypto.AEGIS] = []float64{7400, 4800, 9600, 7400, 7400, 7400, 7400, 7400, 7400, 7400}
	s := testSpeed(t, m)
	r, err := s.Run(t.Context(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := r.Result(crypto.AEGIS)
	if len(a.Samples) <= minRounds {
		t.Fatalf("stopped after %d rounds with a spread of %.0f%%", len(a.Samples), 100*r.Ratio(crypto.AEGIS).Spread())
	}
	if a.MBps != 7400 {
		t.Errorf("median %v, want 7400", a.MBps)
	}
}

// TestCacheKeyedByCPUBuildAndFileSystem: a finished test is remembered for this CPU and
// build; another CPU or build, or a broken file, reads as nothing cached; the write is
// remembered for its file system only.
func TestCacheKeyedByCPUBuildAndFileSystem(t *testing.T) {
	s := testSpeed(t, steadyMeter())
	s.Meter.(*fixedMeter).fail = map[crypto.CipherID]error{crypto.AESSIV: errors.New("no AES instructions")}
	ran, err := s.Run(t.Context(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := s.Cached("")
	if !ok || !got.Cached || !got.Measured.Equal(ran.Measured) || got.Write == nil || len(got.Write.Rounds) != minRounds {
		t.Fatalf("cached %+v (ok %v)", got, ok)
	}
	if a, _ := got.Result(crypto.AEGIS); a.MBps != 7400 || len(a.Samples) != minRounds || a.Implementation == "" && ran.Ciphers[0].Implementation != "" {
		t.Errorf("AEGIS from the cache: %+v", a)
	}
	if siv, _ := got.Result(crypto.AESSIV); siv.Err == nil || siv.Err.Error() != "no AES instructions" {
		t.Errorf("an error did not survive as its message: %+v", siv)
	}
	if got.Recommend().Lines()[0] != ran.Recommend().Lines()[0] {
		t.Errorf("the cached test recommends %q, the run %q", got.Recommend().Gain, ran.Recommend().Gain)
	}

	// Another file system: the ciphers are remembered, the write is not.
	if other, ok := s.Cached("/proc"); !ok || other.Write != nil {
		t.Errorf("on /proc: ok %v, write %+v", ok, other.Write)
	}
	for _, o := range []*Speed{
		{CachePath: s.CachePath, cpu: "arm64 Other", build: "v1"},
		{CachePath: s.CachePath, cpu: s.cpu, build: "v2"},
	} {
		if _, ok := o.Cached(""); ok {
			t.Errorf("cache for %q %q read a result measured on %q %q", o.cpu, o.build, s.cpu, s.build)
		}
	}
	if err := os.WriteFile(s.CachePath, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Cached(""); ok {
		t.Error("a broken cache file loaded")
	}
}

// TestForNewVaultUsesTheCache: with a remembered test and write, nothing is measured; with
// a remembered test but a folder on another file system, only the write is measured, and
// then remembered beside the first.
func TestForNewVaultUsesTheCache(t *testing.T) {
	s := testSpeed(t, steadyMeter())
	if _, err := s.Run(t.Context(), "", nil); err != nil {
		t.Fatal(err)
	}
	s.Meter = failMeter{t}
	r, err := s.ForNewVault(t.Context(), s.DefaultDir, nil)
	if err != nil || !r.Cached || r.Recommend().Cipher != crypto.AEGIS || r.Write == nil {
		t.Fatalf("ForNewVault: %+v, %v", r, err)
	}

	shm := "/dev/shm"
	if _, _, err := fileSystem(shm); err != nil {
		t.Skip("no /dev/shm for a second file system")
	}
	if k1, _, _ := fileSystem(shm); k1 == mustFS(t, s.DefaultDir) {
		t.Skip("/dev/shm is on the temp dir's file system")
	}
	m := steadyMeter()
	s.Meter = m
	r, err = s.ForNewVault(t.Context(), shm, nil)
	if err != nil || r.Write == nil || r.Write.Dir != shm {
		t.Fatalf("ForNewVault(%s): %+v, %v", shm, r.Write, err)
	}
	if len(m.calls) != 0 || m.writes == 0 {
		t.Errorf("measured ciphers %v and %d writes; want only writes", m.calls, m.writes)
	}
	s.Meter = failMeter{t}
	for _, dir := range []string{shm, s.DefaultDir} {
		if r, ok := s.Cached(dir); !ok || r.Write == nil || r.Write.Dir != dir {
			t.Errorf("the write on %s is not remembered: %+v", dir, r.Write)
		}
	}
}

func mustFS(t *testing.T, dir string) string {
	k, _, err := fileSystem(dir)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestRunCancelledRemembersNothing: an interrupted test is not a result.
func TestRunCancelledRemembersNothing(t *testing.T) {
	s := testSpeed(t, steadyMeter())
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	s.Meter = &cancelMeter{}
	if _, err := s.Run(ctx, "", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	if _, ok := s.Cached(""); ok {
		t.Error("a cancelled test was remembered")
	}
}

type cancelMeter struct{}

func (cancelMeter) Cipher(ctx context.Context, c crypto.CipherID, d time.Duration) (float64, error) {
	return 0, ctx.Err()
}

func (cancelMeter) Write(ctx context.Context, dir string, c crypto.CipherID, size int64) (WriteSample, error) {
	return WriteSample{}, ctx.Err()
}

// TestRealMeterWrites measures for real, briefly: a write leaves no file behind.
func TestRealMeterWrites(t *testing.T) {
	dir := t.TempDir()
	ws, err := realMeter{}.Write(t.Context(), dir, crypto.AESGCM, 4<<20)
	if err != nil {
		t.Fatal(err)
	}
	if ws.Wall <= 0 {
		t.Errorf("sample %+v", ws)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
	mbps, err := realMeter{}.Cipher(t.Context(), crypto.AESGCM, 5*time.Millisecond)
	if err != nil || mbps <= 0 {
		t.Errorf("cipher: %v MB/s, %v", mbps, err)
	}
	if !strings.HasPrefix(cpuModel(), "amd64") && !strings.HasPrefix(cpuModel(), "arm64") {
		t.Logf("CPU %q", cpuModel())
	}
}
