package cli

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/mountmgr/vfs/exclude"
	"github.com/vaultui/vaultui/vault"
)

var mountCommand = &command{
	name:     "mount",
	anyArgs:  true,
	group:    groupMounts,
	summary:  "Unlock a vault and mount it (it stays mounted in the background)",
	args:     "[--passfile F | --extpass PROGRAM | --masterkey -|FILE] [--remember] [--ro | --rw] [--noexec] [--idle DUR] [--allow-other] [--sharedstorage] [-o OPTS] [--quiet] [--forcedecode] [--badname PATTERN] [--reverse [--exclude P] [--exclude-wildcard P] [--exclude-from F]] VAULT [MOUNTPOINT]",
	operands: []string{"VAULT", "MOUNTPOINT"},
	help: `VAULT is a registered name or a cipherdir. MOUNTPOINT defaults to the
registry's; it is created if missing, else it must be an empty directory. The mount is owned by
the background manager ("vaultui daemon", started on demand), so it keeps
working after this command returns, which happens once the mount is usable.
--ro and --idle default to the registry entry's options (--rw overrides its
read-only). --idle unmounts the vault after no file activity for that long
(e.g. 30m). --allow-other lets other users (root included) into the mount.
Mounts are always nosuid and nodev; --noexec forbids running programs too.
--sharedstorage (gocryptfs's -sharedstorage; the registry's sharedstorage
option does the same) is for a cipherdir that other machines mount at the
same time over network storage: the kernel caches no names, attributes or
file contents, so their changes show at once, and each write holds a lock
on the cipher file (which NFS and SMB pass on to the server) so that two
machines writing one 4 KiB block do not corrupt it. Slower; hard links show
as separate files. One machine still mounts a vault once.

The password comes from, in this order: --passfile or --extpass when given;
else the vault's password program when the registry names one ("vaultui
edit --extpass"); else the desktop keyring (Secret Service) when it holds
one; else it is asked on the terminal. A password program that fails, or a
stored password that no longer works, is reported and the password asked
for once; the one typed replaces a stale stored one. --remember stores the
password in the keyring once the mount worked; "vaultui forget-password
VAULT" removes it. --extpass runs PROGRAM without a shell and takes the
first line it prints (at most 4096 bytes, within 60 s).

--masterkey mounts with the master key init printed instead of the
password (recovery), read-only unless --rw: - asks for it, or reads it from
standard input when that is not a terminal; FILE reads its first line. It is
never taken from the command line.

-o takes the options of an fstab line, comma-separated, each mapped onto the
options above: ro, rw, noexec, exec, reverse, forcedecode, sharedstorage, nosuid, nodev,
allow_other, idle=DUR,
passfile=F, extpass=PROGRAM (split on spaces). default_permissions is taken and
needs nothing: the kernel checks permissions whenever other users come in
(allow_other). defaults, auto, noauto, user,
nouser, users, nofail, _netdev, comment=... and x-* (x-systemd.*) are for
mount(8) and systemd and are passed over; so are suid and dev (mounts stay
nosuid and nodev; mount.fuse3 adds dev,suid to root's mounts).
With the fstab type fuse.vaultui, mount(8) runs "vaultui SRC MOUNTPOINT -o
OPTS", which is this command with --quiet: a mount helper prints nothing
when the mount worked (see docs/reference.md, "fstab").

--reverse mounts the read-only encrypted view of a plaintext folder prepared
with "vaultui init --reverse" or "gocryptfs -init -reverse" (the registry's
reverse option does the same). --exclude PATH (from the folder's root),
--exclude-wildcard PATTERN and --exclude-from FILE leave entries out of the
view, in gitignore syntax, as gocryptfs's options of the same names; the
rules apply in the order given (after the registry's), the last match wins,
and a "!" rule re-includes a path even below an excluded folder.
Recovery: --forcedecode mounts a damaged vault read-only, with every block
that fails authentication read as zeros instead of failing the read (EIO);
the unauthenticated decryption of a block is never returned (gocryptfs's old
-forcedecode returned it). Each damaged block is logged with its cipher path
and offsets ("vaultui events"). Entries whose names do not decrypt are shown
as "NAME GOCRYPTFS_BAD_NAME" (gocryptfs's -badname): all of them with
--forcedecode, those whose cipher names match a glob PATTERN with --badname
(repeatable), e.g. --badname '*'.

examples:
  vaultui mount work
  vaultui mount --passfile pw.txt --ro ~/Private.enc /mnt/private
  vaultui mount --idle 15m work
  vaultui mount --remember work
  vaultui mount --extpass 'pass show vaults/work' work
  vaultui mount --masterkey - work /mnt/rescue
  vaultui mount -o ro,noexec,idle=15m work
  vaultui mount --sharedstorage /nfs/team.enc /mnt/team
  vaultui mount --reverse --exclude-wildcard '*.iso' ~/Documents /mnt/docs.enc
  vaultui mount --forcedecode --passfile pw.txt damaged.enc /mnt/rescue`,
	setup: func(fs *flag.FlagSet) runFunc {
		src := passSourceFlags(fs, "read the password from the first line of `FILE` (- for standard input)")
		masterKey := fs.String("masterkey", "", "unlock with the master key (read-only unless --rw): - asks or reads standard input, else the first line of `FILE`")
		ro := fs.Bool("ro", false, "mount read-only")
		rw := fs.Bool("rw", false, "mount read-write (overrides the registry's read-only; a --masterkey mount is read-only without it)")
		noexec := fs.Bool("noexec", false, "forbid running programs from the mount")
		idle := fs.Duration("idle", 0, "unmount after no file activity for `DURATION` (0: never)")
		allowOther := fs.Bool("allow-other", false, "let other users into the mount")
		shared := fs.Bool("sharedstorage", false, "the cipherdir is used by other machines at the same time (network storage): no caching, cipher files locked around writes")
		remember := fs.Bool("remember", false, "store the password in the desktop keyring once mounted")
		reverse := fs.Bool("reverse", false, "mount the encrypted view of a plaintext folder (read-only)")
		var rules []string
		fs.Var(&ruleFlag{&rules, "/"}, "exclude", "reverse: leave out `PATH` (relative to the folder's root)")
		fs.Var(&ruleFlag{&rules, ""}, "exclude-wildcard", "reverse: leave out what gitignore `PATTERN` matches")
		fs.Var(&ruleFlag{&rules, "from"}, "exclude-from", "reverse: leave out what the gitignore patterns in `FILE` match")
		forceDecode := fs.Bool("forcedecode", false, "recovery: read-only, damaged blocks read as zeros, bad names shown")
		var badNames stringsFlag
		fs.Var(&badNames, "badname", "show entries whose names do not decrypt and match the glob `PATTERN` (repeatable)")
		fs.Var(&mountOptions{fs: fs}, "o", "fstab-style mount options `OPTS`, comma-separated (see above)")
		quiet := fs.Bool("quiet", false, "print nothing when the mount worked (as mount(8)'s helper, which this is for an fstab line)")
		return func(e *env, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return e.usage("expected VAULT [MOUNTPOINT], got %d arguments", len(args))
			}
			if *ro && *rw {
				return e.usage("give either ro or rw, not both")
			}
			if *masterKey != "" && (src.given() || *remember) {
				return e.usage("--masterkey takes the place of the password: not with --passfile, --extpass or --remember")
			}
			entry, err := e.resolve(args[0])
			if err != nil {
				if *reverse && errors.Is(err, vault.ErrNotFound) {
					return withHint(err, `prepare the folder with "vaultui init --reverse %s"`, args[0])
				}
				return err
			}
			req := app.MountFor(entry)
			if len(args) == 2 {
				if req.MountPoint, err = filepath.Abs(args[1]); err != nil {
					return err
				}
			}
			if req.MountPoint == "" {
				return withHint(e.usage("no mount point given and none registered for %s", displayName(entry)),
					`give MOUNTPOINT, or register one with "vaultui add --mountpoint DIR"`)
			}
			req.Remember, req.AllowOther, req.NoExec = *remember, *allowOther, *noexec
			if flagSet(fs, "ro") {
				req.ReadOnly = *ro
			}
			if *rw {
				req.ReadOnly, req.ReadWrite = false, true
			}
			req.Reverse = req.Reverse || *reverse
			req.SharedStorage = req.SharedStorage || *shared
			if req.Reverse && req.SharedStorage {
				return e.usage("--sharedstorage is for vaults mounted from several machines, not for a reverse view")
			}
			// Recovery is read-only (the daemon enforces it too).
			req.ForceDecode, req.BadNames = *forceDecode, badNames
			req.ReadOnly = req.ReadOnly || *forceDecode
			for _, p := range badNames {
				if _, err := path.Match(p, ""); err != nil {
					return e.usage("--badname %q: %v", p, err)
				}
			}
			if len(rules) > 0 && !req.Reverse {
				return e.usage("--exclude, --exclude-wildcard and --exclude-from are for --reverse")
			}
			if req.Reverse {
				req.Exclude = append(req.Exclude, rules...)
				if _, err := exclude.Compile(req.Exclude); err != nil {
					return e.usage("%v", err)
				}
				view := entry
				view.Reverse = true
				if _, err := app.Info(view); err != nil {
					return withHint(err, `prepare the folder with "vaultui init --reverse %s"`, entry.CipherDir)
				}
			}
			if flagSet(fs, "idle") {
				if *idle < 0 {
					return e.usage("--idle %s: want a duration of 0 (never) or more", *idle)
				}
				req.Idle = *idle
			}
			// Before the passfile is read, a password asked for or the daemon started.
			if err := e.app.CheckMount(req); err != nil {
				return mountHint(err, req.MountPoint)
			}
			if *masterKey != "" {
				if req.MasterKey, err = e.readMasterKey(*masterKey, false); err != nil {
					return err
				}
				defer crypto.Wipe(req.MasterKey)
			}
			// A daemon just started may have cleaned up after one that crashed; say so now,
			// whatever becomes of this mount. The report is handed out once, so an error
			// here only means there is nothing to say (the mount call reports real trouble).
			if report, err := e.app.Stale(e.ctx); err == nil && len(report) > 0 {
				fmt.Fprintln(e.stderr, staleNote(report))
			}
			var info mountmgr.MountInfo
			if req.MasterKey != nil {
				var m app.Mounted
				m, err = e.app.Mount(e.ctx, req)
				info = m.MountInfo
				if errors.Is(err, vault.ErrWrongPassword) {
					err = withHint(err, "check the master key against what init printed")
				} else if errors.Is(err, vault.ErrKeyUnverifiable) {
					err = withHint(err, "mount it read-only (without --rw) and check that the files show")
				}
			} else {
				err = e.withPassword(entry, src, func(pw []byte) (app.KeyringChange, error) {
					req.Password = pw
					m, err := e.app.Mount(e.ctx, req)
					info = m.MountInfo
					return m.Keyring, err
				})
			}
			if err != nil {
				return mountHint(err, req.MountPoint)
			}
			if *quiet {
				return nil
			}
			mode := ""
			if info.Reverse {
				mode = ", encrypted view"
			}
			if info.ForceDecode {
				mode += ", read-only for recovery: damaged blocks read as zeros"
			} else if info.ReadOnly {
				mode += ", read-only"
			}
			if info.SharedStorage {
				mode += ", shared storage"
			}
			if info.Idle > 0 {
				mode += fmt.Sprintf(", unmounts after %s idle", info.Idle)
			}
			fmt.Fprintf(e.stdout, "Mounted %s (%s%s) at %s\n", displayName(entry), info.Cipher, mode, info.MountPoint)
			if info.Notice != "" {
				fmt.Fprintf(e.stderr, "note: %s\n", info.Notice)
			}
			return nil
		}
	},
}

