package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"text/tabwriter"

	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/vault"
)

var conflictsCommand = &command{
	name:    "conflicts",
	group:   groupVaults,
	summary: "List sync tools' conflict copies in a vault, or settle one",
	args:    "[--passfile F] [--json] VAULT | --keep both|original|copy VAULT PATH",
	help: `When a file changes on two machines, Dropbox, Nextcloud, ownCloud, Syncthing,
OneDrive or Google Drive keep both versions by renaming one encrypted file.
vaultui shows such a copy beside the original in the mount, with a marker
before its extension ("report (conflict 2026-11-30 Syncthing).odt"). This lists
them: path, the file it copies, tool, date, size and which is newer.

--keep settles the copy at PATH (as listed): "both" gives it a name of its own
(the one it shows under), "original" deletes the copy, "copy" puts it in place
of the original. Nothing else is ever deleted. The vault must not be mounted;
in a mounted vault, rename or delete the copy through the mount instead.

examples:
  vaultui conflicts work
  vaultui conflicts --keep both work "docs/report (conflict 2026-11-30 Syncthing).odt"`,
	setup: func(fs *flag.FlagSet) runFunc {
		passfile := fs.String("passfile", "", "read the password from the first line of `FILE` (- for standard input)")
		asJSON := fs.Bool("json", false, "print JSON")
		keep := fs.String("keep", "", "settle the copy at PATH: `both`, original or copy")
		return func(e *env, args []string) error {
			var how vault.Keep
			switch *keep {
			case "":
				if len(args) != 1 {
					return e.usage("expected one VAULT argument, got %d", len(args))
				}
			case "both", "original", "copy":
				if len(args) != 2 {
					return e.usage("--keep needs VAULT and PATH arguments, got %d argument(s)", len(args))
				}
				how = map[string]vault.Keep{"both": vault.KeepBoth, "original": vault.KeepOriginal, "copy": vault.KeepCopy}[*keep]
			default:
				return e.usage("--keep %q: want both, original or copy", *keep)
			}
			v, entry, err := e.unlock(args[0], *passfile)
			if err != nil {
				return err
			}
			defer v.Close()
			if *keep != "" {
				if mp := mountmgr.MountedAt(v.Dir); mp != "" {
					return withHint(fmt.Errorf("%s is mounted at %s", displayName(entry), mp),
						"rename or delete the copy through the mount, or unmount the vault first")
				}
				if err := v.ResolveConflict(e.ctx, args[1], how); err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "Settled %s (kept %s).\n", vault.EscapeControl(args[1]), *keep)
				return nil
			}
			list, err := v.Conflicts(e.ctx)
			if err != nil {
				return err
			}
			if *asJSON {
				if list == nil {
					list = []vault.ConflictEntry{}
				}
				enc := json.NewEncoder(e.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(list)
			}
			if len(list) == 0 {
				fmt.Fprintf(e.stdout, "%s: no conflict copies.\n", displayName(entry))
				return nil
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "COPY\tOF\tTOOL\tDATE\tSIZE\tNEWER")
			for _, c := range list {
				date := c.Date
				if date == "" {
					date = "-"
				}
				newer := c.Newer
				if newer == "" {
					newer = "(original gone)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", vault.EscapeControl(c.Path), vault.EscapeControl(c.Of), c.Tool, date, c.Size, newer)
			}
			return tw.Flush()
		}
	},
}
