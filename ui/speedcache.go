package ui

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/vaultui/vaultui/vault"
)

// maxSpeedCache bounds the cache file read: a few results, far under it.
const maxSpeedCache = 1 << 20

// speedCache keeps the last speed test on disk, so the app does not forget
// it when it quits. A result only holds for the CPU it was measured on and
// the vaultui build that measured it (a new build may run other code), so
// both are stored with it and a mismatch reads as "nothing cached".
type speedCache struct {
	path         string
	cpu, version string
}

// cachedSpeed is a speed test as the cache file stores it.
type cachedSpeed struct {
	CPU      string          `json:"cpu"`
	Version  string          `json:"version"`
	Measured time.Time       `json:"measured"`
	Results  []cachedResult  `json:"results"`
	Rec      cachedRecommend `json:"recommendation"`
}

type cachedResult struct {
	ID, Name       string
	MBps           float64
	Err            string `json:",omitempty"`
	Implementation string `json:",omitempty"`
}

type cachedRecommend struct {
	ID, Name, Reason string
	Ratio            float64
}

// speedLoaded carries a cached speed test to the root model.
type speedLoaded struct {
	results  []SpeedResult
	rec      Recommendation
	measured time.Time
}

// defaultSpeedCache is $XDG_CACHE_HOME/vaultui/speed.json (~/.cache when
// unset), keyed by this CPU's model and this build.
func defaultSpeedCache() (*speedCache, error) {
	dir := os.Getenv("XDG_CACHE_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, fmt.Errorf("speed cache: %w", err)
		}
		dir = filepath.Join(home, ".cache")
	}
	return &speedCache{path: filepath.Join(dir, "vaultui", "speed.json"), cpu: cpuModel(), version: buildVersion()}, nil
}

// load returns the cached test, or ok false when there is none for this CPU
// and build (or the file is unreadable: it is only a cache).
func (c *speedCache) load() (speedLoaded, bool) {
	data, err := vault.ReadUserFile(c.path, maxSpeedCache)
	if err != nil {
		return speedLoaded{}, false
	}
	var cs cachedSpeed
	if json.Unmarshal(data, &cs) != nil || cs.CPU != c.cpu || cs.Version != c.version || len(cs.Results) == 0 {
		return speedLoaded{}, false
	}
	out := speedLoaded{measured: cs.Measured, rec: Recommendation{
		Cipher: Cipher{ID: cs.Rec.ID, Name: cs.Rec.Name}, Reason: cs.Rec.Reason, Ratio: cs.Rec.Ratio}}
	for _, r := range cs.Results {
		sr := SpeedResult{Cipher: Cipher{ID: r.ID, Name: r.Name}, MBps: r.MBps, Implementation: r.Implementation}
		if r.Err != "" {
			sr.Err = errors.New(r.Err)
		}
		out.results = append(out.results, sr)
	}
	return out, true
}

// save writes a finished test: temp file and rename, so a reader never sees
// half of it.
func (c *speedCache) save(results []SpeedResult, rec Recommendation, measured time.Time) error {
	cs := cachedSpeed{CPU: c.cpu, Version: c.version, Measured: measured.UTC(),
		Rec: cachedRecommend{ID: rec.Cipher.ID, Name: rec.Cipher.Name, Reason: rec.Reason, Ratio: rec.Ratio}}
	for _, r := range results {
		cr := cachedResult{ID: r.Cipher.ID, Name: r.Cipher.Name, MBps: r.MBps, Implementation: r.Implementation}
		if r.Err != nil {
			cr.Err = r.Err.Error()
		}
		cs.Results = append(cs.Results, cr)
	}
	data, err := json.MarshalIndent(cs, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o700); err != nil {
		return fmt.Errorf("speed cache: %w", err)
	}
	tmp := c.path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("speed cache: %w", err)
	}
	if err := os.Rename(tmp, c.path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("speed cache: %w", err)
	}
	return nil
}

// cpuModel names this CPU as /proc/cpuinfo does ("model name" on x86,
// "Model" or "CPU part" elsewhere), with the architecture in front.
func cpuModel() string {
	model := ""
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() && model == "" {
			k, v, ok := strings.Cut(sc.Text(), ":")
			switch k = strings.TrimSpace(k); {
			case !ok:
			case k == "model name", k == "Model", k == "CPU part":
				model = strings.TrimSpace(v)
			}
		}
	}
	return runtime.GOARCH + " " + model
}

// buildVersion names this build: the module version, or the VCS revision
// for a development build.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			v += " " + s.Value
		}
		if s.Key == "vcs.modified" && s.Value == "true" {
			v += "+dirty"
		}
	}
	return v
}
