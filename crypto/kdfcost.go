package crypto

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"golang.org/x/crypto/scrypt"
)

// ErrKDFCostly is wrapped by CheckScryptCost and DeriveKey when a vault's scrypt parameters
// cost more than the caller allows (see CostBound): a vault whose config was edited, by
// mistake or by someone hostile, to take gigabytes and minutes to unlock.
var ErrKDFCostly = errors.New("key derivation costs more than allowed")

// CostBound is the most a key derivation may cost, in bytes of scrypt's table (Cost:
// 128·N·r), before the user says it may. The zero value is DefaultCostBound.
type CostBound uint64

const (
	// DefaultCostBound is 1 GiB: N=2^20 with gocryptfs's r=8, sixteen times gocryptfs's
	// and Cryptomator's defaults and a few seconds of work. Above it a user asks for the cost
	// (the command line's --allow-costly-kdf, or a cost the registry recorded when the vault
	// was created or added).
	DefaultCostBound CostBound = 1 << 30
	// AnyCost allows every cost the format allows (memory permitting: CheckScryptMemory).
	AnyCost CostBound = math.MaxUint64
)

type costBoundKey struct{}

// WithCostBound returns a context whose key derivations (DeriveKey) may cost up to b: the
// user's say-so travels with the request it was given for (a command's flag, a mount request,
// the cost the registry recorded for the vault), through every layer down to the derivation,
// and a request that carries none gets DefaultCostBound.
func WithCostBound(ctx context.Context, b CostBound) context.Context {
	return context.WithValue(ctx, costBoundKey{}, b)
}

// CostBoundOf is the bound ctx carries (WithCostBound), or DefaultCostBound.
func CostBoundOf(ctx context.Context) CostBound {
	if b, ok := ctx.Value(costBoundKey{}).(CostBound); ok && b != 0 {
		return b
	}
	return DefaultCostBound
}

// Allows reports whether a derivation of cost bytes is within b.
func (b CostBound) Allows(cost uint64) bool {
	if b == 0 {
		b = DefaultCostBound
	}
	return cost <= uint64(b)
}

// Cost is what the parameters cost in the sense of CostBound: the bytes of scrypt's table,
// 128·N·r (MemoryNeed adds its small buffers).
func (s ScryptKDF) Cost() uint64 {
	if s.N <= 0 || s.R <= 0 {
		return 0
	}
	n, r := uint64(s.N), uint64(s.R)
	if n > math.MaxUint64/128/r {
		return math.MaxUint64
	}
	return 128 * n * r
}

// CheckScryptCost refuses parameters that cost more than bound (0: DefaultCostBound), with
// an error wrapping ErrKDFCostly that names the memory and about how long the derivation
// would take on this machine. It is the one rule for both formats (gocryptfs's ScryptObject,
// Cryptomator's scryptCostParam and scryptBlockSize) and for new vaults' costs; DeriveKey
// applies it before it derives anything.
func CheckScryptCost(s ScryptKDF, bound CostBound) error {
	if bound == 0 {
		bound = DefaultCostBound
	}
	if bound.Allows(s.Cost()) {
		return nil
	}
	return fmt.Errorf("%w: scrypt with N=2^%d, R=%d needs %s of memory and about %s on this machine (the bound is %s)",
		ErrKDFCostly, s.LogN(), s.R, FormatBytes(s.Cost()), roundDuration(EstimateScryptTime(s)), FormatBytes(uint64(bound)))
}

// EstimateScryptTime is about how long scrypt takes with s on this machine, extrapolated
// (scrypt's work grows with N·r·p) from a derivation of 16 MiB, which is timed once per
// process (some 30 ms). Tables that do not fit in the caches run somewhat slower than that.
func EstimateScryptTime(s ScryptKDF) time.Duration {
	unit := scryptUnit()
	n := float64(s.N) * float64(max(s.R, 1)) * float64(max(s.P, 1)) / (calibrationN * ScryptR)
	return time.Duration(float64(unit) * n)
}

const calibrationN = 1 << 14

var scryptUnit = sync.OnceValue(func() time.Duration {
	start := time.Now()
	k, _ := scrypt.Key([]byte("calibration"), make([]byte, ScryptSaltLen), calibrationN, ScryptR, 1, 32)
	Wipe(k)
	return time.Since(start)
})

// roundDuration keeps about two significant figures of d: "37s", "2m0s", "1.4s".
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Second:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(10 * time.Millisecond)
}
