// Package mountmgr mounts vaults and keeps them mounted.
//
// # Daemon
//
// One daemon per user (`vaultui daemon`, see [Serve]) owns every mount and every unlocked key.
// Clients (the CLI and the TUI) reach it over a unix socket at
// $XDG_RUNTIME_DIR/vaultui/ctl.sock, or, without XDG_RUNTIME_DIR, in a 0700 directory under the
// system temp dir named for the uid. The socket directory is 0700, the socket 0600, and every
// connection's peer uid (SO_PEERCRED) must equal the daemon's.
//
// SIGTERM unmounts every vault. A busy one is detached at once and its open files are served
// until they are closed, at most ServeOptions.ShutdownGrace; no wait for the kernel to release
// a file system is unbounded. With nothing mounted and no client for ServeOptions.IdleExit,
// the daemon exits. Its log file is rotated at ServeOptions.LogMax and holds no names from
// inside a vault: the paths that busy errors name go only to the client that asked.
//
// # Protocol
//
// One JSON object per line. A request carries the protocol version, an id and an op; every
// response repeats the id. An error answer carries its [Kind] as the code, so errors.Is finds
// the same sentinel on the client. A `watch` request is answered with a stream of status snapshots
// about once a second. `fsck` and `export` run the offline walker on a mounted vault's
// cipherdir with the key the daemon holds, on a connection of their own, answered with a
// stream of progress and findings that ends with a reply marked done; the client closing the
// connection, or an unmount, ends the walk. A daemon that does not speak the client's version answers with the
// error code "version"; the client reports it as [ErrDaemon]. Fields added later are optional
// and ignored by older peers, so they keep the version: a status request with "stale_report"
// also gets the report of stale mounts (left by a daemon that died) that this daemon found at
// start, each delivered once ([Client.Stale]).
//
// # Client
//
// [Connect] dials the socket and, when nothing answers, starts the daemon detached (new
// session, output to $XDG_STATE_HOME/vaultui/daemon.log) and waits until it answers. A lock
// file next to the socket makes concurrent clients start one daemon between them.
//
// The file system itself lives in package mountmgr/vfs.
//
// It imports registry, vault, vault/gocryptfs (the reverse config), vault/layout, crypto,
// keyring (automount), mountmgr/vfs, mountmgr/extpass and the internal helpers; app, the
// front ends and mountbench import it (its client and types). It never imports app: the policy both share lives below them.
package mountmgr
