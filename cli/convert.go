package cli

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/termsafe"
	"github.com/vaultui/vaultui/registry"
	"github.com/vaultui/vaultui/vault"
	"github.com/vaultui/vaultui/vault/convert"
)

var convertCommand = &command{
	name:     "convert",
	group:    groupVaults,
	summary:  "Re-encrypt a vault with another cipher, or move it into another format",
	args:     "--to CIPHER | --format FORMAT [--drop-unsupported] [--new-passfile F] [--keep-old DIR] [--passfile F | --extpass PROGRAM] [--yes] VAULT",
	operands: []string{"VAULT"},
	values:   map[string]string{"to": "aegis|gcm|xchacha|siv", "format": "gocryptfs|cryptomator"},
	help: `--to: within gocryptfs, names, the master key and the password stay; file
contents, symlink targets and extended attribute values are re-encrypted. A
Cryptomator vault of SIV_CTRMAC (migrated from format 7) becomes SIV_GCM, what
Cryptomator 1.6 and later create, with --to gcm: its masterkey file stays.

--format cryptomator moves a gocryptfs vault into a Cryptomator vault (it opens
in Cryptomator's apps); --format gocryptfs moves a Cryptomator vault into a
gocryptfs one (AES-GCM unless --to: it opens in gocryptfs, cppcryptfs and
DroidFS). The new vault has a new master key, shown once, and the old password
(--new-passfile F gives it a new one). A Cryptomator vault holds no hard links,
FIFOs, sockets, devices, extended attributes or permission bits: entries that
need them are listed and nothing is written, unless --drop-unsupported, which
leaves them in the old vault (hard links become copies) and names each one.

Either way the new vault is built beside
the old one (VAULT.vaultui-convert), checked completely (every name, block,
symlink and attribute decrypted and compared with the old vault), then swapped
in with renameat2 RENAME_EXCHANGE. The old vault is kept (default: beside it,
VAULT.old-CIPHER; --keep-old DIR on the same file system) until you delete it.
An interrupted run leaves the old vault untouched; run the command again to
finish or start over. The vault must not be mounted, and its file system needs
room for a second copy (checked first). It asks before starting unless --yes.

In a sync folder (Dropbox, Nextcloud, Syncthing...) every file of the vault
changes, so the sync tool uploads the whole vault again, and the old copy too
while it is kept there.

examples:
  vaultui convert --to gcm work
  vaultui convert --to aegis --keep-old /data/work.enc.before --yes work
  vaultui convert --format cryptomator --drop-unsupported work`,
	setup: func(fs *flag.FlagSet) runFunc {
		to := fs.String("to", "", "the new content `CIPHER`: gcm, aegis, xchacha or siv")
		format := fs.String("format", "", "move the vault into the `FORMAT` gocryptfs or cryptomator")
		drop := fs.Bool("drop-unsupported", false, "with --format: leave behind what the new format cannot hold, naming each, instead of refusing")
		newPassfile := fs.String("new-passfile", "", "with --format: seal the new vault with the password in `FILE` (- for standard input) instead of the old one")
		keepOld := fs.String("keep-old", "", "move the old vault to `DIR` (must not exist; same file system)")
		src := passSourceFlags(fs, "read the password from the first line of `FILE` (- for standard input)")
		yes := fs.Bool("yes", false, "do not ask before starting")
		return func(e *env, args []string) error {
			if *to == "" && *format == "" {
				return e.usage("--to or --format is required: --to gcm, aegis, xchacha or siv; --format gocryptfs or cryptomator")
			}
			var cipher crypto.CipherID
			if *to != "" {
				var err error
				if cipher, err = crypto.ParseCipher(*to); err != nil {
					return e.usage("--to %q: want gcm, aegis, xchacha or siv", *to)
				}
			}
			if *format != "" {
				if _, err := vault.FormatByID(*format); err != nil {
					return e.usage("--format %q: want gocryptfs or cryptomator", *format)
				}
			} else if *drop || *newPassfile != "" {
				return e.usage("--drop-unsupported and --new-passfile go with --format")
			}
			if src.file == "-" && *newPassfile == "-" {
				return e.usage("--passfile and --new-passfile cannot both read standard input")
			}
			entry, err := e.resolve(args[0])
			if err != nil {
				return err
			}
			req := app.ConvertRequest{Vault: app.VaultOf(entry), To: cipher, Format: *format, DropUnsupported: *drop, KeepOld: *keepOld}
			return runConvert(e, entry, req, src, *yes, *newPassfile)
		}
	},
}

