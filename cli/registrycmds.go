package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/registry"
	"github.com/vaultui/vaultui/vault"
)

// resolve turns a VAULT argument (registry name or cipherdir) into an entry (app.Resolve);
// a registry that could not be read and was ignored is warned about.
func (e *env) resolve(arg string) (registry.Entry, error) {
	entry, regErr, err := e.app.Resolve(arg)
	if err == nil && regErr != nil {
		fmt.Fprintf(e.stderr, "warning: ignoring the registry: %v\n", app.OneLine(regErr.Error()))
	}
	return entry, err
}

var listCommand = &command{
	name:    "list",
	group:   groupRegistry,
	summary: "List the registered vaults",
	args:    "[--json]",
	help: `Shows each vault's name, cipher, which programs open it, encrypted
directory and mount point. The cipher is read from the vault's
gocryptfs.conf; a vault that cannot be read is still listed, with the
reason. A vault with AEGIS-256X2 opens only in vaultui; one with AES-256-GCM
also in gocryptfs, cppcryptfs, DroidFS and SiriKali. "vaultui status" shows
what is mounted.

examples:
  vaultui list
  vaultui list --json`,
	setup: func(fs *flag.FlagSet) runFunc {
		asJSON := fs.Bool("json", false, "print JSON")
		return func(e *env, args []string) error {
			vaults, err := e.app.List()
			if err != nil {
				return err
			}
			if *asJSON {
				return printListJSON(e.stdout, vaults)
			}
			if len(vaults) == 0 {
				fmt.Fprintln(e.stdout, `No vaults registered. Create one with "vaultui init DIR" or add one with "vaultui add DIR".`)
				return nil
			}
			tw := newTable(e.stdout)
			fmt.Fprintln(tw, "NAME\tCIPHER\tOPENS IN\tCIPHERDIR\tMOUNTPOINT")
			for _, v := range vaults {
				var cipher, opens string
				switch {
				case v.Missing:
					cipher, opens = "(missing)", "-"
				case v.Err != nil:
					cipher, opens = "(unreadable)", "-"
				default:
					cipher, opens = v.Label(), v.OpensIn().Short
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", v.Name, cipher, opens, v.CipherDir, v.MountPoint)
			}
			return tw.Flush()
		}
	},
}

// listEntryJSON is one vault in "list --json": a stable shape for scripts.
type listEntryJSON struct {
	Name         string   `json:"name"`
	CipherDir    string   `json:"cipherdir"`
	MountPoint   string   `json:"mountpoint"`
	ReadOnly     bool     `json:"readonly"`
	Idle         string   `json:"idle"` // Go duration, "" = never
	MountAtStart bool     `json:"mount_at_start"`
	Lock         string   `json:"lock"` // effective lock policy
	Shared       bool     `json:"sharedstorage"`
	Format       string   `json:"format,omitempty"`   // vault.Format.ID, e.g. "gocryptfs"
	Cipher       string   `json:"cipher,omitempty"`   // crypto.CipherID, e.g. "aes-gcm"; "" where the format fixes it
	OpensIn      []string `json:"opens_in,omitempty"` // programs that open it (app.OpensIn)
	Error        string   `json:"error,omitempty"`    // why the config could not be read
}

func printListJSON(w io.Writer, vaults []app.Listed) error {
	out := make([]listEntryJSON, 0, len(vaults))
	for _, v := range vaults {
		j := listEntryJSON{Name: v.Name, CipherDir: v.CipherDir, MountPoint: v.MountPoint,
			ReadOnly: v.ReadOnly, MountAtStart: v.MountAtStart, Lock: v.LockPolicy(), Shared: v.SharedStorage}
		if v.Idle != 0 {
			j.Idle = v.Idle.String()
		}
		if v.Err != nil {
			j.Error = v.Err.Error()
		} else {
			j.Format, j.Cipher = v.Format.ID, string(v.Cipher)
			j.OpensIn = v.OpensIn().Programs
		}
		out = append(out, j)
	}
	return writeJSON(w, out)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

var addCommand = &command{
	name:     "add",
	group:    groupRegistry,
	summary:  "Register an existing vault (made by vaultui or gocryptfs)",
	args:     "[--name N] [--mountpoint M] [--automount] [--lock POLICY] [--reverse] CIPHERDIR",
	operands: []string{"CIPHERDIR"},
	values:   map[string]string{"name": "", "lock": lockPolicyWords},
	help: `Checks that CIPHERDIR holds a gocryptfs.conf vaultui can use, or a Cryptomator
vault's vault.cryptomator (info, fsck, export and conflicts read those; mounting
them is not supported yet); no password is needed and nothing in CIPHERDIR is changed. --automount and --lock are
explained in "vaultui edit --help"; the lock policy defaults to sleep, or to
never where it cannot work (no logind).
--reverse registers a plaintext folder with a .gocryptfs.reverse.conf (from
"vaultui init --reverse" or "gocryptfs -init -reverse"): mounting it shows
its read-only encrypted view.

examples:
  vaultui add ~/Private.enc
  vaultui add --name work --mountpoint ~/work /data/work.enc`,
	setup: func(fs *flag.FlagSet) runFunc {
		name := fs.String("name", "", "`NAME` in the registry (default: the directory's name without its extension)")
		mountPoint := fs.String("mountpoint", "", "mount point `DIR` (default: ~/Vaults/NAME)")
		automount := fs.Bool("automount", false, "mount at login with the keyring's password")
		lock := fs.String("lock", "", "lock `POLICY`: "+strings.Join(registry.LockPolicies, ", ")+" (default sleep where it can work)")
		reverse := fs.Bool("reverse", false, "CIPHERDIR is a plaintext folder prepared for reverse mode")
		allowCostlyKDF(fs)
		return func(e *env, args []string) error {
			r := app.NewEntry{Name: *name, CipherDir: args[0], MountPoint: *mountPoint, Automount: *automount, Reverse: *reverse}
			if flagSet(fs, "lock") {
				if err := registry.ValidateLockPolicy(*lock); err != nil {
					return e.usage("--lock: %v", err)
				}
				r.Lock = *lock
			}
			added, err := e.app.Add(e.ctx, r)
			switch {
			case errors.Is(err, registry.ErrInvalidName) && *name == "":
				return withHint(err, "choose a name with --name")
			case err != nil:
				return mountHint(err, *mountPoint)
			}
			if added.LockNote != nil {
				fmt.Fprintf(e.stderr, "note: %v\n", added.LockNote)
			}
			fmt.Fprintf(e.stdout, "Added %q (%s): %s, mount point %s.\n", added.Entry.Name, added.Label(), added.Entry.CipherDir, added.Entry.MountPoint)
			return nil
		}
	},
}

var forgetCommand = &command{
	name:     "forget",
	group:    groupRegistry,
	summary:  "Remove a vault from the registry; its files are not touched",
	args:     "NAME",
	operands: []string{"NAME"},
	help: `Only the registry entry goes; the encrypted directory and the mount point stay
as they are, and "vaultui add" brings the vault back.

example:
  vaultui forget work`,
	setup: noFlags(func(e *env, args []string) error {
		entry, err := e.app.Forget(args[0])
		if errors.Is(err, vault.ErrNotFound) {
			return withHint(err, `run "vaultui list" to see registered names`)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "Forgot %q; its files in %s are untouched.\n", entry.Name, entry.CipherDir)
		return nil
	}),
}
