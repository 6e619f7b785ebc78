package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/vault"
)

// loadRegistry loads the user's registry of known vaults.
func (e *env) loadRegistry() (*vault.Registry, error) {
	path, err := vault.DefaultRegistryPath()
	if err != nil {
		return nil, err
	}
	return vault.LoadRegistry(path)
}

// updateRegistry changes the user's registry under its lock (vault.UpdateRegistry).
func (e *env) updateRegistry(change func(r *vault.Registry) error) (*vault.Registry, error) {
	path, err := vault.DefaultRegistryPath()
	if err != nil {
		return nil, err
	}
	return vault.UpdateRegistry(path, change)
}

// resolve turns a VAULT argument (registry name or cipherdir) into an entry.
// A cipherdir given by path still works when the registry is unreadable, so
// a corrupt vaults.json never locks anyone out of a vault; a warning says so.
func (e *env) resolve(arg string) (vault.Entry, error) {
	reg, err := e.loadRegistry()
	if err != nil {
		entry, perr := (&vault.Registry{}).Resolve(arg)
		if perr != nil {
			return vault.Entry{}, err
		}
		fmt.Fprintf(e.stderr, "warning: ignoring the registry: %v\n", oneLine(err.Error()))
		return entry, nil
	}
	return reg.Resolve(arg)
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
			if len(args) != 0 {
				return e.usage("takes no arguments, got %d", len(args))
			}
			reg, err := e.loadRegistry()
			if err != nil {
				return err
			}
			if *asJSON {
				return printListJSON(e.stdout, reg.Vaults)
			}
			if len(reg.Vaults) == 0 {
				fmt.Fprintln(e.stdout, `No vaults registered. Create one with "vaultui init DIR" or add one with "vaultui add DIR".`)
				return nil
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tCIPHER\tOPENS IN\tCIPHERDIR\tMOUNTPOINT")
			for _, v := range reg.Vaults {
				cipher, opens := vaultCipher(v.CipherDir)
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", v.Name, cipher, opens, v.CipherDir, v.MountPoint)
			}
			return tw.Flush()
		}
	},
}

// vaultCipher returns the cipher's display name from the vault's config and
// the programs that open it, or a short reason it could not be read.
func vaultCipher(dir string) (cipher, opensIn string) {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return "(missing)", "-"
	}
	cfg, err := vault.LoadConfig(dir)
	if err != nil {
		return "(unreadable)", "-"
	}
	return cfg.Cipher().String(), app.OpensIn(cfg.Cipher()).Short
}

// listEntryJSON is one vault in "list --json": a stable shape for scripts.
type listEntryJSON struct {
	Name         string   `json:"name"`
	CipherDir    string   `json:"cipherdir"`
	MountPoint   string   `json:"mountpoint"`
	ReadOnly     bool     `json:"readonly"`
	Idle         string   `json:"idle"` // Go duration, "" = never
	MountAtStart bool     `json:"mount_at_start"`
	Lock         string   `json:"lock"`               // effective lock policy
	Cipher       string   `json:"cipher,omitempty"`   // crypto.CipherID, e.g. "aes-gcm"
	OpensIn      []string `json:"opens_in,omitempty"` // programs that open it (app.OpensIn)
	Error        string   `json:"error,omitempty"`    // why the config could not be read
}

