// Package gocryptfs reads and writes gocryptfs vaults of on-disk format version 2 (plus
// AEGIS-256X2), offline: the config file gocryptfs.conf (Config), creating (Create),
// unlocking (Unlock; UnlockWithMasterKey tries a master key on the vault's files first),
// resealing the master key (Config.Reseal) and the whole vault under another content cipher
// (Reseal), the reverse-mode config of a plaintext folder
// (ReverseConfName, CreateReverse, UnlockReverse), and the unlocked Vault as the offline
// walker reads it (Volume), writes it (Builder) and settles sync tools' conflicts in it. It is
// the gocryptfs half of package vault's one vault model, as vault/cryptomator is
// Cryptomator's: package vault adapts it (kind_gocryptfs.go, gcsettle.go).
//
// Vaults made by gocryptfs open here, and vaults made here open in gocryptfs: Create writes
// exactly what gocryptfs -init writes for the same options, and nothing else ever goes into
// a cipherdir. gocryptfs.conf is only ever replaced atomically (internal/atomicfile). Errors
// wrap the sentinels of package vault/format, which are package vault's.
//
// It imports crypto, vault/layout, vault/format and internal/atomicfile, and nothing of
// vault; package vault, the reverse mount (mountmgr, mountmgr/vfs) and mountmgr/vfs's
// gocryptfs code import it.
package gocryptfs
