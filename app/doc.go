// Package app holds what vaultui does for its user, each use case written once under both
// front ends (the TUI in ui, the CLI in cli).
//
// The front ends present: they read flags or keys, ask for a password when told to, and
// show what happened. Every rule about what to do lives here, once: where a mount's
// password comes from, when the keyring's entry is replaced, how a vault is unlocked for a
// check, and whether a conflict is settled in the cipherdir or through the mount.
//
// # Passwords without a dialogue
//
// A use case that needs a vault's password (Mount, OpenConflicts, OpenWalker) is stateless, so a
// blocking command line and an asynchronous TUI drive it alike. Called without a password it
// tries the desktop keyring's; when there is none, or it no longer works, or the keyring
// cannot be reached, it returns a *PasswordNeededError saying which.
//
// The order of the sources is one policy: a password the user gives (typed, a passfile, or a
// password program named on the command line: RunPasswordProgram) comes first; then the
// vault's own password program when its registry entry names one (gocryptfs's -extpass kept
// with the vault, as SiriKali keeps a key source per vault: a choice the user made for that
// vault, so the keyring is not consulted); then the keyring; then the front end asks. A
// password program that fails or gives a wrong password is a *PasswordNeededError too
// (ProgramFailed), so a front end with a terminal can ask instead. The front end asks the
// user and calls again with the typed password; once that works, a keyring entry for the
// vault that differs is replaced (the stored one was stale: a vault has one password), and
// with Remember a missing one is stored. What became of the keyring is part of the result
// (KeyringChange), for the front end to show.
//
// # Below the core
//
// The daemon (mountmgr) cannot import this package, which uses its client: what both need
// of the keyring (how a vault is looked up there, how its entry is labelled) lives in
// keyring. A mounted vault's key stays in the daemon: its conflicts are listed and
// settled by the daemon, through the mount (see mountmgr.Client.Conflicts), and it is
// checked and exported by the daemon, which walks the cipherdir with that key
// (OpenWalker, mountmgr.Client.Fsck and Export).
//
// # The speed test
//
// Speed measures the content ciphers on this CPU (crypto.Measure is the primitive), repeats
// until the figures are stable, measures what a mount would gain through vaultui's own write
// path on a given file system, remembers the result on disk (keyed by CPU model and vaultui
// build, and by file system for the write), and recommends a cipher with what it costs and
// gains: a line of each (Recommendation.Lines), with how it was measured and how noisy as
// details on request. The TUI's speed screen and wizard, "vaultui speed" and "vaultui init
// --cipher auto" all use it, so one cached test serves every front end, and every ratio
// they print is SpeedReport.Times of it.
//
// # Compatibility
//
// OpensIn says which programs open a vault with a given content cipher; the recommendation,
// the wizard, "info" and "list" all name it from that one table.
//
// It imports registry, vault (vault/gocryptfs for reverse configs), crypto, keyring, mountmgr (its client), mountmgr/extpass,
// mountmgr/vfs (the speed test's write path) and the internal helpers; ui and cli import it,
// nothing below imports it.
package app
