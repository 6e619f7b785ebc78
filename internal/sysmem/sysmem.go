// Package sysmem tells how much memory this process can still allocate, from /proc/meminfo
// and the cgroup limits above it. The key derivation (crypto.CheckScryptMemory) asks it
// before running scrypt with parameters from a config anyone could have written.
//
// It imports only the standard library; crypto imports it.
package sysmem

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Available returns the bytes this process can still allocate: MemAvailable of
// /proc/meminfo, or less when the memory limit of the process's cgroup (or of an
// ancestor; v2 memory.max, v1 memory.limit_in_bytes) leaves less room; and where the
// figure comes from, for messages.
func Available() (bytes uint64, source string, err error) {
	avail, err := memAvailable()
	if err != nil {
		return 0, "", err
	}
	source = "MemAvailable in /proc/meminfo"
	if room, where, ok := cgroupRoom(); ok && room < avail {
		avail, source = room, "the memory limit of cgroup "+where
	}
	return avail, source, nil
}

// memAvailable reads MemAvailable from /proc/meminfo.
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
		r := limit - min(usage, limit) // usage may pass the limit a little
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

// readUintFile reads a cgroup file holding a number or "max".
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