func printListJSON(w io.Writer, vaults []vault.Entry) error {
	out := make([]listEntryJSON, 0, len(vaults))
	for _, v := range vaults {
		j := listEntryJSON{Name: v.Name, CipherDir: v.CipherDir, MountPoint: v.MountPoint,
			ReadOnly: v.ReadOnly, MountAtStart: v.MountAtStart, Lock: v.LockPolicy()}
		if v.Idle != 0 {
			j.Idle = v.Idle.String()
		}
		if cfg, err := vault.LoadConfig(v.CipherDir); err != nil {
			j.Error = err.Error()
		} else {
			j.Cipher = string(cfg.Cipher())
			j.OpensIn = app.OpensIn(cfg.Cipher()).Programs
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
	name:    "add",
	group:   groupRegistry,
	summary: "Register an existing vault (made by vaultui or gocryptfs)",
	args:    "[--name N] [--mountpoint M] [--automount] [--lock POLICY] [--reverse] CIPHERDIR",
	help: `Checks that CIPHERDIR holds a gocryptfs.conf vaultui can use; no password is
needed and nothing in CIPHERDIR is changed. --automount and --lock are
explained in "vaultui edit --help"; the lock policy defaults to sleep, or to
never where it cannot work (no logind).
--reverse registers a plaintext folder with a .gocryptfs.reverse.conf (from
"vaultui init --reverse" or "gocryptfs -init -reverse"): mounting it shows
its read-only encrypted view.

examples:
  vaultui add ~/Private.enc
  vaultui add --name work --mountpoint ~/work /data/work.enc`,
	setup: func(fs *flag.FlagSet) runFunc {
		name := fs.String("name", "", "`NAME` in the registry (default: the directory's base name)")
		mountPoint := fs.String("mountpoint", "", "mount point `DIR` (default: ~/Vaults/NAME)")
		automount := fs.Bool("automount", false, "mount at login with the keyring's password")
		lock := fs.String("lock", "", "lock `POLICY`: "+strings.Join(vault.LockPolicies, ", ")+" (default sleep where it can work)")
		reverse := fs.Bool("reverse", false, "CIPHERDIR is a plaintext folder prepared for reverse mode")
		return func(e *env, args []string) error {
			if len(args) != 1 {
				return e.usage("expected one CIPHERDIR argument, got %d", len(args))
			}
			if flagSet(fs, "lock") {
				if err := vault.ValidateLockPolicy(*lock); err != nil {
					return e.usage("--lock: %v", err)
				}
			}
			dir, err := filepath.Abs(args[0])
			if err != nil {
				return err
			}
			load := vault.LoadConfig
			if *reverse {
				load = vault.LoadReverseConfig
			}
			cfg, err := load(dir)
			if err != nil {
				return err
			}
			n := *name
			if n == "" {
				n = filepath.Base(dir)
				if err := vault.ValidateName(n); err != nil {
					return withHint(err, "choose a name with --name")
				}
			}
			if flagSet(fs, "lock") {
				e.lockNote(*lock)
			} else {
				*lock = e.newVaultLock()
			}
			mp := *mountPoint
			if mp == "" {
				if mp, err = vault.DefaultMountPoint(n); err != nil {
					return err
				}
			}
			if mp, err = filepath.Abs(mp); err != nil {
				return err
			}
			if err := mountmgr.CheckNesting(dir, mp); err != nil {
				return mountHint(err, mp)
			}
			reg, err := e.updateRegistry(func(reg *vault.Registry) error {
				return reg.Add(vault.Entry{Name: n, CipherDir: dir, MountPoint: mp, MountAtStart: *automount, Lock: *lock, Reverse: *reverse})
			})
			if err != nil {
				return err
			}
			added := reg.Vaults[len(reg.Vaults)-1]
			fmt.Fprintf(e.stdout, "Added %q (%s): %s, mount point %s.\n", added.Name, cfg.Cipher(), added.CipherDir, added.MountPoint)
			return nil
		}
	},
}

var forgetCommand = &command{
	name:    "forget",
	group:   groupRegistry,
	summary: "Remove a vault from the registry; its files are not touched",
	args:    "NAME",
	help: `Only the registry entry goes; the encrypted directory and the mount point stay
as they are, and "vaultui add" brings the vault back.

example:
  vaultui forget work`,
	setup: func(fs *flag.FlagSet) runFunc {
		return func(e *env, args []string) error {
			if len(args) != 1 {
				return e.usage("expected one NAME argument, got %d", len(args))
			}
			var entry vault.Entry
			_, err := e.updateRegistry(func(reg *vault.Registry) error {
				var ok bool
				if entry, ok = reg.Lookup(args[0]); !ok {
					return withHint(fmt.Errorf("vault %q is not in the registry: %w", args[0], vault.ErrNotFound),
						`run "vaultui list" to see registered names`)
				}
				return reg.Remove(entry.Name)
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "Forgot %q; its files in %s are untouched.\n", entry.Name, entry.CipherDir)
			return nil
		}
	},
}
