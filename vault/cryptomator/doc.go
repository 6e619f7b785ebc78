// Package cryptomator reads and writes Cryptomator vaults of vault format 8 (issue 23): the
// configuration, the master keys, file contents and the cipher tree, offline. It is written
// from Cryptomator's public specification (docs.cryptomator.org, "Security Architecture" and
// "Vault Cryptography"), with cryptolib and cryptofs, Cryptomator's own libraries, read as the
// reference for facts the specification leaves open; no code is taken from them. It imports
// crypto (AES key wrap, AES-SIV, scrypt, the HMAC JWT check) and vault/layout (ErrCorrupt).
//
// # The format
//
// A vault is a folder holding
//
//	vault.cryptomator       a JWT (HS256/384/512) signed with the raw master key: "kid" names
//	                        the key ("masterkeyfile:masterkey.cryptomator"), the claims give
//	                        format 8, shorteningThreshold (220), jti (a UUID) and cipherCombo
//	masterkey.cryptomator   JSON: scrypt salt, cost N and block size r; the encryption and MAC
//	                        master keys, each AES-key-wrapped (RFC 3394) under the scrypt
//	                        output; versionMac, HMAC-SHA256 of the version under the MAC key
//	d/XX/YYYY...            one folder per directory, flat: base32(SHA-1(AES-SIV(dirID))),
//	                        2 + 30 characters; the root's ID is ""
//
// A directory's folder holds one entry per child, named base64url(AES-SIV(NFC(name), parent
// ID)) + ".c9r": a file is a regular file; a directory a folder with dir.c9r (its ID, a UUID,
// in plain text); a symlink a folder with symlink.c9r (its target, encrypted like a file).
// An encrypted name longer than the threshold is stored as base64url(SHA-1(name)) + ".c9s",
// a folder with name.c9s (the full encrypted name) and contents.c9r, dir.c9r or symlink.c9r.
// Each directory's folder also holds dirid.c9r, its own ID encrypted like a file: a backup
// for recovery, which the specification calls optional (rclone does not write the root's).
//
// File contents (SIV_GCM): a 68-byte header, a 12-byte nonce and the AES-GCM-sealed payload
// (8 reserved bytes 0xFF, the file's 32-byte content key) under the encryption master key;
// then chunks of 32 KiB cleartext, each a 12-byte nonce, the AES-GCM ciphertext under the
// content key and its tag, with the chunk number (64-bit big-endian) then the header nonce as
// associated data. SIV_CTRMAC, kept by vaults migrated from format 7: an 88-byte header (nonce,
// AES-CTR payload, HMAC-SHA256 under the MAC key) and chunks of nonce, AES-CTR ciphertext and
// HMAC-SHA256(header nonce, chunk number, chunk nonce, ciphertext). [Geometry] holds the
// numbers.
//
// # What is checked, and what the format cannot check
//
// Nothing is used before it authenticates: the kid is only read to find the key (and must
// name a file in the vault's folder); the claims are released only by a matching signature;
// a chunk's plaintext is released only after its tag or MAC matched, so a reader gets the
// chunks before a bad one and none of it. Every read of the cipher tree is bounded and refuses
// symlinks and special files. scrypt parameters are bounded as for gocryptfs configs (N 2^10
// to 2^28, r = 8, p = 1; salts from 8 bytes, Cryptomator's length) and checked against the
// memory available before scrypt runs.
//
// The format binds a name to its directory and a chunk to its file's header and position,
// but not a file's content to its name: a whole file swapped for another of the same vault,
// or a file cut off at a chunk boundary, still authenticates. That is Cryptomator's design;
// no reader can detect it.
//
// Not implemented: Cryptomator Hub (kid "hub+..."), formats before 8 (Cryptomator migrates
// them), the recovery key (a word list defined in Cryptomator's code, not its specification:
// the raw 64-byte master key, [MasterkeyFromRaw], is the recovery path instead).
//
// # One file system over two formats (issue 23)
//
// The mount and the offline walker are each written once for both formats, with what a
// format decides behind an interface:
//
//   - The walker (package vault: fsck, export, conflicts) reads a vault through
//     vault/format.Volume: its Geometry, a file's key from its header, a directory listed with
//     the problems met, the parent-directory lookup, symlink targets. [Vault.Volume]
//     implements it here, through the vault's os.Root.
//   - The mount (mountmgr/vfs) works through descriptors it holds (every operation runs
//     relative to a directory descriptor, and a node stands for one cipher file for its whole
//     life), so its interfaces are its own: vfs's tree (what a directory's names are encrypted
//     under, what a name is stored as, where an entry's object is, and how entries are made,
//     removed and renamed crash-safely) and contentFormat (header, geometry, holes). Its
//     Cryptomator implementation is built on this package's Names, Content and the rules of
//     an entry's folder (entries.go: what a folder entry holds and is, and how entries are
//     built, placed, moved and taken away), which Vault's reader, writer and settling use
//     too: each rule of the cipher tree is written once.
//
// The geometry (format.Geometry) is a property of the format: HeaderLen 18 / 68 / 88,
// BlockSize 4096 / 32768, BlockOverhead per cipher (32 for gocryptfs GCM, 28 for SIV_GCM, 48
// for SIV_CTRMAC); an empty Cryptomator file has a header, and no Cryptomator block is a hole
// (a write past the end seals zeros), where gocryptfs keeps holes sparse.
//
// The parent-directory lookup: a directory's key is, for gocryptfs, the IV in its folder,
// and for Cryptomator its ID, read once from dir.c9r; its folder d/XX/YYYY is then opened
// from the vault's root by the ID alone, however deep it is, and stays the same when the
// directory or an ancestor is renamed (a rename moves only the small entry holding
// dir.c9r), so neither the mount's descriptor cache nor its identity of the directory (the
// d/ folder's inode) has to change. A file's identity is its content file (the .c9r, or
// contents.c9r in a .c9s folder), a symlink's its symlink.c9r.
//
// Crash safety, as issue 24 asks of gocryptfs vaults: a new entry is built under a temporary
// name (TempName, which readers skip) and renamed into place; Mkdir makes the d/ folder and
// its dirid.c9r before the entry; Rmdir and Unlink of a folder entry rename it away first and
// empty it after, and Rmdir removes the d/ folder last, so a crash leaves an unreferenced
// folder at worst, never an entry whose directory or payload is missing. A rename between
// plain .c9r names is one rename(2) (atomic when a file replaces a file); one involving a
// .c9s name moves the entry's payload into a destination built beforehand. Settling a sync
// tool's conflict copy offline (settle.go) takes the same steps.
package cryptomator
