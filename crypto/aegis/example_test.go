package aegis_test

import (
	"bytes"
	"crypto/rand"
	"fmt"

	"github.com/vaultui/vaultui/crypto/aegis"
)

func ExampleNew256X2() {
	key := make([]byte, aegis.KeySize256)
	rand.Read(key)
	a, err := aegis.New256X2(key, aegis.TagSize16)
	if err != nil {
		panic(err)
	}
	defer aegis.Wipe(a)

	nonce := make([]byte, a.NonceSize()) // 32 bytes: random nonces are safe
	rand.Read(nonce)
	ad := []byte("file ID and block number")
	sealed := a.Seal(nil, nonce, []byte("hello, vault"), ad)

	plain, err := a.Open(nil, nonce, sealed, ad)
	fmt.Printf("%s %v\n", plain, err)

	sealed[0] ^= 1
	_, err = a.Open(nil, nonce, sealed, ad)
	fmt.Println(err)
	// Output:
	// hello, vault <nil>
	// aegis: message authentication failed
}

func ExampleBatcher() {
	key := make([]byte, aegis.KeySize256)
	rand.Read(key)
	a, err := aegis.New256X2(key, aegis.TagSize16)
	if err != nil {
		panic(err)
	}
	b := a.(aegis.Batcher)

	// Four 4 KiB blocks, sealed in place in one call.
	const n = 4
	blocks, nonces, ads := make([][]byte, n), make([][]byte, n), make([][]byte, n)
	for i := range n {
		blocks[i] = make([]byte, 4096, 4096+a.Overhead())
		nonces[i] = make([]byte, a.NonceSize())
		rand.Read(nonces[i])
		ads[i] = []byte{byte(i)}
	}
	b.SealBatch(blocks, nonces, blocks, ads)
	for i := range n {
		blocks[i] = blocks[i][:4096+a.Overhead()]
	}

	// Open them into fresh buffers; corrupt block 2 first.
	blocks[2][100] ^= 1
	outs := make([][]byte, n)
	for i := range n {
		outs[i] = make([]byte, 0, 4096)
	}
	bad, err := b.OpenBatch(outs, nonces, blocks, ads)
	fmt.Println(bad, err, bytes.Equal(outs[0][:4096], make([]byte, 4096)))
	// Output:
	// 2 aegis: message authentication failed true
}
