// Package vault reads and writes vaults in the gocryptfs v2 on-disk format
// (plus AEGIS-256X2): the config file gocryptfs.conf, creating, unlocking and
// re-keying vaults, and an offline reader that walks, checks (Fsck) and
// exports a whole vault without FUSE. It also keeps the user's registry of
// vaults (vaults.json: names, cipherdirs, mount points) and the create flow
// that makes a vault, its mount point and its entry together
// (CreateRegistered). The rules of the cipherdir layout that the mount shares
// live in package vault/layout.
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
// ErrNotEmpty, ErrUnsupported or ErrKeyUnverifiable; errors about the
// registry one of ErrRegistryCorrupt, ErrRegistryChanged, ErrDuplicate or
// ErrInvalidName (test with errors.Is). They name the vault or file once and
// carry no package prefix: the caller adds only what it knows beyond that.
//
// # Safety
//
// gocryptfs.conf and the registry are only ever replaced atomically
// (temporary file, fsync, rename, directory fsync: internal/atomicfile), so a crash
// during Create, ChangePassword or a registry change leaves the old file or
// the new one, never neither.
package vault
