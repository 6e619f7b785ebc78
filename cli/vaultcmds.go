package cli

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vaultui/vaultui/app"
	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/internal/termsafe"
	"github.com/vaultui/vaultui/mountmgr"
	"github.com/vaultui/vaultui/registry"
	"github.com/vaultui/vaultui/vault"
	"github.com/vaultui/vaultui/vault/gocryptfs"
)

// creator is written into gocryptfs.conf's Creator field of new vaults.
const creator = "vaultui"

var initCommand = &command{
	name:     "init",
	group:    groupVaults,
	summary:  "Create a new vault in an empty or new directory",
	args:     "[options] CIPHERDIR",
	operands: []string{"CIPHERDIR"},
	values:   map[string]string{"cipher": "auto|aegis|gcm|xchacha|siv", "format": strings.Join(creatableFormats(), "|"), "name": ""},
	help: `The vault uses the gocryptfs v2 format, or with --format cryptomator
Cryptomator's vault format 8 (SIV_GCM, what the Cryptomator apps create; only
--scryptn applies to it). It is added to the registry under
--name (default: the directory's name without its extension) with the mount point
--mountpoint (default: ~/Vaults/NAME, created empty if missing). CIPHERDIR
is created if missing, with the folders above it.
The password is asked twice on the terminal, or read from --passfile.
The master key is printed once: store it offline, it is the only way back
in if the password is lost or gocryptfs.conf is damaged.

--cipher auto uses what the speed test recommends: AEGIS-256X2 where the
CPU has AES instructions and AEGIS was faster in every round, else
AES-256-GCM, or XChaCha20-Poly1305 without AES instructions. It takes the
test "vaultui speed" or the terminal app remembered for this CPU and build,
or measures (under 3 seconds), and measures the write on the folder the vault
goes in when that file system has not been measured. It prints what the
choice gains and costs: a vault with AEGIS-256X2 opens only in vaultui.

A Cryptomator vault's master key is printed as 128 hex digits (its 64 raw
bytes): Cryptomator's recovery key, the same key as words, is defined by its
app rather than its specification, so vaultui does not write it.

--reverse prepares an existing plaintext folder for reverse mode instead: it
writes only CIPHERDIR/.gocryptfs.reverse.conf (as gocryptfs -init -reverse),
and "vaultui mount" then shows the folder's read-only encrypted view, to back
up with rsync or restic. Reverse mode uses AES-SIV: every nonce is derived
from the file's path so that an unchanged file encrypts to the same bytes,
and only AES-SIV stays secure that way.

examples:
  vaultui init ~/Private.enc
  vaultui init --cipher gcm --name work --passfile pw.txt /data/work.enc
  vaultui init --format cryptomator ~/Dropbox/Vault
  vaultui init --reverse --name docs-backup ~/Documents`,
	setup: func(fs *flag.FlagSet) runFunc {
		cipherName := fs.String("cipher", "auto", "content `CIPHER`: auto, aegis, gcm, xchacha or siv")
		formatName := fs.String("format", vault.DefaultFormat().ID, "vault `FORMAT`: "+strings.Join(creatableFormats(), " or "))
		logN := fs.Int("scryptn", 0, "scrypt cost N = 2^`LOGN`: each step doubles the time to unlock and to guess ("+formatRanges(func(f *vault.Format) vault.Range { return f.ScryptLogN })+")")
		plainNames := fs.Bool("plaintextnames", false, "do not encrypt file names")
		detNames := fs.Bool("deterministic-names", false, "encrypt names without per-directory IVs (same name, same ciphertext everywhere)")
		longNameMax := fs.Int("longnamemax", 0, "store encrypted names longer than `N` bytes as long names ("+formatRanges(func(f *vault.Format) vault.Range { return f.LongNameMax })+")")
		name := fs.String("name", "", "`NAME` in the registry (default: the directory's name without its extension)")
		mountPoint := fs.String("mountpoint", "", "mount point `DIR` (default: ~/Vaults/NAME)")
		src := passSourceFlags(fs, "read the password from the first line of `FILE` (- for standard input)")
		reverse := fs.Bool("reverse", false, "prepare the existing plaintext folder for reverse mode: its encrypted view (AES-SIV) is mounted for backups")
		return func(e *env, args []string) error {
			f, err := vault.FormatByID(*formatName)
			if err != nil {
				return e.usage("--format %q: want %s", *formatName, strings.Join(creatableFormats(), " or "))
			}
			// Every value is checked against the format's table by the options' one check
			// (vault.CreateOptions.Validate, through app.CheckCreate): a 0 is the default.
			opts := vault.CreateOptions{Format: f.ID, ScryptLogN: *logN, PlaintextNames: *plainNames,
				DeterministicNames: *detNames, LongNameMax: *longNameMax, Creator: creator}
			if *reverse {
				if flagSet(fs, "format") && !f.Can.ReverseView {
					return e.usage("--reverse with --format %s: reverse mode is gocryptfs's; a %s vault has none", f.ID, f.Name)
				}
				if flagSet(fs, "cipher") && !strings.EqualFold(*cipherName, "siv") {
					return withHint(e.usage("--reverse with --cipher %s: %v", *cipherName, gocryptfs.ErrReverseCipher),
						"reverse mode derives every nonce from the file's path so that an unchanged file encrypts to the same bytes (what makes a backup incremental); only AES-SIV stays secure that way: leave out --cipher")
				}
				*cipherName, opts.Format = "siv", ""
			}
			// auto picks among the format's ciphers; a format that fixes its cipher takes
			// none (and refuses one given).
			auto := strings.EqualFold(*cipherName, "auto") && len(f.Ciphers) > 1
			if !strings.EqualFold(*cipherName, "auto") {
				c, err := crypto.ParseCipher(*cipherName)
				if err != nil {
					return e.usage("--cipher %q: want auto, aegis, gcm, xchacha or siv", *cipherName)
				}
				opts.Cipher = c
			}
			if opts.LongNameMax == f.LongNameMax.Default {
				opts.LongNameMax = 0 // the plain file system limit: no LongNameMax flag
			}
			return runInit(e, args[0], *name, *mountPoint, src, auto, *reverse, opts)
		}
	},
}

