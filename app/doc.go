// Package app holds what vaultui does for its user, each use case written once under both
// front ends (the TUI in ui, the CLI in ui/cli).
//
// The front ends present; the policy lives here. A later refactor moves the other use cases
// (create, mount, passwords, conflicts) into this package; today it holds:
//
// # The speed test
//
// Speed measures the content ciphers on this CPU (crypto.Measure is the primitive), repeats
// until the figures are stable, measures what a mount would gain through vaultui's own write
// path on a given file system, remembers the result on disk (keyed by CPU model and vaultui
// build, and by file system for the write), and recommends a cipher with what it costs and
// gains. The TUI's speed screen and wizard, "vaultui speed" and "vaultui init --cipher auto"
// all use it, so one cached test serves every front end.
//
// # Compatibility
//
// OpensIn says which programs open a vault with a given content cipher; the recommendation,
// the wizard, "info" and "list" all name it from that one table.
package app