// mountOptions is mount's -o: each fstab-style option sets the mount command's own flag (one
// mechanism: "-o ro" is "--ro"), or is passed over when it is for mount(8) or systemd.
type mountOptions struct {
	fs   *flag.FlagSet
	list []string
}

func (o *mountOptions) String() string {
	if o == nil {
		return ""
	}
	return strings.Join(o.list, ",")
}

func (o *mountOptions) Set(s string) error {
	for _, opt := range strings.Split(s, ",") {
		key, val, hasVal := strings.Cut(opt, "=")
		flagName, flagVal := "", "true"
		switch key {
		case "":
			continue
		case "ro", "rw", "noexec", "reverse", "forcedecode", "sharedstorage":
			flagName = key
		case "exec":
			flagName, flagVal = "noexec", "false"
		case "allow_other":
			flagName = "allow-other"
		case "idle", "passfile", "extpass":
			if !hasVal || val == "" {
				return fmt.Errorf("mount option %s needs a value (%s=...)", key, key)
			}
			flagName, flagVal = key, val
		case "default_permissions":
			// The kernel checks permissions itself whenever other users come in
			// (allow_other); without allow_other only the mount's owner enters, and the
			// cipherdir applies the same checks to the daemon running as that owner.
		case "nosuid", "nodev", "suid", "dev":
			// Always nosuid and nodev: mount.fuse3 adds dev,suid to every mount root makes
			// without nodev,nosuid, so those cannot be refused, and are not honoured.
		case "defaults", "auto", "noauto", "user", "nouser", "users", "nofail", "_netdev", "comment":
			// For mount(8) and systemd.
		default:
			if strings.HasPrefix(key, "x-") {
				continue // x-systemd.automount, x-gvfs-show...: for mount(8) and systemd
			}
			return fmt.Errorf("unknown mount option %q", opt)
		}
		if flagName == "" {
			continue
		}
		if hasVal && flagVal == "true" {
			return fmt.Errorf("mount option %s takes no value", key)
		}
		if err := o.fs.Set(flagName, flagVal); err != nil {
			return fmt.Errorf("mount option %s: %w", opt, err)
		}
		o.list = append(o.list, opt)
	}
	return nil
}