// creatableFormats are the IDs init --format takes: the formats that mount a new vault.
func creatableFormats() []string {
	var ids []string
	for _, f := range vault.Formats() {
		if f.Can.Mount {
			ids = append(ids, f.ID)
		}
	}
	return ids
}

// formatRanges says an option's range and default for each format that has it, from the
// table of formats: "gocryptfs 10 to 28, default 16; cryptomator ...".
func formatRanges(of func(*vault.Format) vault.Range) string {
	var out []string
	for _, f := range vault.Formats() {
		if r := of(f); f.Can.Mount && r != (vault.Range{}) {
			out = append(out, fmt.Sprintf("%s: %d to %d, default %d", f.ID, r.Min, r.Max, r.Default))
		}
	}
	if len(out) == 0 {
		return "fixed by the format"
	}
	return strings.Join(out, "; ")
}

func runInit(e *env, dirArg, name, mountPoint string, src *passSource, auto, reverse bool, opts vault.CreateOptions) error {
	// Check everything that can be checked before asking for a password, so a mistake
	// costs nothing.
	entry, lockNote, err := e.app.CheckCreate(e.ctx, app.NewVault{Name: name, CipherDir: dirArg, MountPoint: mountPoint, Reverse: reverse, Options: opts})
	if errors.Is(err, vault.ErrCreateOptions) {
		return e.usage("%v", err) // options that do not go together: the command line's mistake
	}
	if errors.Is(err, crypto.ErrKDFCostly) {
		return &usageError{msg: "init: --scryptn: " + err.Error(),
			hint: "give --" + allowCostlyFlag + " if you mean it: every unlock of the vault needs that much (the registry records the cost)"}
	}
	if errors.Is(err, os.ErrExist) && reverse {
		return withHint(err, "this folder is already prepared for reverse mode; register it with \"vaultui add --reverse\"")
	}
	if err != nil {
		return createHint(err, dirArg, name == "")
	}

	password, err := e.readPassword(src, "Password for the new vault: ", true, entry.Name, filepath.Base(entry.CipherDir))
	if err != nil {
		return err
	}
	defer crypto.Wipe(password)

	if auto {
		c, err := e.autoCipher(filepath.Dir(entry.CipherDir))
		if err != nil {
			return err
		}
		opts.Cipher = c
	}

	if f, _ := vault.FormatByID(opts.Format); max(opts.ScryptLogN, f.ScryptLogN.Default) >= 20 {
		fmt.Fprintln(e.stderr, "Deriving the key with scrypt; this takes a moment...")
	}
	if lockNote != nil {
		fmt.Fprintf(e.stderr, "note: %v\n", lockNote)
	}
	created, err := e.app.Create(e.ctx, app.NewVault{Name: entry.Name, CipherDir: entry.CipherDir,
		MountPoint: entry.MountPoint, Lock: entry.Lock, Options: opts, Reverse: reverse}, password)
	if err != nil {
		return createHint(err, dirArg, false)
	}
	kind, err := app.KindOf(registry.Entry{CipherDir: entry.CipherDir, Reverse: reverse})
	if err != nil {
		return err
	}
	if reverse {
		fmt.Fprintf(e.stdout, "Prepared %s for reverse mode as %q (%s): %s written; \"vaultui mount %s\" shows its encrypted view.\n\n",
			entry.CipherDir, entry.Name, kind.Cipher, gocryptfs.ReverseConfName, entry.Name)
	} else {
		fmt.Fprintf(e.stdout, "Created %s vault %q in %s (%s).\n%s\n\n", kind.Format.Name, entry.Name, entry.CipherDir, kind.Long(), kind.OpensIn().Sentence())
	}
	printMasterKey(e.stdout, created.MasterKey, kind.Format)
	crypto.Wipe(created.MasterKey)

	if created.MountPointErr != nil {
		fmt.Fprintf(e.stderr, "warning: could not create the mount point: %v\n", created.MountPointErr)
	}
	if created.NotRegistered != nil {
		return withHint(fmt.Errorf("the vault was created but not registered: %w", created.NotRegistered),
			"register it later with: vaultui add --name %s %s", entry.Name, entry.CipherDir)
	}
	fmt.Fprintf(e.stdout, "\nRegistered as %q; mount point %s.\n", entry.Name, entry.MountPoint)
	return nil
}

