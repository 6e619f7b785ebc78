package cli

import (
	"github.com/vaultui/vaultui/crypto"
)

// kdfHelperCommand is the key derivation helper: a costly scrypt runs in this hidden command,
// the running binary re-executed, so that it can be killed when the user or the daemon stops
// waiting for it (see crypto's deriveInHelper). It reads the password and parameters on stdin
// and writes the key on stdout, nothing else.
var kdfHelperCommand = &command{
	name:    crypto.KDFHelperArg,
	group:   groupOther,
	summary: "Derive one key for vaultui itself (internal)",
	args:    "(the request on standard input)",
	hidden:  true,
	setup: noFlags(func(e *env, args []string) error {
		return crypto.ServeKDFHelper(e.stdin, e.stdout)
	}),
}
