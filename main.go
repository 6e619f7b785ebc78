// Command vaultui manages gocryptfs-compatible encrypted vaults: with no
// arguments it opens the terminal app, otherwise it runs a subcommand
// ("vaultui help" lists them).
package main

import (
	"fmt"
	"os"

	"github.com/vaultui/vaultui/ui"
	"github.com/vaultui/vaultui/ui/cli"
)

func main() {
	if len(os.Args) > 1 {
		os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	if err := ui.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}