// createHint adds what to do next to a refused init; defaultName: the name was not given.
func createHint(err error, dir string, defaultName bool) error {
	switch {
	case errors.Is(err, vault.ErrNotEmpty):
		return withHint(err, "a new vault needs an empty or new directory; to register an existing vault use \"vaultui add\"")
	case errors.Is(err, os.ErrNotExist):
		if abs, aerr := filepath.Abs(dir); aerr == nil {
			dir = abs
		}
		return withHint(err, "create it first (mkdir -p %s)", filepath.Dir(dir))
	case errors.Is(err, registry.ErrInvalidName) && defaultName:
		return withHint(err, "choose a name with --name")
	case errors.Is(err, registry.ErrDuplicate):
		return withHint(err, "choose another name with --name, or forget the old entry with \"vaultui forget\"")
	case errors.Is(err, mountmgr.ErrNested):
		return withHint(err, "mount it at an empty directory outside the cipherdir")
	}
	return withHint(err, "nothing was created")
}

// printMasterKey shows a new vault's master key once, with what f says of it (a Cryptomator
// vault's is the raw 64-byte key: its app's recovery key, as words, vaultui does not write).
func printMasterKey(w io.Writer, key []byte, f *vault.Format) {
	if f.KeyNote != "" {
		fmt.Fprintf(w, "Your master key (%s) is:\n", f.KeyNote)
	} else {
		fmt.Fprintln(w, "Your master key is:")
	}
	fmt.Fprintln(w)
	for _, l := range vault.FormatMasterKey(key) {
		fmt.Fprintf(w, "    %s\n", l)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Write it down and keep it offline, away from the vault. It is shown only this once.")
	fmt.Fprintf(w, "If the password is lost or %s is damaged, it is the only way to your data:\n", f.KeyFile)
	fmt.Fprintln(w, "  vaultui passwd --masterkey - VAULT")
}

var infoCommand = &command{
	name:     "info",
	group:    groupVaults,
	summary:  "Show a vault's cipher, feature flags, scrypt cost and creator",
	args:     "[--json] VAULT",
	operands: []string{"VAULT"},
	help: `Reads only gocryptfs.conf (of a Cryptomator vault, vault.cryptomator and its
masterkey file, unverified as gocryptfs.conf is); no password is needed. The last line says
whether the desktop keyring holds the vault's password (vaultui mount
--remember).

examples:
  vaultui info work
  vaultui info --json /data/work.enc`,
	setup: func(fs *flag.FlagSet) runFunc {
		asJSON := fs.Bool("json", false, "print JSON")
		return func(e *env, args []string) error {
			entry, err := e.resolve(args[0])
			if err != nil {
				return err
			}
			info, err := app.Info(entry)
			if err != nil {
				return err
			}
			if *asJSON {
				return writeJSON(e.stdout, infoJSON{Name: entry.Name, MountPoint: entry.MountPoint, Info: info,
					OpensIn: app.OpensIn(info.Cipher).Programs})
			}
			printInfo(e.stdout, entry, info, keyringStatus(e, entry))
			return nil
		}
	},
}

var passwdCommand = &command{
	name:     "passwd",
	group:    groupVaults,
	summary:  "Change a vault's password (with the old password or the master key)",
	args:     "[options] VAULT",
	operands: []string{"VAULT"},
	help: `Only gocryptfs.conf changes (of a Cryptomator vault, its masterkey.cryptomator),
atomically: a crash leaves either the old or the new password working. The data
is not re-encrypted. A Cryptomator vault's master key is the 128 hex digits
init printed; it is always checked against the vault's signed configuration.
Without --passfile/--new-passfile the passwords are asked on the terminal.
--masterkey - asks for the master key on the terminal instead of the old
password; a key given on the command line is visible to other users of this
machine in the process list, so prefer "-". The key is checked on the vault's
files first; when the vault holds too little to check it (no file content,
fewer than 8 names), passwd asks before resealing (--unverified-key: do not
ask, for scripts).
The old file is kept beside the new one with the suffix .bak (as gocryptfs
-passwd keeps one); delete it once the new password works, since the old
password still opens it. The key is sealed at the vault's scrypt cost, raised
to the default for new vaults when it is lower, unless --scryptn says.

examples:
  vaultui passwd work
  vaultui passwd --passfile old.txt --new-passfile new.txt work
  vaultui passwd --masterkey - work`,
	setup: func(fs *flag.FlagSet) runFunc {
		src := passSourceFlags(fs, "read the current password from `FILE` (- for standard input)")
		newPassfile := fs.String("new-passfile", "", "read the new password from `FILE` (- for standard input)")
		masterKey := fs.String("masterkey", "", "use the master key instead of the current password: - asks for it (or reads standard input), FILE reads its first line; `KEY` written out works but warns")
		unverified := fs.Bool("unverified-key", false, "with --masterkey: reseal even if the vault holds too little to verify the key (a wrong key locks the vault for good)")
		logN := fs.Int("scryptn", 0, fmt.Sprintf("scrypt cost N = 2^`LOGN`, LOGN %d to %d (default: the vault's, at least the format's default for new vaults)", crypto.MinScryptLogN, crypto.MaxScryptLogN))
		return func(e *env, args []string) error {
			if flagSet(fs, "scryptn") && (*logN < crypto.MinScryptLogN || *logN > crypto.MaxScryptLogN) {
				return e.usage("--scryptn %d: want %d to %d", *logN, crypto.MinScryptLogN, crypto.MaxScryptLogN)
			}
			if (src.file == "-" || *masterKey == "-") && *newPassfile == "-" {
				return e.usage("the current password (or master key) and --new-passfile cannot both read standard input")
			}
			if *masterKey != "" && src.given() {
				return e.usage("give either --masterkey or --passfile/--extpass, not both")
			}
			entry, err := e.resolve(args[0])
			if err != nil {
				return err
			}
			var oldPassword, key []byte
			if *masterKey != "" {
				if key, err = e.readMasterKey(*masterKey, true); err != nil {
					return err
				}
			} else if oldPassword, err = e.readPassword(src, "Current password: ", false); err != nil {
				return err
			}
			defer crypto.Wipe(oldPassword)
			defer crypto.Wipe(key)
			newPassword, err := e.readPassword(&passSource{file: *newPassfile}, "New password: ", true, entry.Name)
			if err != nil {
				return err
			}
			defer crypto.Wipe(newPassword)
			req := app.ChangePasswordRequest{Vault: app.VaultOf(entry), OldPassword: oldPassword, MasterKey: key, NewPassword: newPassword, ScryptLogN: *logN}
			change, err := e.app.ChangePassword(e.ctx, req)
			if errors.Is(err, vault.ErrKeyUnverifiable) {
				err = e.confirmUnverifiedKey(err, *unverified)
				if err == nil {
					req.Unverified = true
					change, err = e.app.ChangePassword(e.ctx, req)
				}
			}
			if err != nil {
				if key != nil && errors.Is(err, vault.ErrWrongPassword) {
					return withHint(err, "nothing was changed; check the master key against what init printed")
				}
				return err
			}
			e.keyringNote(displayName(entry), change.Keyring)
			fmt.Fprintf(e.stdout, "Password changed for %s.\n", displayName(entry))
			fmt.Fprintf(e.stdout, "The old key file is kept as %s: the old password still opens it, so delete it once the new password works.\n", change.Backup)
			return nil
		}
	},
}

// problemsFound ends fsck with exit code 4 after the problems were listed.
type problemsFound int

func (p problemsFound) Error() string {
	if p == 1 {
		return "fsck found 1 problem"
	}
	return fmt.Sprintf("fsck found %d problems", int(p))
}
func (p problemsFound) ExitCode() int { return exitCorrupt }

var fsckCommand = &command{
	name:     "fsck",
	group:    groupVaults,
	summary:  "Check that every name, symlink and block of a vault decrypts",
	args:     "[--passfile F | --extpass PROGRAM] VAULT",
	operands: []string{"VAULT"},
	help: `Each problem is printed on its own line with the file's path (and the block
range for damaged contents). Sync tools' conflict copies and foreign files
(names not of the vault's format, e.g. desktop.ini) are listed as notes, not
damage. Exit code 0 means no damage, 4 means damage was found (or the
vault's config is damaged). Progress is shown on a terminal.
The vault is only read. A mounted vault is checked by the mount manager,
which holds its key: no password is asked.

examples:
  vaultui fsck work
  vaultui fsck --passfile pw.txt /data/work.enc`,
	setup: func(fs *flag.FlagSet) runFunc {
		src := passSourceFlags(fs, "read the password from the first line of `FILE` (- for standard input)")
		return func(e *env, args []string) error {
			w, entry, err := e.openWalker(args[0], src)
			if err != nil {
				return err
			}
			defer w.Close()
			prog := newProgress(e.stderr, "checking")
			problems, err := w.Fsck(e.ctx, prog.update)
			prog.done()
			for _, p := range problems {
				fmt.Fprintln(e.stdout, app.FindingOf(p))
			}
			if err != nil {
				return err
			}
			damage := 0
			for _, p := range problems {
				if p.Damage() {
					damage++
				}
			}
			if damage > 0 {
				return problemsFound(damage)
			}
			if len(problems) > 0 {
				fmt.Fprintf(e.stdout, "%s: no damage found (%d entries checked); the notes above are conflict copies or foreign files.\n", displayName(entry), prog.total)
				return nil
			}
			fmt.Fprintf(e.stdout, "%s: no problems found (%d entries checked).\n", displayName(entry), prog.total)
			return nil
		}
	},
}

var exportCommand = &command{
	name:     "export",
	group:    groupVaults,
	summary:  "Write a vault's decrypted files to a directory, without FUSE",
	args:     "[--passfile F | --extpass PROGRAM] [--force] VAULT DESTDIR",
	operands: []string{"VAULT", "DESTDIR"},
	help: `Recreates the decrypted tree in DESTDIR (new or empty): files, directories,
symlinks and permission bits; holes in sparse files stay holes. For recovery
and for machines without FUSE. Nothing unauthenticated is ever written: a
damaged block or name stops the export with an error naming it (exit code 4),
leaving what was written before it.
--force exports what a damaged vault still holds: blocks that fail
authentication are written as zeros (never their unauthenticated decryption),
entries whose names do not decrypt are written as "NAME GOCRYPTFS_BAD_NAME",
and each damaged item is listed on standard output with its path, its cipher
path and the blocks concerned; exit code 4 when anything was damaged.
A mounted vault is exported by the mount manager, which holds its key: no
password is asked, and DESTDIR may not lie inside the vault's mount.

examples:
  vaultui export work /mnt/usb/work-copy
  vaultui export --passfile pw.txt /data/work.enc ./plain
  vaultui export --force damaged.enc ./rescued > damage-report.txt`,
	setup: func(fs *flag.FlagSet) runFunc {
		src := passSourceFlags(fs, "read the password from the first line of `FILE` (- for standard input)")
		force := fs.Bool("force", false, "recovery: write damaged blocks as zeros and bad names, list the damage")
		return func(e *env, args []string) error {
			dest, err := filepath.Abs(args[1])
			if err != nil {
				return err
			}
			w, entry, err := e.openWalker(args[0], src)
			if err != nil {
				return err
			}
			defer w.Close()
			prog := newProgress(e.stderr, "exporting")
			err = w.Export(e.ctx, dest, vault.ExportOptions{
				Progress: prog.update,
				Force:    *force,
				Damaged: func(p vault.Problem) {
					prog.done()
					fmt.Fprintln(e.stdout, app.FindingOf(p))
				},
			})
			prog.done()
			if err != nil {
				if !*force && errors.Is(err, vault.ErrCorrupt) {
					return withHint(err, "--force exports what can still be read, with zeros for damaged blocks")
				}
				return err
			}
			fmt.Fprintf(e.stdout, "Exported %s to %s.\n", displayName(entry), dest)
			return nil
		}
	},
}

// openWalker resolves arg and opens the vault for fsck or export (app.OpenWalker): through
// the daemon when it has the vault mounted, else unlocked here with the password of the
// source named, the keyring's or one asked on the terminal (see withPassword).
func (e *env) openWalker(arg string, src *passSource) (*app.Walker, registry.Entry, error) {
	entry, err := e.resolve(arg)
	if err != nil {
		return nil, entry, err
	}
	var w *app.Walker
	err = e.withPassword(entry, src, func(pw []byte) (change app.KeyringChange, err error) {
		w, change, err = e.app.OpenWalker(e.ctx, app.VaultOf(entry), pw)
		return change, err
	})
	if err != nil {
		return nil, entry, err
	}
	return w, entry, nil
}

// displayName names a vault in messages: its registry name, else its path.
func displayName(e registry.Entry) string { return cmp.Or(e.Name, e.CipherDir) }

// statusLine draws one self-overwriting line on a terminal, at most ten times a second
// unless told to at once; elsewhere it draws nothing.
type statusLine struct {
	w     io.Writer
	on    bool
	last  time.Time
	drawn bool
}

func newStatusLine(w io.Writer) statusLine { return statusLine{w: w, on: terminalFile(w) != nil} }

// draw shows line, at once when now (and the first time), else only 100 ms after the last.
func (s *statusLine) draw(line string, now bool) {
	if !s.on || !now && time.Since(s.last) < 100*time.Millisecond {
		return
	}
	s.last = time.Now()
	fmt.Fprint(s.w, "\r\x1b[K"+line)
	s.drawn = true
}

func (s *statusLine) done() {
	if s.drawn {
		fmt.Fprint(s.w, "\r\x1b[K")
	}
}

// progress is the status line of fsck and export; it counts the entries wherever it runs.
type progress struct {
	statusLine
	verb  string
	total int
}

func newProgress(w io.Writer, verb string) *progress {
	return &progress{statusLine: newStatusLine(w), verb: verb}
}

// update draws f, the first report at once (it comes before any work: see
// vault.FsckProgress), later ones at most ten times a second.
func (p *progress) update(f vault.FsckProgress) {
	p.total = f.Total
	p.draw(p.line(f), false)
}

// line is the status line of f: what is counted, then the share of the
// content done in bytes, with the entries and the path beside.
func (p *progress) line(f vault.FsckProgress) string {
	if f.Counting {
		return fmt.Sprintf("%s: counting… %d entries, %s", p.verb, f.Total, formatBytes(float64(f.TotalBytes)))
	}
	path := termsafe.Escape(f.Path)
	if len(path) > 40 {
		path = "..." + path[len(path)-37:]
	}
	return fmt.Sprintf("%s %3.0f%% %s of %s, %d/%d entries %s", p.verb, 100*f.Fraction(),
		formatBytes(float64(f.Bytes)), formatBytes(float64(f.TotalBytes)), f.Done, f.Total, path)
}
