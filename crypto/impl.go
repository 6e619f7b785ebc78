package crypto

import "github.com/vaultui/vaultui/crypto/aegis"

// Implementation names the code that runs cipher c on this CPU where it varies, and reports
// whether it runs on hardware instructions. It matters for AEGIS, which has kernels for
// VAES, AES-NI and ARMv8 AES and otherwise a constant-time portable path roughly a hundred
// times slower; for the other ciphers it returns "".
func Implementation(c CipherID) (name string, hardware bool) {
	if c != AEGIS {
		return "", true
	}
	a, err := aegis.New256X2(make([]byte, aegis.KeySize256), aegis.TagSize16)
	if err != nil {
		return "", false
	}
	return aegis.Implementation(a), aegis.Accelerated(a)
}