// staleNote sums up the daemon's stale mount report on one line.
func staleNote(report []mountmgr.StaleMount) string {
	var cleaned, failed []string
	for _, s := range report {
		what := fmt.Sprintf("%s (vault %s)", s.MountPoint, s.CipherDir)
		if s.Cleaned {
			cleaned = append(cleaned, what)
		} else {
			failed = append(failed, what+": "+s.Error)
		}
	}
	var parts []string
	if len(cleaned) == 1 {
		parts = append(parts, "cleaned up stale mount "+cleaned[0])
	} else if len(cleaned) > 1 {
		parts = append(parts, "cleaned up stale mounts "+strings.Join(cleaned, ", "))
	}
	if len(failed) > 0 {
		parts = append(parts, "could not clean up "+strings.Join(failed, ", ")+` ("vaultui status" lists it)`)
	}
	return "note: the previous mount manager stopped without unmounting; " + strings.Join(parts, "; ")
}

// mountHint adds what to do next to the usual mount failures.
func mountHint(err error, mp string) error {
	switch {
	case errors.Is(err, mountmgr.ErrNested):
		return withHint(err, "mount it at an empty directory outside the cipherdir")
	case errors.Is(err, mountmgr.ErrMountpoint):
		// What to do depends on what is there: mkdir only where nothing is.
		if fi, serr := os.Stat(mp); serr == nil && fi.IsDir() {
			return withHint(err, "move what is in %s elsewhere, or give another MOUNTPOINT (an empty directory)", mp)
		} else if serr == nil {
			return withHint(err, "give an empty directory as MOUNTPOINT (%s is a file)", mp)
		}
		return withHint(err, "create an empty directory for it (mkdir -p %s) or give another MOUNTPOINT", shellWord(mp))
	case errors.Is(err, mountmgr.ErrAlreadyMounted):
		return withHint(err, `"vaultui status" lists the mounts; "vaultui unmount" one first`)
	case errors.Is(err, mountmgr.ErrFuseDevice):
		return withHint(err, "install fuse3 (it provides fusermount3 and /dev/fuse), check that /dev/fuse is readable and writable by you (ls -l /dev/fuse: crw-rw-rw- is usual), and where the distribution has a fuse group, join it (usermod -aG fuse $USER) and log in again")
	case errors.Is(err, mountmgr.ErrDaemon):
		if p, perr := mountmgr.LogPath(); perr == nil {
			return withHint(err, "the daemon's log is %s", p)
		}
	}
	return err
}

