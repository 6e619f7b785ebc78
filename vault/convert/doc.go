// Package convert converts a vault to another content cipher or another format (vaultui
// convert): gocryptfs to Cryptomator and back, AEGIS to AES-GCM, Cryptomator's SIV_CTRMAC to
// SIV_GCM. It is written against package vault's format-neutral model alone (issue 37): a
// Folder, its Format's row of the table and capabilities, and unlocked Volumes, read by the
// one walker and written through a format.Builder. It never asks which format a vault is.
//
// # Two ways to build the new vault
//
// Within a format that can reseal its files (Capabilities.Reseal: gocryptfs), the format
// writes the new vault itself (vault.Folder.Reseal): only the content cipher changes, the
// names stay byte for byte and the master key and password stay. Otherwise (into another
// format, or Cryptomator's SIV_CTRMAC to SIV_GCM) the vault is rebuilt through its plaintext:
// read through its Volume, written through the new vault's Builder (vault.Format.CreateFor,
// then Volume.Builder). What the new format cannot hold is found from the table's
// capabilities before anything is written: refused with an *UnsupportedError listing it, or
// with Options.DropUnsupported left in the old vault.
//
// Either way the old vault is read once before anything is written (damage stops the
// conversion: run fsck), and what the new vault must hold is noted; the new vault is then
// read back completely through its own Volume (every name, block, symlink target and
// attribute authenticated) and compared with that.
//
// # Crash safety
//
// The old vault is only read until the swap. Beside it, in WORK = CIPHERDIR.vaultui-convert,
// a state file records the conversion (its two sides and where the old vault goes) before
// WORK/new, the new vault, is built; the new vault is checked and synced (syncfs), then
// swapped in with one renameat2(RENAME_EXCHANGE), after which WORK/new holds the old vault
// and is renamed to its keeping place. A file system without RENAME_EXCHANGE gets two
// renames (old away, new in). The two sides differ in their format or content encryption,
// which the folders tell without a key (vault.Folder.Variant), so a later run can tell from
// the state file which side of the swap a crash left, and either removes the half-built tree
// (the old vault was never touched) or finishes the swap. Nothing is written into the old
// vault at any point; the kill tests stop a conversion at each system call that matters.
//
// It imports vault, vault/format, crypto (cipher IDs) and internal/atomicfile; app and the
// front ends import it.
package convert
