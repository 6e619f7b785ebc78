//go:build !(amd64 || arm64) || !gc || purego

package aegis

// asmKey is empty without assembly.
type asmKey struct{}

func (*asmKey) setup(*variant, []byte) {}
func (*asmKey) wipe()                  {}

func (a *aead) implementation() string { return portableName }

// hasAsm reports whether the variant runs on an assembly path.
func hasAsm(*variant) bool { return false }

func (a *aead) seal(out, nonce, plaintext, ad []byte) {
	sealGeneric(a.v, out, a.key[:a.v.keySize()], nonce, plaintext, ad, a.tagSize)
}

func (a *aead) open(out, nonce, ciphertext, ad []byte) bool {
	return openGeneric(a.v, out, a.key[:a.v.keySize()], nonce, ciphertext, ad, a.tagSize)
}

func (a *aead) sealBatch(dsts, nonces, msgs, ads [][]byte) { a.sealBatchLoop(dsts, nonces, msgs, ads) }

func (a *aead) openBatch(dsts, nonces, cts, ads [][]byte) (int, error) {
	return a.openBatchLoop(dsts, nonces, cts, ads)
}
