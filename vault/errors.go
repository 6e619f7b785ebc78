package vault

import (
	"github.com/vaultui/vaultui/vault/format"
	"github.com/vaultui/vaultui/vault/layout"
)

// Sentinel errors about a vault, tested with errors.Is. An error wraps at most
// one of them (a KDF that needs more memory than there is also wraps
// crypto.ErrKDFMemory, the reason) and names the vault or file it is about.
// They are package vault/format's, which every format package wraps; the
// registry's sentinels are in package registry.
var (
	// ErrWrongPassword: the password (or master key) does not open the vault.
	ErrWrongPassword = format.ErrWrongPassword
	// ErrCorrupt: the vault's files are damaged or not in a format vaultui
	// can read (config, directory IVs, names, file contents).
	// It is the same sentinel as layout.ErrCorrupt.
	ErrCorrupt = layout.ErrCorrupt
	// ErrNotFound: there is no vault (no gocryptfs.conf) where one was
	// expected.
	ErrNotFound = format.ErrNotFound
	// ErrNotEmpty: Create or Export refuses a directory that is not empty.
	ErrNotEmpty = format.ErrNotEmpty
	// ErrUnsupported: a valid gocryptfs vault that vaultui cannot open: one
	// that uses a feature vaultui does not support (FIDO2, another format
	// version, an unknown feature flag; the error names it), or whose scrypt
	// cost needs more memory than this machine has.
	ErrUnsupported = format.ErrUnsupported
	// ErrKeyUnverifiable: the vault holds too little encrypted data (no file content, too
	// few names) to tell a right master key from a wrong one. Resealing the key file with a
	// wrong key would lock the vault for good, so callers ask the user before going on
	// (Folder.UnlockWithKey's unverified).
	ErrKeyUnverifiable = format.ErrKeyUnverifiable
)
