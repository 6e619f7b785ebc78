package crypto

import (
	"errors"
	"fmt"
)

// errPadding is wrapped for a decrypted name whose padding is malformed.
var errPadding = errors.New("bad padding")

// pad16 pads b PKCS#7-style to a multiple of 16 bytes: 1 to 16 bytes, each
// holding the padding length, so an exact multiple gains a full block.
func pad16(b []byte) []byte {
	p := 16 - len(b)%16
	out := make([]byte, len(b)+p)
	copy(out, b)
	for i := len(b); i < len(out); i++ {
		out[i] = byte(p)
	}
	return out
}

// unpad16 removes pad16's padding, checking every padding byte.
func unpad16(b []byte) ([]byte, error) {
	if len(b) == 0 || len(b)%16 != 0 {
		return nil, fmt.Errorf("%w: length %d is not a positive multiple of 16", errPadding, len(b))
	}
	p := int(b[len(b)-1])
	if p < 1 || p > 16 {
		return nil, fmt.Errorf("%w: padding length %d", errPadding, p)
	}
	for _, c := range b[len(b)-p:] {
		if int(c) != p {
			return nil, fmt.Errorf("%w: inconsistent padding bytes", errPadding)
		}
	}
	return b[:len(b)-p], nil
}