// ruleFlag is --exclude (prefix "/" anchors a PATH), --exclude-wildcard ("" takes a pattern as
// it is) or --exclude-from ("from" reads a file of patterns): all three add gitignore lines to
// one list in the order given on the command line (gocryptfs #1000 asks for exactly that order).
type ruleFlag struct {
	lines  *[]string
	prefix string
}

func (f *ruleFlag) String() string { return "" }

func (f *ruleFlag) Set(v string) error {
	switch f.prefix {
	case "from":
		b, err := os.ReadFile(v)
		if err != nil {
			return fmt.Errorf("reading exclusion rules: %w", err)
		}
		*f.lines = append(*f.lines, strings.Split(string(b), "\n")...)
	case "/":
		*f.lines = append(*f.lines, "/"+strings.TrimPrefix(v, "/"))
	default:
		*f.lines = append(*f.lines, v)
	}
	return nil
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) (set bool) {
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

var unmountCommand = &command{
	name:     "unmount",
	anyArgs:  true,
	group:    groupMounts,
	summary:  "Unmount a vault, or every vault with --all",
	args:     "[--lazy] VAULT|MOUNTPOINT | --all",
	operands: []string{"VAULT"},
	help: `Unmounts the vault given by registered name, cipherdir or mount point, and
wipes its keys from the daemon's memory (best effort). A mount in use fails
with "busy", naming the processes that hold it; --lazy detaches it at once
and lets the last user finish ("vaultui status" lists it as detached until
then; the keys are wiped once they have).

examples:
  vaultui unmount work
  vaultui unmount --lazy /mnt/private
  vaultui unmount --all`,
	setup: func(fs *flag.FlagSet) runFunc {
		lazy := fs.Bool("lazy", false, "detach now even if in use")
		all := fs.Bool("all", false, "unmount every vault")
		return func(e *env, args []string) error {
			if *all != (len(args) == 0) || len(args) > 1 {
				return e.usage("expected one VAULT or MOUNTPOINT, or --all")
			}
			if *all {
				return unmountAll(e)
			}
			if err := e.app.Unmount(e.ctx, args[0], *lazy); err != nil {
				switch {
				case errors.Is(err, vault.ErrNotFound):
					return withHint(err, `"vaultui list" lists the vaults, "vaultui status" what is mounted`)
				case errors.Is(err, mountmgr.ErrBusy):
					return withHint(err, "close those files (or leave that directory), or use --lazy")
				case errors.Is(err, mountmgr.ErrNotMounted):
					return withHint(err, `"vaultui status" lists what is mounted`)
				}
				return err
			}
			fmt.Fprintf(e.stdout, "Unmounted %s\n", args[0])
			return nil
		}
	},
}

// unmountAll unmounts everything and says what that was (app.UnmountAll).
func unmountAll(e *env) error {
	res, err := e.app.UnmountAll(e.ctx)
	for _, m := range res.Unmounted {
		fmt.Fprintf(e.stdout, "Unmounted %s from %s\n", cmp.Or(m.Name, m.CipherDir), m.MountPoint)
	}
	if err != nil {
		return err
	}
	if len(res.Unmounted) == 0 && len(res.Others) == 0 {
		fmt.Fprintln(e.stdout, "Nothing was mounted.")
	} else if len(res.Unmounted) == 0 {
		fmt.Fprintln(e.stdout, "Nothing was mounted by this mount manager.")
	}
	fmt.Fprint(e.stderr, othersNote(res.Others))
	return nil
}

// othersShown is how many of other mount managers' mounts othersNote names.
const othersShown = 5

// othersNote says what other mount managers (other runtime directories) keep mounted, which
// unmount --all leaves: one on a line, the latest mounted first (the kernel lists them oldest
// first), othersShown of many and a count of the rest; "" for none.
func othersNote(others []mountmgr.MountInfo) string {
	others = slices.Clone(others)
	slices.Reverse(others)
	what := func(m mountmgr.MountInfo) string { return fmt.Sprintf("%s (vault %s)", m.MountPoint, m.CipherDir) }
	switch len(others) {
	case 0:
		return ""
	case 1:
		return "note: still mounted by another mount manager (another XDG_RUNTIME_DIR): " + what(others[0]) + "\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "note: %d vaults are still mounted by other mount managers (other XDG_RUNTIME_DIRs):\n", len(others))
	for _, m := range others[:min(len(others), othersShown)] {
		b.WriteString("  " + what(m) + "\n")
	}
	if n := len(others) - othersShown; n > 0 {
		fmt.Fprintf(&b, "  and %d more (findmnt -t %s lists them all)\n", n, mountmgr.FSType)
	}
	return b.String()
}

// stringsFlag is a flag that may be given more than once.
type stringsFlag []string

func (s *stringsFlag) String() string     { return strings.Join(*s, ",") }
func (s *stringsFlag) Set(v string) error { *s = append(*s, v); return nil }
