// Package vault is vaultui's one model of a vault, whatever its format (see One vault
// model below): creating, unlocking and re-keying vaults, and an offline reader that walks,
// checks (FsckVolume) and exports (ExportVolume) a whole vault without FUSE. Each format's
// on-disk rules live in a package of its own, vault/gocryptfs and vault/cryptomator; the
// rules of the cipherdir layout that the mount shares live in package vault/layout; the
// user's list of vaults is package registry.
//
// # Errors
//
// Errors about a vault wrap one of ErrWrongPassword, ErrCorrupt, ErrNotFound,
// ErrNotEmpty, ErrUnsupported or ErrKeyUnverifiable (test with errors.Is), whichever format
// package made them: they are package vault/format's.
// They name the vault or file once and carry no package prefix: the caller
// adds only what it knows beyond that.
//
// # Safety
//
// A key file (gocryptfs.conf, Cryptomator's masterkey file) is only ever replaced
// atomically (temporary file, fsync, rename, directory fsync: internal/atomicfile), so a
// crash during Create or ChangePassword leaves the old file or the new one, never neither.
//
// # One vault model
//
// vaultui opens three kinds of folder: gocryptfs vaults, plaintext folders prepared for a
// gocryptfs reverse view, and Cryptomator vaults of format 8. Formats is the one table of
// them: names, marker and key files, the ranges and defaults of their options, who opens
// them, and what each can hold and do (Capabilities). Identify tells a folder's kind once, for
// every entry point, and names what vaultui knows but cannot open (Cryptomator 7 or 9, Hub,
// FIDO2 gocryptfs vaults). Open gives a Folder (info, unlock, passwd, create through
// CreateOptions.Format); Folder.Unlock gives a Volume of any format, which the offline walker
// (Walk, Fsck, Export: package vault/format), path mapping, the conflicts listing and settling,
// and the mount (mountmgr/vfs.VolumeOf) take. Each format's code is behind an unexported
// folderKind, in a package of its own that this one adapts: gocryptfs's in vault/gocryptfs
// (kind_gocryptfs.go, gcsettle.go), Cryptomator's in vault/cryptomator
// (kind_cryptomator.go, cmsettle.go). Code outside the format packages asks a Format's
// capabilities, never which format it is (seam_test.go at the module's root fails on a
// branch). Package vault/convert, which moves a vault between ciphers and formats, is written
// against this model alone: beyond opening, unlocking and walking a vault it asks a format
// for Folder.Variant, Format.TargetVariant, Format.CreateFor and Volume.Builder, and where the
// format reseals its files (Capabilities.Reseal: gocryptfs) for Folder.PlanReseal and
// Folder.Reseal.
//
// It imports crypto, vault/layout, vault/format, vault/gocryptfs, vault/cryptomator and
// internal/atomicfile; registry, app, the front ends, vault/convert, mountmgr, mountmgr/vfs
// and mountbench import it. It knows nothing of the list of vaults (registry) or of mounts.
package vault
