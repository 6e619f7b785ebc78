// Command vaultui manages gocryptfs-compatible encrypted vaults: with no
// arguments it opens the terminal app, otherwise it runs a subcommand
// ("vaultui help" lists them).
package main

import (
	"fmt"
	"os"

	"github.com/vaultui/vaultui/ui/cli"
)

func main() {
	if len(os.Args) > 1 {
		os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	// The terminal app (package ui) has not landed yet; point at the commands.
	fmt.Fprintln(os.Stderr, `vaultui: the terminal app is not built yet; run "vaultui help" for the commands`)
	os.Exit(2)
}
