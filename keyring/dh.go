package keyring

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/big"
)

// algorithmDH is the Secret Service's encrypted transfer: a Diffie-Hellman exchange in the
// 1024-bit MODP group of RFC 2409 (the "Second Oakley Group"), HKDF-SHA256 of the shared secret
// (no salt, no info) to a 128-bit key, and AES-128-CBC with PKCS#7 padding for each secret,
// with a fresh IV in the secret's parameters.
const algorithmDH = "dh-ietf1024-sha256-aes128-cbc-pkcs7"

// oakley2 is the RFC 2409 section 6.2 prime; the generator is 2.
var oakley2, _ = new(big.Int).SetString(
	"FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD1"+
		"29024E088A67CC74020BBEA63B139B22514A08798E3404DD"+
		"EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245"+
		"E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"+
		"EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381"+
		"FFFFFFFFFFFFFFFF", 16)

// groupLen is the prime's length in bytes: public keys and the shared secret are written at
// this length, big-endian.
const groupLen = 128

// dhKey is one side of the exchange.
type dhKey struct {
	priv *big.Int
	pub  []byte
}

func newDHKey() (*dhKey, error) {
	// A private exponent from [2, p-2].
	max := new(big.Int).Sub(oakley2, big.NewInt(3))
	x, err := rand.Int(rand.Reader, max)
	if err != nil {
		return nil, err
	}
	x.Add(x, big.NewInt(2))
	pub := new(big.Int).Exp(big.NewInt(2), x, oakley2)
	return &dhKey{priv: x, pub: pub.FillBytes(make([]byte, groupLen))}, nil
}

// sessionKey derives the AES-128 key from the peer's public key.
func (k *dhKey) sessionKey(peer []byte) ([]byte, error) {
	y := new(big.Int).SetBytes(peer)
	// A public key of 0, 1 or p-1 (or out of range) would force a known secret.
	pm1 := new(big.Int).Sub(oakley2, big.NewInt(1))
	if len(peer) > groupLen || y.Cmp(big.NewInt(1)) <= 0 || y.Cmp(pm1) >= 0 {
		return nil, errors.New("keyring: the Secret Service sent an invalid public key")
	}
	z := new(big.Int).Exp(y, k.priv, oakley2)
	shared := z.FillBytes(make([]byte, groupLen))
	clearInt(z)
	key, err := hkdf.Key(sha256.New, shared, nil, "", 16)
	clear(shared)
	return key, err
}

// wipe clears the private exponent once the session key is derived: with it and the public
// keys on the bus, anyone could derive the session key and read every secret of the session.
// Best effort: math/big's and crypto/rand's temporaries (the random bytes rand.Int drew, the
// intermediate powers of Exp) are out of reach.
func (k *dhKey) wipe() {
	if k.priv != nil {
		clearInt(k.priv)
		k.priv = nil
	}
}

// clearInt zeroes x's words in place (Bits aliases them), spare capacity included, and sets
// it to 0.
func clearInt(x *big.Int) {
	w := x.Bits()
	clear(w[:cap(w)])
	x.SetInt64(0)
}

// encryptSecret encrypts a secret for the service: it returns the IV and the ciphertext.
func encryptSecret(key, plain []byte) (iv, ct []byte, err error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, nil, err
	}
	iv = make([]byte, aes.BlockSize)
	if _, err := rand.Read(iv); err != nil {
		return nil, nil, err
	}
	pad := aes.BlockSize - len(plain)%aes.BlockSize
	// Made at its full size at once: no copy of the password is left behind by a reallocation.
	buf := append(make([]byte, 0, len(plain)+pad), plain...)
	buf = append(buf, bytes.Repeat([]byte{byte(pad)}, pad)...)
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(buf, buf)
	return iv, buf, nil
}

// decryptSecret reverses encryptSecret; a bad length or padding is an error, never a panic.
func decryptSecret(key, iv, ct []byte) ([]byte, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	if len(iv) != aes.BlockSize || len(ct) == 0 || len(ct)%aes.BlockSize != 0 {
		return nil, fmt.Errorf("keyring: secret of %d bytes with an IV of %d: not AES-CBC", len(ct), len(iv))
	}
	buf := make([]byte, len(ct))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(buf, ct)
	pad := int(buf[len(buf)-1])
	if pad == 0 || pad > aes.BlockSize || !bytes.Equal(buf[len(buf)-pad:], bytes.Repeat([]byte{byte(pad)}, pad)) {
		clear(buf)
		return nil, errors.New("keyring: secret has bad padding")
	}
	return buf[:len(buf)-pad], nil
}