func runConvert(e *env, entry registry.Entry, req app.ConvertRequest, src *passSource, yes bool, newPassfile string) error {
	name := displayName(entry)
	plan, err := e.app.PlanConvert(e.ctx, req)
	if plan.Finished != nil {
		fmt.Fprintf(e.stdout, "An interrupted conversion of %s to %s had already swapped in the new vault; finishing it.\n", name, plan.Finished.To)
		printConvertResult(e.stdout, name, plan.Finished)
	}
	if err != nil {
		return convertError(err)
	}
	if plan.Done {
		return nil
	}
	// The password first: a wrong one is said before the plan, not after it (and the
	// confirmation). The one that worked converts; nil, the keyring's still does.
	var password []byte
	err = e.withPassword(entry, src, func(pw []byte) (app.KeyringChange, error) {
		change, err := e.app.CheckPassword(e.ctx, req.Vault, pw)
		if err == nil {
			password = bytes.Clone(pw)
		}
		return change, err
	})
	defer crypto.Wipe(password)
	if err != nil {
		return convertError(err)
	}
	w := e.stdout
	fmt.Fprintf(w, "Convert %s (%s) %s.\n", name, plan.Dir, plan.Summary())
	fmt.Fprintf(w, "The result %s.\n", plan.OpensNote())
	if plan.NewKey {
		fmt.Fprintf(w, "It is a new %s vault with a new master key (shown once at the end), sealed under %s.\n", plan.To.Format.Name, map[bool]string{true: "the new password", false: "the same password"}[newPassfile != ""])
	}
	if len(plan.Cannot) > 0 {
		fmt.Fprintf(w, "A %s vault holds no %s: entries that need them are listed before anything is written%s.\n", plan.To.Format.Name, strings.Join(plan.Cannot, ", "),
			map[bool]string{true: ", and left behind (--drop-unsupported)", false: ", and the conversion stops (--drop-unsupported leaves them behind)"}[req.DropUnsupported])
	}
	verb := "Re-encrypts"
	if plan.Rebuild {
		verb = "Rebuilds, from about"
	}
	files := "files"
	if plan.Files == 1 {
		files = "file"
	}
	fmt.Fprintf(w, "%s %s in %d %s. The new vault is built in %s/new and needs %s; %s are free.\n",
		verb, formatBytes(float64(plan.PlainBytes)), plan.Files, files, plan.Work, formatBytes(float64(plan.NeedBytes)), formatBytes(float64(plan.FreeBytes)))
	fmt.Fprintf(w, "After a full check it is swapped in with renameat2 RENAME_EXCHANGE; the old vault is kept at %s until you delete it.\n", plan.KeepOld)
	if plan.Interrupted == convert.InterruptedBuilding {
		fmt.Fprintf(w, "An interrupted conversion left a half-built vault in %s: it is removed first (the old vault was never changed).\n", plan.Work)
	}
	fmt.Fprintln(w, "If this folder is synced (Dropbox, Nextcloud, Syncthing...), the sync tool uploads the whole vault again, and the old copy too while it stays in the synced folder (--keep-old DIR puts it elsewhere).")
	if !yes {
		if err := e.confirm("Convert now? [y/N] ", "run again with --yes to convert without asking"); err != nil {
			return err
		}
	}
	if newPassfile != "" {
		pw, err := e.readPassword(&passSource{file: newPassfile}, "New password: ", true)
		if err != nil {
			return err
		}
		defer crypto.Wipe(pw)
		req.NewPassword = pw
	}
	prog := &byteProgress{statusLine: newStatusLine(e.stderr)}
	req.Progress = prog.update
	req.Password = password
	res, change, err := e.app.Convert(e.ctx, req)
	prog.done()
	e.keyringNote(name, change) // a new password, which the keyring follows
	if err != nil {
		return convertError(err)
	}
	printConvertResult(w, name, res)
	if res.MasterKey != nil {
		fmt.Fprintln(w)
		printMasterKey(w, res.MasterKey, res.To.Format)
		crypto.Wipe(res.MasterKey)
	}
	return nil
}

