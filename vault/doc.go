// Package vault reads and writes vaults in the gocryptfs v2 on-disk format
// (plus AEGIS-256X2): the config file gocryptfs.conf, creating, unlocking and
// re-keying vaults, and an offline reader that walks, checks (Fsck) and
// exports a whole vault without FUSE.
//
// # Compatibility
//
// Vaults made by gocryptfs open here, and vaults made here open in gocryptfs:
// Create writes exactly what gocryptfs -init writes for the same options,
// and nothing else ever goes into a cipherdir. See crypto for the formats.
//
// # Errors
//
// Errors wrap one of ErrWrongPassword, ErrCorrupt, ErrNotFound, ErrNotEmpty
// or ErrUnsupported (test with errors.Is) and name the vault or file.
//
// # Safety
//
// gocryptfs.conf is only ever replaced atomically (temporary file, fsync,
// rename, directory fsync), so a crash during Create or ChangePassword
// leaves the old config or the new one, never neither.
package vault
