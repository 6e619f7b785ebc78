package cli

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/mountmgr/extpass"
	"github.com/vaultui/vaultui/registry"
	"github.com/vaultui/vaultui/vault"
)

var editCommand = &command{
	name:     "edit",
	group:    groupRegistry,
	summary:  "Change a registered vault's options (automount, lock policy, mount point, ...)",
	args:     "[--automount[=false]] [--lock POLICY] [--mountpoint DIR] [--ro[=false]] [--idle DUR] [--sharedstorage[=false]] [--extpass PROGRAM | --no-extpass] NAME",
	operands: []string{"NAME"},
	values:   map[string]string{"lock": lockPolicyWords},
	help: `Changes only the options given; the vault's files are not touched.
--automount: the mount manager mounts the vault when it starts at login
("vaultui autostart enable"), with the password stored in the keyring
("vaultui mount --remember"). --lock: when the manager unmounts the vault on
its own: never, sleep (before the machine suspends; the default for new
vaults) or sleep+screenlock (also when the screen locks). Vaults registered
before lock policies existed keep "never" until changed here.
--extpass: the vault's password program (gocryptfs's -extpass): mount, fsck,
export, conflicts and automount at login take the password from the first
line it prints, before the keyring. It runs without a shell: one --extpass
is split on spaces, several are taken as the arguments, unsplit.
--no-extpass removes it. --sharedstorage: mount it as "vaultui mount
--sharedstorage" does, for a cipherdir other machines use at the same time.

examples:
  vaultui edit --automount work
  vaultui edit --lock sleep+screenlock work
  vaultui edit --automount=false --idle 30m work
  vaultui edit --extpass 'secret-tool lookup vaultui work' --automount work`,
	setup: func(fs *flag.FlagSet) runFunc {
		automount := fs.Bool("automount", false, "mount at login with the keyring's password")
		lock := fs.String("lock", "", "lock `POLICY`: "+strings.Join(registry.LockPolicies, ", "))
		mountPoint := fs.String("mountpoint", "", "mount point `DIR`")
		ro := fs.Bool("ro", false, "mount read-only")
		idle := fs.Duration("idle", 0, "unmount after no file activity for `DURATION` (0: never)")
		shared := fs.Bool("sharedstorage", false, "the cipherdir is used by other machines at the same time (see mount)")
		var prog extpassFlag
		fs.Var(&prog, "extpass", "the vault's password `PROGRAM` (run without a shell, split on spaces; repeat the option to give arguments with spaces)")
		noProg := fs.Bool("no-extpass", false, "remove the vault's password program")
		return func(e *env, args []string) error {
			if fs.NFlag() == 0 {
				return e.usage("nothing to change: give at least one option")
			}
			ed := app.Edit{Automount: ifGiven(fs, "automount", automount), Lock: ifGiven(fs, "lock", lock),
				MountPoint: ifGiven(fs, "mountpoint", mountPoint), ReadOnly: ifGiven(fs, "ro", ro),
				Idle: ifGiven(fs, "idle", idle), SharedStorage: ifGiven(fs, "sharedstorage", shared)}
			if ed.Lock != nil {
				if err := registry.ValidateLockPolicy(*lock); err != nil {
					return e.usage("--lock: %v", err)
				}
			}
			if *idle < 0 {
				return e.usage("--idle %s: want a duration of 0 (never) or more", *idle)
			}
			if len(prog) > 0 && *noProg {
				return e.usage("give either --extpass or --no-extpass, not both")
			}
			if len(prog) > 0 {
				argv := prog.argv()
				ed.ExtPass = &argv
			} else if *noProg {
				ed.ExtPass = &[]string{}
			}
			edited, err := e.app.Edit(e.ctx, args[0], ed)
			switch {
			case errors.Is(err, vault.ErrNotFound):
				return withHint(err, `run "vaultui list" to see registered names`)
			case err != nil:
				return mountHint(err, *mountPoint)
			}
			printEntryOptions(e, edited.Entry)
			if edited.LockNote != nil {
				fmt.Fprintf(e.stderr, "note: %v\n", edited.LockNote)
			}
			return nil
		}
	},
}

// ifGiven is v when the flag name was given on the command line, else nil.
func ifGiven[T any](fs *flag.FlagSet, name string, v *T) *T {
	if flagSet(fs, name) {
		return v
	}
	return nil
}

// printEntryOptions says what a vault's options are now, on one line.
func printEntryOptions(e *env, v registry.Entry) {
	idle := "never"
	if v.Idle > 0 {
		idle = v.Idle.String()
	}
	prog := ""
	if len(v.ExtPass) > 0 {
		prog = fmt.Sprintf(", password program %q", extpass.String(v.ExtPass))
	}
	if v.SharedStorage {
		prog = ", shared storage" + prog
	}
	fmt.Fprintf(e.stdout, "%s: mount point %s, read-only %s, idle unmount %s, automount %s, lock %s%s\n",
		v.Name, v.MountPoint, yesNo(v.ReadOnly), idle, yesNo(v.MountAtStart), v.LockPolicy(), prog)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// lockPolicyWords are the values --lock completes to.
var lockPolicyWords = strings.Join(registry.LockPolicies, "|")