// convertError gives convert's refusals their exit code and hint.
func convertError(err error) error {
	switch {
	case errors.Is(err, convert.ErrMounted):
		return &codeError{withHint(err, "unmount it first (vaultui unmount VAULT)"), exitAlreadyMounted}
	case errors.Is(err, vault.ErrCorrupt):
		return withHint(err, "the old vault is unchanged; run vaultui fsck to see the damage")
	}
	var ue *convert.UnsupportedError
	if errors.As(err, &ue) {
		var b strings.Builder
		for _, it := range ue.Items {
			fmt.Fprintf(&b, "\n  %s", termsafe.Escape(it.String()))
		}
		return withHint(fmt.Errorf("%w:%s", err, b.String()), "--drop-unsupported converts without them; they stay in the old vault")
	}
	return err
}

func printConvertResult(w io.Writer, name string, res *convert.Result) {
	if res.Cleaned {
		fmt.Fprintln(w, "Removed the half-built vault an interrupted conversion had left.")
	}
	from, to := res.From.String(), res.To.String()
	if res.From.Format != res.To.Format {
		from, to = res.From.Label(), res.To.Label()
	}
	fmt.Fprintf(w, "Converted %s to %s", name, to)
	if res.Swap != "" {
		fmt.Fprintf(w, ", swapped in with %s", res.Swap)
	}
	fmt.Fprintln(w, ".")
	for _, p := range res.Unchanged {
		fmt.Fprintf(w, "Copied unchanged (not the vault's, hidden in the mount): %s\n", termsafe.Escape(p))
	}
	for _, p := range res.Dropped {
		fmt.Fprintf(w, "Left only in the old vault (a copy of the old config): %s\n", termsafe.Escape(p))
	}
	for _, p := range res.Left {
		fmt.Fprintf(w, "Left only in the old vault (not the vault's, hidden in the mount): %s\n", termsafe.Escape(p))
	}
	for _, u := range res.Lost {
		fmt.Fprintf(w, "Dropped (a %s vault cannot hold it; it stays in the old vault): %s\n", res.To.Format.Name, termsafe.Escape(u.String()))
	}
	if res.OldDir != "" {
		fmt.Fprintf(w, "The old vault (%s) is kept at %s; delete it when you no longer need it.\n", from, res.OldDir)
	}
}

// confirm asks a yes/no question on the terminal: y or yes, in any case, goes on. Without a
// terminal it fails with hint.
func (e *env) confirm(question, hint string) error {
	tty, promptTo, done, err := e.terminal()
	if err != nil {
		return withHint(errors.New("no terminal to confirm on; nothing was changed"), "%s", hint)
	}
	defer done()
	fmt.Fprint(promptTo, question)
	answer, rerr := bufio.NewReader(tty).ReadString('\n')
	if rerr != nil && rerr != io.EOF {
		return rerr
	}
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return nil
	case "", "n", "no":
		return errors.New("not confirmed; nothing was changed")
	}
	return withHint(fmt.Errorf("%q is not yes; nothing was changed", strings.TrimSpace(answer)), "answer y or yes to go on")
}

// byteProgress draws convert's progress in bytes on a terminal, at once when its phase
// changes.
type byteProgress struct {
	statusLine
	phase string
}

func (p *byteProgress) update(c convert.Progress) {
	line := c.Phase
	if c.Total > 0 {
		line += fmt.Sprintf(" %s of %s (%d%%)", formatBytes(float64(c.Done)), formatBytes(float64(c.Total)), c.Done*100/c.Total)
	}
	p.draw(line, c.Phase != p.phase)
	p.phase = c.Phase
}
