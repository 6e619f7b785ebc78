package cli

import (
	"fmt"
	"io"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/internal/termsafe"
	"github.com/vaultui/vaultui/registry"
	"github.com/vaultui/vaultui/vault"
)

// infoJSON is "info --json": the vault's config description plus its
// registry entry, when it has one.
type infoJSON struct {
	Name       string `json:"name,omitempty"`
	MountPoint string `json:"mountpoint,omitempty"`
	vault.Info
	OpensIn []string `json:"opens_in"` // programs that open the vault (app.OpensIn)
}

// printInfo prints the vault's facts; keyring, when not "", says whether its password is in
// the desktop keyring.
func printInfo(w io.Writer, e registry.Entry, i vault.Info, keyring string) {
	tw := newTable(w)
	// Values come from the config, which whoever can write the cipherdir controls.
	row := func(label, value string) { fmt.Fprintf(tw, "%s:\t%s\n", label, termsafe.Escape(value)) }
	if e.Name != "" {
		row("Name", e.Name)
	}
	row("Cipherdir", i.Dir)
	if e.MountPoint != "" {
		row("Mount point", e.MountPoint)
	}
	for _, f := range append(app.EntryFacts(e), app.Describe(i)...) {
		fmt.Fprintf(tw, "%s:\t%s\n", f.Label, f.Value)
	}
	if keyring != "" {
		row("Keyring", keyring)
	}
	tw.Flush()
}
