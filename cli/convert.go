package cli

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/termsafe"
	"github.com/vaultui/vaultui/registry"
	"github.com/vaultui/vaultui/vault"
)

var convertCommand = &command{
	name:     "convert",
	group:    groupVaults,
	summary:  "Re-encrypt a vault's contents with another cipher (e.g. AEGIS to GCM for gocryptfs)",
	args:     "--to CIPHER [--keep-old DIR] [--passfile F | --extpass PROGRAM] [--yes] VAULT",
	operands: []string{"VAULT"},
	values:   map[string]string{"to": "aegis|gcm|xchacha|siv"},
	help: `Names, the master key and the password stay; file contents, symlink targets
and extended attribute values are re-encrypted. The new vault is built beside
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
  vaultui convert --to aegis --keep-old /data/work.enc.before --yes work`,
	setup: func(fs *flag.FlagSet) runFunc {
		to := fs.String("to", "", "the new content `CIPHER`: gcm, aegis, xchacha or siv")
		keepOld := fs.String("keep-old", "", "move the old vault to `DIR` (must not exist; same file system)")
		src := passSourceFlags(fs, "read the password from the first line of `FILE` (- for standard input)")
		yes := fs.Bool("yes", false, "do not ask before starting")
		return func(e *env, args []string) error {
			if len(args) != 1 {
				return e.usage("expected one VAULT argument, got %d", len(args))
			}
			if err := src.check(e); err != nil {
				return err
			}
			if *to == "" {
				return e.usage("--to is required: gcm, aegis, xchacha or siv")
			}
			cipher, err := crypto.ParseCipher(*to)
			if err != nil {
				return e.usage("--to %q: want gcm, aegis, xchacha or siv", *to)
			}
			entry, err := e.resolve(args[0])
			if err != nil {
				return err
			}
			return runConvert(e, entry, app.ConvertRequest{Vault: app.VaultOf(entry), To: cipher, KeepOld: *keepOld}, src, *yes)
		}
	},
}

func runConvert(e *env, entry registry.Entry, req app.ConvertRequest, src *passSource, yes bool) error {
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
	w := e.stdout
	fmt.Fprintf(w, "Convert %s (%s) from %s to %s.\n", name, plan.Dir, plan.From, plan.To)
	fmt.Fprintf(w, "The result %s.\n", plan.GocryptfsNote())
	fmt.Fprintf(w, "Re-encrypts %s in %d files. The new vault is built in %s/new and needs %s (%s free).\n",
		formatBytes(float64(plan.PlainBytes)), plan.Files, plan.Work, formatBytes(float64(plan.NeedBytes)), formatBytes(float64(plan.FreeBytes)))
	fmt.Fprintf(w, "After a full check it is swapped in with renameat2 RENAME_EXCHANGE; the old vault is kept at %s until you delete it.\n", plan.KeepOld)
	if plan.Interrupted == vault.InterruptedBuilding {
		fmt.Fprintf(w, "An interrupted conversion left a half-built vault in %s: it is removed first (the old vault was never changed).\n", plan.Work)
	}
	fmt.Fprintln(w, "If this folder is synced (Dropbox, Nextcloud, Syncthing...), the sync tool uploads the whole vault again, and the old copy too while it stays in the synced folder (--keep-old DIR puts it elsewhere).")
	if !yes {
		if err := e.confirm("Convert now? Type yes to go on: ", "run again with --yes to convert without asking"); err != nil {
			return err
		}
	}
	prog := newByteProgress(e.stderr)
	req.Progress = prog.update
	var res *vault.ConvertResult
	err = e.withPassword(entry, src, func(pw []byte) (app.KeyringChange, error) {
		req.Password = pw
		var change app.KeyringChange
		var err error
		res, change, err = e.app.Convert(e.ctx, req)
		return change, err
	})
	prog.done()
	if err != nil {
		return convertError(err)
	}
	printConvertResult(w, name, res)
	return nil
}

// convertError gives convert's refusals their exit code and hint.
func convertError(err error) error {
	switch {
	case errors.Is(err, vault.ErrMounted):
		return &codeError{withHint(err, "unmount it first (vaultui unmount VAULT)"), exitAlreadyMounted}
	case errors.Is(err, vault.ErrCorrupt):
		return withHint(err, "the old vault is unchanged; run vaultui fsck to see the damage")
	}
	return err
}

func printConvertResult(w io.Writer, name string, res *vault.ConvertResult) {
	if res.Cleaned {
		fmt.Fprintln(w, "Removed the half-built vault an interrupted conversion had left.")
	}
	fmt.Fprintf(w, "Converted %s to %s", name, res.To)
	if res.Swap != "" {
		fmt.Fprintf(w, " (swapped in with %s)", res.Swap)
	}
	fmt.Fprintln(w, ".")
	for _, p := range res.Unchanged {
		fmt.Fprintf(w, "Copied unchanged (not the vault's, hidden in the mount): %s\n", termsafe.Escape(p))
	}
	for _, p := range res.Dropped {
		fmt.Fprintf(w, "Left only in the old vault (a copy of the old config): %s\n", termsafe.Escape(p))
	}
	if res.OldDir != "" {
		fmt.Fprintf(w, "The old vault (%s) is kept at %s; delete it when you no longer need it.\n", res.From, res.OldDir)
	}
}

// confirm asks a yes/no question on the terminal; without one it fails with hint.
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
	if strings.TrimSpace(strings.ToLower(answer)) != "yes" {
		return errors.New("not confirmed; nothing was changed")
	}
	return nil
}

// byteProgress draws convert's progress in bytes on a terminal, at most ten times a second.
type byteProgress struct {
	w     io.Writer
	on    bool
	last  time.Time
	phase string
	drawn bool
}

func newByteProgress(w io.Writer) *byteProgress {
	return &byteProgress{w: w, on: isTerminal(w)}
}

func (p *byteProgress) update(c vault.ConvertProgress) {
	if !p.on || (c.Phase == p.phase && time.Since(p.last) < 100*time.Millisecond) {
		return
	}
	p.last, p.phase = time.Now(), c.Phase
	line := c.Phase
	if c.Total > 0 {
		line += fmt.Sprintf(" %s of %s (%d%%)", formatBytes(float64(c.Done)), formatBytes(float64(c.Total)), c.Done*100/c.Total)
	}
	fmt.Fprintf(p.w, "\r\x1b[K%s", line)
	p.drawn = true
}

func (p *byteProgress) done() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
