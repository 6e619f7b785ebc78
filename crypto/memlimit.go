package crypto

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrKDFMemory is wrapped by DeriveKey and CheckScryptMemory when legal scrypt
// parameters need more memory than the machine can give this process now.
var ErrKDFMemory = errors.New("not enough memory for the key derivation")

// kdfMemoryReserve is memory left to everything else when scrypt runs.
const kdfMemoryReserve = 64 << 20

// kdfMemoryUnknownCap bounds scrypt when the available memory cannot be read
// (no /proc): 1 GiB, sixteen times gocryptfs's default of 64 MiB.
const kdfMemoryUnknownCap = 1 << 30

// availableMemory returns the bytes this process can still allocate and where
// that figure comes from; tests replace it.
var availableMemory = readAvailableMemory

// CheckScryptMemory refuses parameters whose memory need (MemoryNeed) does
// not fit in the available memory: MemAvailable of /proc/meminfo, and the
// room left under the memory limit of the process's cgroup (v2 memory.max,
// v1 memory.limit_in_bytes), less a reserve of 64 MiB. The error wraps
// ErrKDFMemory and names the need and what is available.
func CheckScryptMemory(s ScryptKDF) error {
	need := s.MemoryNeed()
	avail, source, err := availableMemory()
	if err != nil {
		avail, source = kdfMemoryUnknownCap, fmt.Sprintf("the fixed cap when free memory cannot be read (%v)", err)
	} else if avail > kdfMemoryReserve {
		avail -= kdfMemoryReserve
	} else {
		avail = 0
	}
	if need > avail {
		return fmt.Errorf("%w: scrypt with N=2^%d, R=%d needs %s of memory, only %s is available (%s)",
			ErrKDFMemory, s.LogN(), s.R, FormatBytes(need), FormatBytes(avail), source)
	}
	return nil
}

// FormatBytes formats n as "256 GiB", "1.5 MiB".
func FormatBytes(n uint64) string {
	units := []string{"bytes", "KiB", "MiB", "GiB", "TiB"}
	f, i := float64(n), 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d bytes", n)
	}
	return strings.TrimSuffix(fmt.Sprintf("%.1f", f), ".0") + " " + units[i]
}

func readAvailableMemory() (uint64, string, error) {
	avail, err := memAvailable()
	if err != nil {
		return 0, "", err
	}
	source := "MemAvailable in /proc/meminfo"
	if room, where, ok := cgroupRoom(); ok && room < avail {
		avail, source = room, "the memory limit of cgroup "+where
	}
	return avail, source, nil
}

func memAvailable() (uint64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/meminfo: MemAvailable: %w", err)
		}
		return kb * 1024, nil
	}
	return 0, errors.New("/proc/meminfo has no MemAvailable")
}

// cgroupRoom returns the least room (limit minus usage) among the memory
// cgroups of this process and their ancestors, and which one it is.
func cgroupRoom() (room uint64, where string, ok bool) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0, "", false
	}
	return cgroupRoomAt(data, "/sys/fs/cgroup")
}

// cgroupRoomAt is cgroupRoom for the /proc/self/cgroup content data and the cgroup file
// systems mounted under sysRoot.
func cgroupRoomAt(data []byte, sysRoot string) (room uint64, where string, ok bool) {
	consider := func(dir, limitFile, usageFile string) {
		limit, err1 := readUintFile(filepath.Join(dir, limitFile))
		usage, err2 := readUintFile(filepath.Join(dir, usageFile))
		if err1 != nil || err2 != nil || limit >= 1<<62 {
			return
		}
		r := uint64(0)
		if limit > usage {
			r = limit - usage
		}
		if !ok || r < room {
			room, where, ok = r, filepath.Join(dir, limitFile), true
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var root, limitFile, usageFile string
		switch {
		case parts[0] == "0" && parts[1] == "":
			root, limitFile, usageFile = sysRoot, "memory.max", "memory.current"
		case strings.Contains(","+parts[1]+",", ",memory,"):
			root, limitFile, usageFile = filepath.Join(sysRoot, "memory"), "memory.limit_in_bytes", "memory.usage_in_bytes"
		default:
			continue
		}
		// The cgroup and each ancestor up to the root of the hierarchy (in a container
		// the path may not exist below the mounted root: then the root is what applies).
		for p := filepath.Clean("/" + parts[2]); ; p = filepath.Dir(p) {
			consider(filepath.Join(root, p), limitFile, usageFile)
			if p == "/" {
				break
			}
		}
	}
	return room, where, ok
}

func readUintFile(p string) (uint64, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return 1 << 63, nil
	}
	return strconv.ParseUint(s, 10, 64)
}
