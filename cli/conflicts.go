package cli

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"path"
	"strings"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/internal/termsafe"
	"github.com/vaultui/vaultui/vault"
)

var conflictsCommand = &command{
	name:     "conflicts",
	anyArgs:  true,
	group:    groupVaults,
	summary:  "List sync tools' conflict copies in a vault, or settle one",
	args:     "[--passfile F | --extpass PROGRAM] [--json] VAULT | --keep both|original|copy VAULT PATH",
	operands: []string{"VAULT", "PATH"},
	values:   map[string]string{"keep": "both|original|copy"},
	help: `When a file changes on two machines, Dropbox, Nextcloud, ownCloud, Syncthing,
OneDrive or Google Drive keep both versions by renaming one encrypted file.
vaultui shows such a copy beside the original in the mount, with a marker
before its extension ("report (conflict 2026-11-30 Syncthing).odt"). This lists
them: path, the file it copies, tool, date, size and which is newer.

--keep settles the copy at PATH (as listed): "both" gives it a name of its own
(the one it shows under), "original" deletes the copy, "copy" puts it in place
of the original. A copy that does not decrypt is refused (exit code 4) unless
it is deleted. Nothing else is ever deleted. A mounted vault needs no password:
the mount manager holds its key, lists its conflicts and settles them through
the mount.

A folder made on two computers is listed below the copies: what was made in it
on the second computer is encrypted under that computer's folder key, which
the sync tool kept as a copy of gocryptfs.diriv. "--keep both VAULT FOLDER"
merges it: each such entry moves into the folder (with a conflict marker if
the folder has its name), then the copy of gocryptfs.diriv goes.

examples:
  vaultui conflicts work
  vaultui conflicts --keep both work "docs/report (conflict 2026-11-30 Syncthing).odt"`,
	setup: func(fs *flag.FlagSet) runFunc {
		src := passSourceFlags(fs, "read the password from the first line of `FILE` (- for standard input)")
		asJSON := fs.Bool("json", false, "print JSON")
		keep := fs.String("keep", "", "settle the copy at PATH: `both`, original or copy")
		return func(e *env, args []string) error {
			var how vault.Keep
			if *keep == "" {
				if len(args) != 1 {
					return e.usage("expected one VAULT argument, got %d", len(args))
				}
			} else {
				var err error
				if how, err = vault.ParseKeep(*keep); err != nil {
					return e.usage("--keep %v", err)
				}
				if len(args) != 2 {
					return e.usage("--keep needs VAULT and PATH arguments, got %d argument(s)", len(args))
				}
			}
			entry, err := e.resolve(args[0])
			if err != nil {
				return err
			}
			// A mounted vault's conflicts are the daemon's to list and settle (through the
			// mount): no password then.
			var sess *app.Conflicts
			err = e.withPassword(entry, src, func(pw []byte) (change app.KeyringChange, err error) {
				sess, change, err = e.app.OpenConflicts(e.ctx, app.VaultOf(entry), pw)
				return change, err
			})
			if err != nil {
				return err
			}
			defer sess.Close()
			if *keep != "" {
				done, err := sess.Settle(e.ctx, args[1], how)
				switch {
				case errors.Is(err, vault.ErrFolderKeepsBoth):
					return withHint(&codeError{err: err, code: exitUsage},
						"merge it with --keep both, then delete what you do not want; or settle its entries one by one")
				case errors.Is(err, vault.ErrCorrupt):
					return withHint(err, "the original is untouched; --keep original deletes the copy")
				case err != nil:
					return err
				}
				if done.DirIVCopies == nil && done.Moved == nil {
					fmt.Fprintf(e.stdout, "Settled %s (kept %s).\n", termsafe.Escape(args[1]), *keep)
					return nil
				}
				fmt.Fprintf(e.stdout, "Merged the folder %s: moved %d entries made on the other computer into it, removed %d copy(ies) of gocryptfs.diriv.\n",
					termsafe.Escape(vault.FolderArg(strings.Trim(args[1], "/"))), len(done.Moved), len(done.DirIVCopies))
				for _, m := range done.Moved {
					if m.Renamed {
						fmt.Fprintf(e.stdout, "  the folder had %s: the other computer's is now %s\n",
							termsafe.Escape(path.Base(m.Of)), termsafe.Escape(m.To))
					}
				}
				return nil
			}
			list, err := sess.List(e.ctx)
			if err != nil {
				return err
			}
			if *asJSON {
				if list == nil {
					list = []vault.ConflictEntry{}
				}
				return writeJSON(e.stdout, list)
			}
			if len(list) == 0 {
				fmt.Fprintf(e.stdout, "%s: no conflict copies.\n", displayName(entry))
				return nil
			}
			var folders []vault.ConflictEntry
			tw := newTable(e.stdout)
			header := false
			for _, c := range list {
				if c.Kind == vault.ConflictFolderMadeTwice {
					folders = append(folders, c)
					continue
				}
				if !header {
					fmt.Fprintln(tw, "COPY\tOF\tTOOL\tDATE\tSIZE\tNEWER")
					header = true
				}
				newer := c.Newer
				switch {
				case newer == "" && c.Kind == vault.ConflictMadeInSecondFolder:
					newer = "(only there)"
				case newer == "":
					newer = "(original gone)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", termsafe.Escape(c.Path), termsafe.Escape(c.Of), c.Tool, cmp.Or(c.Date, "-"), c.Size, newer)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			for i, f := range folders {
				if header || i > 0 {
					fmt.Fprintln(e.stdout)
				}
				folder := termsafe.Escape(vault.FolderArg(f.Path))
				when := ""
				if f.Date != "" {
					when = " (" + f.Date + ")"
				}
				fmt.Fprintf(e.stdout, "Folder %s was made on two computers: %s kept the second one's gocryptfs.diriv as a conflict copy%s.\n", folder, f.Tool, when)
				if f.Entries > 0 {
					fmt.Fprintf(e.stdout, "%d entries made in it there are encrypted under that copy, so gocryptfs does not show them; they are listed above.\n", f.Entries)
				} else {
					fmt.Fprintln(e.stdout, "Nothing in it is encrypted under that copy any more.")
				}
				fmt.Fprintf(e.stdout, "To merge them into the folder and remove the copy: vaultui conflicts --keep both %s %s\n", shellWord(args[0]), shellWord(folder))
				fmt.Fprintln(e.stdout, "(an entry whose name the folder already has gets a conflict marker; nothing is deleted)")
			}
			return nil
		}
	},
}

// shellWord quotes s for a command line the user can copy, when it needs quoting.
func shellWord(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t'\"\\$`!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
