package crypto

import "runtime"

// Wipe overwrites b with zeros. It is best effort: the Go runtime may have
// copied the bytes elsewhere (stack growth, garbage collection), so it limits
// how long key material stays in memory but cannot guarantee that it is gone.
func Wipe(b []byte) {
	clear(b)
	runtime.KeepAlive(b)
}
