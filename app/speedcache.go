package app

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vaultui/vaultui/internal/atomicfile"
	"github.com/vaultui/vaultui/internal/userfile"
)

// speedFile is the cache as stored: the cipher rounds for one CPU and build, and the last
// write measured on each file system.
type speedFile struct {
	CPU      string        `json:"cpu"`
	Build    string        `json:"build"`
	Measured time.Time     `json:"measured"`
	HasAES   bool          `json:"aes_instructions"`
	Ciphers  []cachedSpeed `json:"ciphers"`
	Writes   []cachedWrite `json:"writes,omitempty"`
}

// cachedSpeed and cachedWrite are a CipherSpeed and a WriteSpeed as stored (their tags name
// the keys), with the error as its text and the write's file system key.
type cachedSpeed struct {
	CipherSpeed
	Err string `json:"error,omitempty"`
}

type cachedWrite struct {
	FS string `json:"fs"`
	WriteSpeed
	Err string `json:"error,omitempty"`
}

// Cached returns the remembered test for this CPU and build, with the write remembered for
// dir's file system ("" for DefaultDir) if there is one for the cipher it would measure now.
// ok is false when there is none (or the file is unreadable: it is only a cache).
func (s *Speed) Cached(dir string) (r SpeedReport, ok bool) {
	f, ok := s.load()
	if !ok {
		return SpeedReport{}, false
	}
	r = SpeedReport{Measured: f.Measured, Cached: true, HasAES: f.HasAES}
	for _, c := range f.Ciphers {
		cs := c.CipherSpeed
		if c.Err != "" {
			cs.Err = errors.New(c.Err)
		}
		cs.MBps = cs.Figure().Median
		r.Ciphers = append(r.Ciphers, cs)
	}
	key, _, err := fileSystem(cmp.Or(dir, s.DefaultDir))
	challenger, ok := r.challenger()
	if err != nil || !ok {
		return r, true
	}
	for _, w := range f.Writes {
		if w.FS == key && w.Cipher == challenger {
			ws := w.WriteSpeed
			ws.fs = w.FS
			if w.Err != "" {
				ws.Err = errors.New(w.Err)
			}
			r.Write = &ws
		}
	}
	return r, true
}

// maxSpeedCache bounds the cache read: a few KiB in practice.
const maxSpeedCache = 1 << 20

func (s *Speed) load() (speedFile, bool) {
	if s.CachePath == "" {
		return speedFile{}, false
	}
	// A regular file the user owns, bounded: a FIFO or a device put there must not hang
	// or swallow the app's start (userfile.Read).
	data, err := userfile.Read(s.CachePath, maxSpeedCache)
	if err != nil {
		return speedFile{}, false
	}
	var f speedFile
	if json.Unmarshal(data, &f) != nil || f.CPU != s.cpu || f.Build != s.build || len(f.Ciphers) == 0 {
		return speedFile{}, false
	}
	return f, true
}

// save remembers r: its ciphers replace the remembered ones, its write replaces the one
// remembered for the same file system, and the writes on other file systems stay. It
// replaces the file atomically (atomicfile), so a reader never sees half of it.
func (s *Speed) save(r SpeedReport) error {
	if s.CachePath == "" {
		return nil
	}
	old, _ := s.load()
	f := speedFile{CPU: s.cpu, Build: s.build, Measured: r.Measured.UTC(), HasAES: r.HasAES}
	for _, c := range r.Ciphers {
		cc := cachedSpeed{CipherSpeed: c}
		if c.Err != nil {
			cc.Err = c.Err.Error()
		}
		f.Ciphers = append(f.Ciphers, cc)
	}
	if w := r.Write; w != nil && w.fs != "" {
		cw := cachedWrite{FS: w.fs, WriteSpeed: *w}
		cw.Measured = w.Measured.UTC()
		if w.Err != nil {
			cw.Err = w.Err.Error()
		}
		f.Writes = append(f.Writes, cw)
	}
	for _, ow := range old.Writes {
		if r.Write == nil || ow.FS != r.Write.fs {
			f.Writes = append(f.Writes, ow)
		}
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.CachePath), 0o700); err != nil {
		return fmt.Errorf("speed test cache: %w", err)
	}
	if err := atomicfile.Replace(atomicfile.OS{}, s.CachePath, s.CachePath+".tmp", append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("speed test cache: %w", err)
	}
	return nil
}

// fileSystem identifies the file system dir is on, for the cache (device and file system
// type), and names its type for people.
func fileSystem(dir string) (key, fstype string, err error) {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return "", "", fmt.Errorf("speed test: %s: %w", dir, err)
	}
	var sf unix.Statfs_t
	if err := unix.Statfs(dir, &sf); err != nil {
		return "", "", fmt.Errorf("speed test: %s: %w", dir, err)
	}
	return fmt.Sprintf("%d:%x", st.Dev, sf.Type), fsTypeName(dir, st.Dev), nil
}

// fsTypeName reads dir's file system type from /proc/self/mountinfo ("ext4", "tmpfs"), or
// "" when it cannot tell.
func fsTypeName(dir string, dev uint64) string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	want := fmt.Sprintf("%d:%d", unix.Major(dev), unix.Minor(dev))
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 || fields[2] != want {
			continue
		}
		if i := slices.Index(fields, "-"); i >= 0 && i+1 < len(fields) {
			return fields[i+1]
		}
	}
	return ""
}

// cpuModel names this CPU as /proc/cpuinfo does ("model name" on x86, "Model" or "CPU part"
// elsewhere), with the architecture in front.
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
