// Package vault reads and writes vaults in the gocryptfs v2 on-disk format
// (plus AEGIS-256X2): the config file gocryptfs.conf, creating, unlocking and
// re-keying vaults, and an offline reader that walks, checks (Fsck) and
// exports a whole vault without FUSE. The rules of the cipherdir layout that
// the mount shares live in package vault/layout; the user's list of vaults is
// package registry.
//
// # Compatibility
//
// Vaults made by gocryptfs open here, and vaults made here open in gocryptfs:
// Create writes exactly what gocryptfs -init writes for the same options,
// and nothing else ever goes into a cipherdir. See crypto for the formats.
//
// # Errors
//
// Errors about a vault wrap one of ErrWrongPassword, ErrCorrupt, ErrNotFound,
// ErrNotEmpty, ErrUnsupported or ErrKeyUnverifiable (test with errors.Is).
// They name the vault or file once and carry no package prefix: the caller
// adds only what it knows beyond that.
//
// # Safety
//
// gocryptfs.conf is only ever replaced atomically (temporary file, fsync,
// rename, directory fsync: internal/atomicfile), so a crash during Create or
// ChangePassword leaves the old file or the new one, never neither.
//
// # Two formats, one walker
//
// The offline walker (Walk, Fsck, Export, conflict listing) reads a vault through
// format.Volume (package vault/format): the gocryptfs rules here implement it (volume.go),
// and so does package vault/cryptomator. UnlockVolume tells the two apart by the folder
// (IsCryptomator) and opens either; ReadInfo describes either. What goes through
// gocryptfs.conf (Unlock, passwd, create, convert, settling conflicts) is gocryptfs's alone,
// and for a Cryptomator vault says it is not supported yet (ErrCryptomatorNotYet).
//
// It imports crypto, vault/layout, vault/format, vault/cryptomator and internal/atomicfile;
// registry, app, the front ends, mountmgr and mountbench import it. It knows nothing of the
// list of vaults (registry) or of mounts.
package vault
