// Command vaultui manages encrypted vaults in the gocryptfs and Cryptomator formats: with no
// arguments it opens the terminal app, otherwise it runs a subcommand
// ("vaultui help" lists them).
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/vaultui/vaultui/cli"
	"github.com/vaultui/vaultui/ui"
)

func main() {
	if filepath.Base(os.Args[0]) == cli.MountHelperName {
		// mount(8)'s helper for the fstab type vaultui: "mount.vaultui SRC MNT -o OPTS".
		os.Exit(cli.Main(cli.MountHelperArgs(os.Args[1:]), os.Stdin, os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 {
		os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	if err := ui.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}
