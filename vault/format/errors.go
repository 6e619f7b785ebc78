package format

import "errors"

// The sentinels every format's errors wrap, so that package vault's (which are these) test
// alike whichever format package made the error. Package vault documents them; its
// ErrCorrupt is layout.ErrCorrupt.
var (
	ErrWrongPassword   = errors.New("wrong password")
	ErrNotFound        = errors.New("no vault found")
	ErrNotEmpty        = errors.New("directory is not empty")
	ErrUnsupported     = errors.New("unsupported vault feature")
	ErrKeyUnverifiable = errors.New("the master key cannot be verified")
)
