//go:build purego

package crypto

// puregoBuild is true when the purego tag forces portable code. Under it,
// golang.org/x/crypto's portable XChaCha20-Poly1305 allocates its ChaCha20
// state on every Seal/Open, which our code cannot avoid.
const puregoBuild = true
