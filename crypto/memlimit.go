package crypto

import (
	"errors"
	"fmt"
	"strings"

	"github.com/vaultui/vaultui/internal/sysmem"
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
// that figure comes from (internal/sysmem reads /proc and the cgroups); tests replace it.
var availableMemory = sysmem.Available

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
