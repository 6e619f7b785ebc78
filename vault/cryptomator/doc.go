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
// # One file system over two formats (the design of issue 23)
//
// The mount (mountmgr/vfs) and the offline walker (vault: fsck, export, conflicts) are
// written today for gocryptfs alone: the block size is a constant (crypto.BlockSize, vfs's
// bs, the walker's HeaderLen), and a directory's cipher folder is found by walking the inode
// tree from the root and opening each encrypted name under its parent's IV (vfs's parentFd).
// Cryptomator breaks both assumptions: its geometry is different, and a directory's folder is
// found from its ID, not its path. Issue 23 puts both behind one interface that each format
// implements, so the FUSE nodes and the walker stay written once. After issue 21 has moved the
// packages, the interface lives in a package of its own (vault/format, say), imported by vfs
// and the walker, implemented by a gocryptfs package (today's crypto and vault/layout rules)
// and by this one:
//
//	type Volume interface {
//		Geometry() Geometry                        // header, block size, block overhead, holes
//		OpenHeader(b []byte) (FileCipher, error)   // a file's key from its header
//		NewHeader() (FileCipher, []byte, error)
//		Root() (Dir, error)
//		OpenDir(parent Dir, n Node) (Dir, error)   // the parent-directory lookup
//		Lookup(d Dir, name string) (Node, error)
//		ReadDir(d Dir) ([]Node, []Problem, error)
//		Create, Mkdir, Symlink, Readlink, Unlink, Rmdir, Rename(...)
//	}
//	type FileCipher interface {                    // one file's key, bound to its header
//		SealBlocks(dst, plain []byte, first uint64) []byte
//		OpenBlocks(dst, cipher []byte, first uint64) ([]byte, error)  // *crypto.BlockError
//	}
//
// Geometry: [Geometry] here is the shape of the shared type: HeaderLen 18 / 68 / 88,
// BlockSize 4096 / 32768, BlockOverhead per cipher (32 for gocryptfs GCM, 28 for SIV_GCM, 48
// for SIV_CTRMAC); two flags are still to add when it moves: whether an empty file has a
// header (Cryptomator: yes, and a 0-byte file reads as empty; gocryptfs: no) and whether an
// all-zero block is a hole (gocryptfs: yes; Cryptomator: no, so a write past the end seals
// zeros). vfs's read-modify-write, size and offset arithmetic then take the geometry from
// the volume instead of constants, and its per-inode lock and batching stay as they are.
//
// The parent-directory lookup: a Dir is the format's handle of an open directory, a
// descriptor of its cipher folder plus what its names need: for gocryptfs the folder's IV;
// for Cryptomator its ID (the folder is d/XX/YYYY, opened from the vault's root descriptor).
// vfs keeps a Dir per directory node, as it keeps a descriptor today, and asks the format for
// a child's Dir (OpenDir) instead of opening the encrypted name itself. For gocryptfs that is
// today's walk; for Cryptomator it reads dir.c9r once, and the handle stays valid when the
// directory or an ancestor is renamed (a rename moves only the small .c9r folder holding
// dir.c9r; the d/ folder stays), so the descriptor cache never has to re-resolve it.
//
// A Node is the format's view of one entry: its stored name in its parent's folder and where
// its content is (gocryptfs: the entry itself; Cryptomator: the .c9r file, or contents.c9r in
// a .c9s folder, or symlink.c9r for a symlink). vfs's identity rule, one cipher file for a
// node's life, takes that content file; a Cryptomator directory's identity is its d/ folder,
// which renames do not touch. Readlink is the format's (gocryptfs: a symlink's encrypted
// target; Cryptomator: a file to decrypt). Mkdir, Rmdir and Rename keep issue 24's rule, old
// or new after a crash at any call: Mkdir makes the d/ folder and its dirid.c9r before the
// entry appears by one rename (Vault.Mkdir here does exactly that); Rmdir removes the entry
// first and the d/ folder after, so a crash leaves an unreferenced folder, never an entry
// whose directory is missing.
//
// The walker iterates the same Volume: ReadDir's problems carry the walker's kinds (a name
// that does not decrypt, a .c9s whose name.c9s does not hash to it, like a gocryptfs
// long-name .name file; a missing or foreign dirid.c9r, like a damaged gocryptfs.diriv; a
// header or chunk that does not authenticate, with its chunk number), and each format tells
// sync-conflict copies apart by its own naming (for Cryptomator, a sync tool's copy of a
// .c9r entry and Cryptomator's own "name (1).c9r" renames). The offline half is done:
// package vault/format holds the interface as the walker needs it (Geometry, OpenHeader,
// Root, ReadDir with problems, OpenDir, Readlink), [Vault.Volume] implements it here, and
// package vault's one walker checks, exports and lists the conflicts of both formats. The
// mount's half (Lookup, Create, Rename, ... and vfs's geometry) joins it with mountmgr/vfs.
package cryptomator
