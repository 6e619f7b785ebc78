// Package crypto holds the cryptography every part of vaultui shares: the
// content ciphers, file content encryption in 4 KiB blocks, file name
// encryption, and key derivation, all in the gocryptfs v2 on-disk format.
//
// # Content
//
// A non-empty file is an 18-byte header (version 2 and a random 16-byte file
// ID) followed by blocks of up to [BlockSize] plaintext bytes. Every block is
// sealed with a fresh random nonce by one of four AEADs ([AESGCM],
// [XChaCha], [AESSIV], [AEGIS]); its associated data is the big-endian block
// number followed by the file ID, so blocks cannot be moved within or between
// files. A full-size block of zero bytes is a file hole and reads as zeros.
// [ContentEnc] encrypts and decrypts runs of blocks without per-block
// allocations; it is the hot path of the mounted file system.
//
// # Names
//
// [NameTransform] encrypts each path component with EME under a
// per-directory IV, after PKCS#7-style padding to 16 bytes, and encodes it
// with base64url. Encoded names longer than the long-name limit are stored
// as gocryptfs.longname.<hash> with the full name in a sibling .name file.
//
// # Keys
//
// The 32-byte master key is sealed in gocryptfs.conf under a key derived
// from the password with scrypt ([ScryptKDF], [SealMasterKey]). Content and
// name keys are derived from the master key with HKDF-SHA256 ([HKDF]).
//
// # Compatibility
//
// Everything here follows gocryptfs (github.com/rfjakob/gocryptfs) so that
// vaults open in both; AEGIS-256X2 follows gocryptfs's AEGIS work but keys
// the cipher with the HKDF-derived key (see docs/FORMAT.md).
//
// It imports only crypto/aegis and internal/sysmem (the memory check before scrypt) of
// vaultui; every package that reads or writes a vault imports it.
package crypto
